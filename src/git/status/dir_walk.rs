//! The walk of a worktree: unstaged changes and untracked names, in one pass over the
//! directories that hold tracked files (see [`super`] for how it matches git).

use super::cache::Cache;
use super::Settings;
use crate::git;
use crate::git::index::entries::{
    Entry, FLAG_INTENT_TO_ADD, FLAG_SKIP_WORKTREE, FLAG_VALID, MODE_FILE, MODE_GITLINK,
    MODE_SYMLINK, MODE_TYPE,
};
use crate::git::index::{Index, MAX_DIR_DEPTH};
use nix::dir::{Dir, Type};
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{fstatat, FileStat, Mode};
use rayon::prelude::*;
use std::ffi::OsStr;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The directories of the index as a tree: each holds its files (entry indices, sorted by name)
/// and its subdirectories (sorted by name).
pub(super) struct DirNode<'a> {
    files: Vec<(&'a [u8], usize)>,
    dirs: Vec<(&'a [u8], DirNode<'a>)>,
}

impl<'a> DirNode<'a> {
    /// `order` holds entry indices whose paths share a prefix of `offset` bytes (this directory's
    /// path with its trailing `/`), in path order, so each subdirectory's entries are contiguous.
    /// `None` when a path nests deeper than [`MAX_DIR_DEPTH`] directories below this one (the
    /// walk recurses once per level).
    pub fn build(
        index: &'a Index,
        order: &[usize],
        offset: usize,
        depth: usize,
    ) -> Option<DirNode<'a>> {
        if depth > MAX_DIR_DEPTH {
            return None;
        }
        let mut node = DirNode {
            files: Vec::new(),
            dirs: Vec::new(),
        };
        let mut i = 0;
        while i < order.len() {
            let path = index.path(order[i]);
            let rest = &path[offset..];
            match rest.iter().position(|&b| b == b'/') {
                None => {
                    node.files.push((rest, order[i]));
                    i += 1;
                }
                Some(slash) => {
                    let prefix = &path[..=offset + slash];
                    let mut j = i + 1;
                    while j < order.len() && index.path(order[j]).starts_with(prefix) {
                        j += 1;
                    }
                    let child = DirNode::build(index, &order[i..j], offset + slash + 1, depth + 1)?;
                    node.dirs.push((&rest[..slash], child));
                    i = j;
                }
            }
        }
        // Path order puts `a-b/` before `a/`; lookups need name order.
        node.dirs.sort_by(|a, b| a.0.cmp(b.0));
        Some(node)
    }

    /// Whether the index has a file named `name` in this directory.
    pub fn has_file(&self, name: &[u8]) -> bool {
        self.files.binary_search_by(|f| f.0.cmp(name)).is_ok()
    }

    /// Whether the index has files below a subdirectory `name` of this directory.
    pub fn has_dir(&self, name: &[u8]) -> bool {
        self.dirs.binary_search_by(|d| d.0.cmp(name)).is_ok()
    }

    fn all_entries(&self, out: &mut Vec<usize>) {
        out.extend(self.files.iter().map(|f| f.1));
        for (_, d) in &self.dirs {
            d.all_entries(out);
        }
    }
}

/// An open directory of the worktree: a descriptor for `fstatat` and `openat` relative to it,
/// made a directory stream (`fdopendir`) only when it is read. glibc's `fdopendir` costs an
/// `fstat` and two `fcntl` calls, needless for every directory the untracked cache vouches for
/// (10k directories, 30k system calls, in a `list` of 100 sessions of 10k files).
pub(super) enum OpenDir {
    /// Not read (yet): the descriptor, closed on drop.
    Fd(DirFd),
    /// Read: the stream owns the descriptor.
    Stream(Dir),
}

/// A directory descriptor this walk owns, closed when dropped.
pub(super) struct DirFd(RawFd);

impl Drop for DirFd {
    fn drop(&mut self) {
        let _ = nix::unistd::close(self.0);
    }
}

impl OpenDir {
    /// Opens `name` relative to `parent` (`None`: the current directory) with `flags`.
    pub fn openat<P: ?Sized + nix::NixPath>(
        parent: Option<RawFd>,
        name: &P,
        flags: OFlag,
    ) -> nix::Result<OpenDir> {
        nix::fcntl::openat(parent, name, flags, Mode::empty()).map(|fd| OpenDir::Fd(DirFd(fd)))
    }

    fn fd(&self) -> RawFd {
        match self {
            OpenDir::Fd(fd) => fd.0,
            OpenDir::Stream(dir) => dir.as_raw_fd(),
        }
    }

    /// The directory as a stream to read; `None` when `fdopendir` fails (the descriptor is then
    /// closed, as when the directory could not be opened).
    fn stream(self) -> Option<Dir> {
        match self {
            OpenDir::Stream(dir) => Some(dir),
            OpenDir::Fd(fd) => {
                let raw = fd.0;
                // The stream takes the descriptor over (and closes it if it fails).
                std::mem::forget(fd);
                Dir::from_fd(raw).ok()
            }
        }
    }
}

/// What the walk found that needs the repository (or is already known dirty).
pub(super) enum Found {
    Dirty(Vec<u8>),
    /// Raw content differs from the blob, but a CRLF or ident conversion may apply.
    Filtered(usize),
    /// A name the index does not know; repo-relative, without a trailing slash.
    Untracked {
        path: Vec<u8>,
        is_dir: bool,
    },
    /// Untracked and not ignored, as the untracked cache recorded it (a nested repository with
    /// its trailing slash): listed as it is, as git lists it.
    Listed(Vec<u8>),
}

pub(super) struct Walk<'a> {
    pub workdir: &'a Path,
    pub index: &'a Index,
    pub index_mtime: Option<(i64, i64)>,
    pub settings: &'a Settings,
    /// Split the walk over the cores: not when called from a rayon task (`list` inspects its
    /// sessions in parallel, so the cores are busy already and splitting only adds scheduling),
    /// but when called alone (`info`, `cleanup`).
    pub parallel: bool,
    /// The index's untracked cache, when this walk may use it where git would ([`super::cache`]).
    pub cache: Option<&'a Cache>,
}

impl Walk<'_> {
    /// Visits one directory of the index (`dir` is its open handle, `None` when it could not be
    /// opened: every entry below it is then missing) and, in parallel, its subdirectories.
    /// `rec` is the untracked cache's record of it, when the walk may use one.
    pub fn visit(
        &self,
        dir: Option<OpenDir>,
        path: &[u8],
        node: &DirNode,
        rec: Option<usize>,
    ) -> Vec<Found> {
        let missing = || {
            let mut below = Vec::new();
            node.all_entries(&mut below);
            below
                .into_iter()
                .filter_map(|i| self.check(i, -1))
                .collect()
        };
        let Some(dir) = dir else {
            return missing();
        };
        let fd = dir.fd();
        let mut found: Vec<Found> = Vec::new();
        let cached = self.cache.zip(rec).map(|(cache, rec)| {
            let gitignore = node
                .files
                .binary_search_by(|f| f.0.cmp(b".gitignore"))
                .ok()
                .map(|k| node.files[k].1)
                .filter(|&i| self.index.entries[i].stage() == 0);
            (cache, rec, cache.judge(self, rec, fd, path, gitignore))
        });
        // Kept open until its files and subdirectories are done: they are reached through it.
        let _dir = match &cached {
            Some((cache, rec, judged)) if judged.use_names => {
                cache.names(self, *rec, fd, path, Some(node), &mut found);
                dir
            }
            _ => {
                let Some(mut stream) = dir.stream() else {
                    return missing();
                };
                self.read(&mut stream, path, node, &mut found);
                OpenDir::Stream(stream)
            }
        };
        found.extend(node.files.iter().filter_map(|&(_, i)| self.check(i, fd)));

        let visit_child = |(name, child): &(&[u8], DirNode)| {
            let sub = OpenDir::openat(
                Some(fd),
                *name,
                OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            )
            .ok();
            let rec = cached
                .as_ref()
                .filter(|(_, _, judged)| judged.ignores_ok)
                .and_then(|(cache, rec, _)| cache.child(*rec, name));
            self.visit(sub, &join(path, name), child, rec)
        };
        let below: Vec<Found> = if self.parallel {
            node.dirs.par_iter().flat_map_iter(visit_child).collect()
        } else {
            node.dirs.iter().flat_map(visit_child).collect()
        };
        found.extend(below);
        found
    }

    /// Reads the directory `dir` for the names the index does not know.
    fn read(&self, dir: &mut Dir, path: &[u8], node: &DirNode, found: &mut Vec<Found>) {
        let fd = dir.as_raw_fd();
        // Names are looked up in the index's (sorted) lists as `readdir` returns them; only the
        // unknown ones are copied.
        for entry in dir.iter().flatten() {
            let name = entry.file_name().to_bytes();
            if matches!(name, b"." | b".." | b".git") {
                continue;
            }
            let kind = match entry.file_type() {
                Some(k) => k,
                None => match fstatat(Some(fd), name, AtFlags::AT_SYMLINK_NOFOLLOW) {
                    Ok(st) => type_of(st.st_mode),
                    Err(_) => continue,
                },
            };
            if !matches!(kind, Type::File | Type::Symlink | Type::Directory) {
                continue;
            }
            let is_dir = kind == Type::Directory;
            if let Ok(k) = node.files.binary_search_by(|f| f.0.cmp(name)) {
                let entry = &self.index.entries[node.files[k].1];
                // A directory where the index has a file (not a submodule) is untracked.
                if !(is_dir && entry.mode & MODE_TYPE != MODE_GITLINK) {
                    continue;
                }
            } else if is_dir && node.dirs.binary_search_by(|d| d.0.cmp(name)).is_ok() {
                continue;
            }
            found.push(Found::Untracked {
                path: join(path, name),
                is_dir,
            });
        }
    }

    /// Compares entry `i` with the file named by its last component in the open directory `fd`
    /// (`-1`: the directory is gone), like git's `ie_match_stat` followed by a content check
    /// when the stat data cannot be trusted. `None` when it is clean or listed elsewhere.
    pub fn check(&self, i: usize, fd: RawFd) -> Option<Found> {
        let e = &self.index.entries[i];
        let path = self.index.path(i);
        // Unmerged and intent-to-add entries are listed by `staged`; skip-worktree and
        // assume-unchanged entries are not compared with the worktree, as in git.
        if e.stage() != 0
            || e.flags_extended & (FLAG_INTENT_TO_ADD | FLAG_SKIP_WORKTREE) != 0
            || e.flags & FLAG_VALID != 0
        {
            return None;
        }
        let dirty = || Some(Found::Dirty(path.to_vec()));
        let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
        let st = if fd < 0 {
            return dirty();
        } else {
            match fstatat(Some(fd), name, AtFlags::AT_SYMLINK_NOFOLLOW) {
                Ok(st) => st,
                Err(_) => return dirty(),
            }
        };
        let kind = type_of(st.st_mode);
        match e.mode & MODE_TYPE {
            MODE_GITLINK => {
                return match kind {
                    Type::Directory if !self.gitlink_moved(e, path) => None,
                    _ => dirty(),
                };
            }
            MODE_SYMLINK if kind != Type::Symlink => return dirty(),
            MODE_FILE if kind != Type::File => return dirty(),
            MODE_FILE if self.settings.file_mode && (e.mode ^ st.st_mode) & 0o100 != 0 => {
                return dirty()
            }
            MODE_SYMLINK | MODE_FILE => {}
            _ => return dirty(),
        }
        if self.stat_matches(e, &st) && !self.is_racy(e) {
            return None;
        }
        let id = if kind == Type::Symlink {
            nix::fcntl::readlinkat(Some(fd), name)
                .ok()
                .and_then(|t| git::hash_blob(t.as_bytes()))
        } else {
            git::hash_blob_file(&self.workdir.join(bytes_path(path)))
        };
        match id {
            Some(id) if id.as_bytes() == e.oid => None,
            Some(_) if kind == Type::File => Some(Found::Filtered(i)),
            _ => dirty(),
        }
    }

    /// The stat data the index recorded still describes the file (git keeps 32-bit fields).
    fn stat_matches(&self, e: &Entry, st: &FileStat) -> bool {
        if e.size != st.st_size as u32 || e.mtime.0 != st.st_mtime as u32 {
            return false;
        }
        if self.settings.check_stat_minimal {
            return true;
        }
        let ctime_ok =
            !self.settings.trust_ctime || e.ctime == (st.st_ctime as u32, st.st_ctime_nsec as u32);
        e.mtime.1 == st.st_mtime_nsec as u32
            && ctime_ok
            && e.ino == st.st_ino as u32
            && e.uid == st.st_uid
            && e.gid == st.st_gid
    }

    /// The file was last modified in the same second the index was written, or later, so a
    /// change right after git recorded its stat might not show in it: only the content can tell.
    /// Seconds, as git compares them (see the module doc).
    fn is_racy(&self, e: &Entry) -> bool {
        self.index_mtime
            .is_none_or(|(sec, _)| i64::from(e.mtime.0) >= sec)
    }

    /// A submodule's checked-out commit differs from the one its gitlink records. A directory
    /// that is not (yet) a repository, or has no HEAD, counts as unchanged, as in git.
    fn gitlink_moved(&self, e: &Entry, path: &[u8]) -> bool {
        let dir = self.workdir.join(bytes_path(path));
        if !dir.join(".git").exists() {
            return false;
        }
        match git::head_at(&dir) {
            Some(head) => head.as_bytes() != e.oid,
            None => false,
        }
    }
}

fn type_of(mode: u32) -> Type {
    match mode & MODE_TYPE {
        0o040000 => Type::Directory,
        MODE_FILE => Type::File,
        MODE_SYMLINK => Type::Symlink,
        0o010000 => Type::Fifo,
        0o140000 => Type::Socket,
        0o020000 => Type::CharacterDevice,
        _ => Type::BlockDevice,
    }
}

pub(super) fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(dir.len() + name.len() + 1);
    p.extend_from_slice(dir);
    if !dir.is_empty() {
        p.push(b'/');
    }
    p.extend_from_slice(name);
    p
}

pub(super) fn bytes_path(p: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(p))
}
