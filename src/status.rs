//! Which files of a worktree are uncommitted or untracked: the path set of
//! `git status --porcelain -z --untracked-files=all --no-renames`, computed in-process.
//!
//! Why not libgit2's `statuses()`: its working-directory iterator costs more than `git status`
//! itself on a 10k-file worktree, and `list` runs this for every session. Here the work is what
//! git's own is, minus what git does beyond answering the question (verifying the index checksum,
//! walking each path from the root, starting a process):
//! - The index file is parsed here ([`read_index`]; versions 2 to 4), without verifying its
//!   checksum (git does not verify it on read either). An index this parser does not know (a
//!   mandatory extension such as a split or sparse index, another hash) is read through libgit2.
//! - Staged: when the index's cache tree (the `TREE` extension git keeps) is valid and names
//!   HEAD's tree, nothing is staged; otherwise libgit2's `diff_tree_to_index` decides (every
//!   entry when HEAD is unborn). Unmerged and intent-to-add paths are always listed.
//! - Unstaged and untracked, in one pass over the directories that hold tracked files, in
//!   parallel: each directory is opened relative to its parent (`O_NOFOLLOW`, so a directory
//!   replaced by a symlink is not followed, as git does not follow it), listed once (`readdir`
//!   gives each name's type without a `stat`), and each tracked file in it is `fstatat`-ed
//!   relative to the directory. The stat data is compared with the entry the way git's
//!   `ie_match_stat` does; a file whose stat differs, or whose entry is racily clean (its mtime is
//!   not older than the index file's), is hashed as a blob and compared with the entry's id.
//! - Names the index does not know pay for an ignore check (libgit2's, which reads `.gitignore`
//!   files, `info/exclude` and `core.excludesFile`); an ignored directory is not entered, an
//!   untracked one is entered and each file in it listed (`-uall`), a nested repository is
//!   listed as `dir/`, as git lists it.
//!
//! Invariants: nothing here writes (not the index, not the object database), and no program named
//! by the repository's configuration runs (no fsmonitor, no filter driver).
//!
//! Known limits, each where git would need information this module does not compute:
//! - Content filters: a file whose raw content differs from its blob is asked again through
//!   libgit2's `status_file` (which applies the built-in CRLF and ident conversions) when
//!   `core.autocrlf` or a `text`/`eol`/`crlf`/`ident` attribute could apply. Filter drivers
//!   (`filter=`, e.g. LFS) are never run, so such a file whose stat changed counts as modified
//!   when its raw content differs from the blob, even if git's clean filter would map it back.
//! - Submodules (gitlinks): modified when their directory is gone or their checked-out HEAD is
//!   not the recorded commit; changes inside a submodule's own worktree are not looked at.
//! - Racy entries: like git (built without `USE_NSEC`, as distributions build it), an entry whose
//!   mtime falls in the same second as the index file's, or later, is checked by content. So right
//!   after a checkout wrote the files and the index within one second, every file is hashed, until
//!   git next rewrites the index (any `git status` does); this module never writes it. The stat
//!   comparison itself also looks at nanoseconds, inode and owner, which only ever sends more
//!   files to the content check than git would (the answer is then the content's, where git would
//!   have trusted a same-second stat).
//! - `core.ignoreCase`, `core.precomposeUnicode` and `core.symlinks = false` change how names
//!   and links compare; such repositories go through libgit2's `statuses()`
//!   ([`dirty_files_libgit2`]) instead, as does a repository whose objects are not SHA-1.

use anyhow::{bail, Context, Result};
use git2::{ErrorCode, ObjectType, Oid, Repository};
use nix::dir::{Dir, Type};
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{fstatat, FileStat, Mode};
use rayon::prelude::*;
use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

const MODE_TYPE: u32 = 0o170000;
const MODE_FILE: u32 = 0o100000;
const MODE_SYMLINK: u32 = 0o120000;
const MODE_GITLINK: u32 = 0o160000;
/// `flags`: assumed unchanged (`git update-index --assume-unchanged`).
const FLAG_VALID: u16 = 0x8000;
const FLAG_EXTENDED: u16 = 0x4000;
const FLAG_STAGE_MASK: u16 = 0x3000;
const FLAG_NAME_MASK: u16 = 0x0fff;
/// Extended flags: `git add -N`.
const FLAG_INTENT_TO_ADD: u16 = 1 << 13;
/// Extended flags: outside the sparse checkout.
const FLAG_SKIP_WORKTREE: u16 = 1 << 14;

/// Repo-relative paths (sorted, `/`-separated) that
/// `git status --porcelain -z --untracked-files=all --no-renames` would list for the worktree at
/// `worktree`: staged, unstaged, deleted, unmerged and untracked-but-not-ignored files (an
/// untracked nested repository as `dir/`).
pub fn dirty_files(worktree: &Path) -> Result<Vec<String>> {
    crate::git::configure_libgit2();
    let repo = Repository::open(worktree)
        .with_context(|| format!("opening the worktree {}", worktree.display()))?;
    let settings = Settings::read(&repo)?;
    if settings.needs_libgit2 {
        return dirty_files_libgit2(&repo, worktree);
    }
    let Some(workdir) = repo.workdir().map(Path::to_path_buf) else {
        bail!("{} has no working directory", worktree.display());
    };
    let index_path = repo.path().join("index");
    // The index file's mtime is read before the index itself: if the index is rewritten in
    // between, the older mtime only makes more entries count as racy (checked by content).
    let index_mtime = std::fs::metadata(&index_path)
        .ok()
        .map(|m| (m.mtime(), m.mtime_nsec()));
    let index = match read_index(&index_path)
        .with_context(|| format!("reading {}", index_path.display()))?
    {
        Some(index) => index,
        None => Index::through_libgit2(&repo)?,
    };

    let mut dirty: HashSet<Vec<u8>> = HashSet::new();
    staged(&repo, &index, &mut dirty)
        .with_context(|| format!("comparing the index of {} with HEAD", worktree.display()))?;

    let order: Vec<usize> = (0..index.entries.len()).collect();
    let tree = DirNode::build(&index.entries, &order, 0);
    let walk = Walk {
        workdir: &workdir,
        entries: &index.entries,
        index_mtime,
        settings: &settings,
        parallel: rayon::current_thread_index().is_none(),
    };
    let root = Dir::open(
        &workdir,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .with_context(|| format!("opening {}", workdir.display()))?;
    let found = walk.visit(Some(root), &[], &tree);

    for f in found {
        match f {
            Found::Dirty(path) => {
                dirty.insert(path);
            }
            Found::Filtered(i) => {
                let path = &index.entries[i].path;
                if filtered_differs(&repo, path, settings.autocrlf)? {
                    dirty.insert(path.clone());
                }
            }
            Found::Untracked { path, is_dir } => {
                untracked(&repo, &workdir, path, is_dir, &mut dirty)?
            }
        }
    }

    let mut out: Vec<String> = dirty
        .into_iter()
        .map(|p| String::from_utf8_lossy(&p).into_owned())
        .collect();
    out.sort();
    Ok(out)
}

/// The configuration that changes how a worktree file is compared with its entry.
struct Settings {
    /// `core.fileMode`: whether the executable bit counts.
    file_mode: bool,
    /// `core.trustCtime`.
    trust_ctime: bool,
    /// `core.checkStat = minimal`: only mtime seconds and size count.
    check_stat_minimal: bool,
    /// `core.autocrlf` is `true` or `input`: a line-ending conversion may apply to any file.
    autocrlf: bool,
    /// Something this module does not model; use libgit2's status instead.
    needs_libgit2: bool,
}

impl Settings {
    fn read(repo: &Repository) -> Result<Settings> {
        let config = repo.config().context("reading the repository's config")?;
        let flag = |key: &str, default: bool| config.get_bool(key).unwrap_or(default);
        let autocrlf = config
            .get_string("core.autocrlf")
            .is_ok_and(|v| v.eq_ignore_ascii_case("input"))
            || flag("core.autocrlf", false);
        let check_stat_minimal = config
            .get_string("core.checkStat")
            .is_ok_and(|v| v.eq_ignore_ascii_case("minimal"));
        let sha1 = config
            .get_string("extensions.objectFormat")
            .map_or(true, |v| v.eq_ignore_ascii_case("sha1"));
        Ok(Settings {
            file_mode: flag("core.fileMode", true),
            trust_ctime: flag("core.trustCtime", true),
            check_stat_minimal,
            autocrlf,
            needs_libgit2: flag("core.ignoreCase", false)
                || flag("core.precomposeUnicode", false)
                || !flag("core.symlinks", true)
                || !sha1,
        })
    }
}

/// One index entry, with the stat data git recorded (32-bit fields, as on disk).
#[derive(Debug, Clone)]
struct Entry {
    path: Vec<u8>,
    ctime: (u32, u32),
    mtime: (u32, u32),
    ino: u32,
    mode: u32,
    uid: u32,
    gid: u32,
    size: u32,
    id: Oid,
    flags: u16,
    flags_extended: u16,
}

impl Entry {
    fn stage(&self) -> u16 {
        (self.flags & FLAG_STAGE_MASK) >> 12
    }
}

struct Index {
    /// Sorted by path, then stage (as git writes them).
    entries: Vec<Entry>,
    /// The cache tree's root: the tree the index would write, when git knows it.
    tree: Option<Oid>,
}

impl Index {
    fn through_libgit2(repo: &Repository) -> Result<Index> {
        let index = repo.index().context("reading the index")?;
        let entries = index
            .iter()
            .map(|e| Entry {
                ctime: (e.ctime.seconds() as u32, e.ctime.nanoseconds()),
                mtime: (e.mtime.seconds() as u32, e.mtime.nanoseconds()),
                ino: e.ino,
                mode: e.mode,
                uid: e.uid,
                gid: e.gid,
                size: e.file_size,
                id: e.id,
                flags: e.flags,
                flags_extended: e.flags_extended,
                path: e.path,
            })
            .collect();
        Ok(Index {
            entries,
            tree: None,
        })
    }
}

/// Checks the index file at `path` before it is handed to libgit2, which trusts the counts in
/// it (see [`read_index`]): an error names the damage. A missing file passes.
pub fn fit_for_libgit2(path: &Path) -> Result<()> {
    read_index(path)
        .map(drop)
        .with_context(|| format!("reading {}", path.display()))
}

/// Parses the index file at `path` (git's index format, versions 2 to 4, SHA-1). `Ok(None)`
/// for an index this parser does not handle (another version, a mandatory extension), which
/// the caller reads through libgit2; a missing file is an empty index.
fn read_index(path: &Path) -> Result<Option<Index>> {
    let data = match std::fs::read(path) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Some(Index {
                entries: Vec::new(),
                tree: None,
            }))
        }
        Err(e) => return Err(e.into()),
    };
    const HASH: usize = 20;
    /// The smallest entry: 62 fixed bytes, then at least a NUL (v4 also a one-byte varint).
    const MIN_ENTRY: usize = 63;
    let mut r = Reader {
        data: &data,
        pos: 0,
    };
    if r.bytes(4)? != b"DIRC" {
        bail!("not an index file");
    }
    let version = r.u32()?;
    if !(2..=4).contains(&version) {
        return Ok(None);
    }
    let count = r.u32()? as usize;
    // The count comes from the file: bound it by the bytes left (every entry takes at least
    // MIN_ENTRY of them) before it sizes an allocation.
    if count > data.len().saturating_sub(r.pos) / MIN_ENTRY {
        bail!("index file truncated (its header counts {count} entries)");
    }
    let mut entries: Vec<Entry> = Vec::with_capacity(count);
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = r.pos;
        let ctime = (r.u32()?, r.u32()?);
        let mtime = (r.u32()?, r.u32()?);
        let _dev = r.u32()?;
        let ino = r.u32()?;
        let mode = r.u32()?;
        let uid = r.u32()?;
        let gid = r.u32()?;
        let size = r.u32()?;
        let id = Oid::from_bytes(r.bytes(HASH)?)?;
        let flags = r.u16()?;
        let flags_extended = if flags & FLAG_EXTENDED != 0 {
            if version < 3 {
                bail!("extended flags in a version 2 index");
            }
            r.u16()?
        } else {
            0
        };
        let path = if version == 4 {
            let strip = r.varint()?;
            if strip > previous.len() {
                bail!("corrupt path compression");
            }
            let suffix = r.until_nul()?;
            let mut p = previous[..previous.len() - strip].to_vec();
            p.extend_from_slice(suffix);
            p
        } else {
            let len = usize::from(flags & FLAG_NAME_MASK);
            let name = if len == usize::from(FLAG_NAME_MASK) {
                r.until_nul()?
            } else {
                let name = r.bytes(len)?;
                r.pos += 1;
                name
            };
            // Entries are NUL-padded to a multiple of eight bytes.
            let fixed = r.pos - start - name.len() - 1;
            r.pos = start + ((fixed + name.len() + 8) & !7);
            name.to_vec()
        };
        if version == 4 {
            previous.clone_from(&path);
        }
        entries.push(Entry {
            path,
            ctime,
            mtime,
            ino,
            mode,
            uid,
            gid,
            size,
            id,
            flags,
            flags_extended,
        });
    }
    let mut tree = None;
    let mut mandatory = false;
    let end = data
        .len()
        .checked_sub(HASH)
        .context("index file too short")?;
    while r.pos + 8 <= end {
        let sig: [u8; 4] = r.bytes(4)?.try_into()?;
        let len = r.u32()? as usize;
        let body = r.bytes(len)?;
        // A mandatory extension (split index, sparse index, ...): libgit2 reads this file.
        mandatory |= !sig[0].is_ascii_uppercase();
        if &sig == b"TREE" {
            // libgit2 reads the cache tree recursively and sizes allocations from its counts
            // (a damaged one exhausts the stack or memory, which nothing can catch): a file
            // whose cache tree does not pass the bounded reader is never handed to libgit2.
            if !crate::staged::cache_tree_is_sound(body) {
                bail!("damaged cache tree in the index");
            }
            tree = cache_tree_root(body);
        }
    }
    if mandatory {
        return Ok(None);
    }
    Ok(Some(Index { entries, tree }))
}

/// The root of a `TREE` extension, if it is valid (git marks an invalidated tree with -1).
fn cache_tree_root(body: &[u8]) -> Option<Oid> {
    let nul = body.iter().position(|&b| b == 0)?;
    if nul != 0 {
        return None;
    }
    let rest = &body[1..];
    let nl = rest.iter().position(|&b| b == b'\n')?;
    let header = std::str::from_utf8(&rest[..nl]).ok()?;
    let count: i64 = header.split(' ').next()?.parse().ok()?;
    if count < 0 {
        return None;
    }
    Oid::from_bytes(rest.get(nl + 1..nl + 21)?).ok()
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        let out = self
            .data
            .get(self.pos..self.pos.checked_add(n).context("index file truncated")?)
            .context("index file truncated")?;
        self.pos += n;
        Ok(out)
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(self.bytes(4)?.try_into()?))
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_be_bytes(self.bytes(2)?.try_into()?))
    }
    fn until_nul(&mut self) -> Result<&'a [u8]> {
        let rest = self.data.get(self.pos..).context("index file truncated")?;
        let n = rest
            .iter()
            .position(|&b| b == 0)
            .context("index file truncated")?;
        self.pos += n + 1;
        Ok(&rest[..n])
    }
    /// git's offset varint (index version 4 path compression).
    fn varint(&mut self) -> Result<usize> {
        let mut c = self.bytes(1)?[0];
        let mut val = usize::from(c & 127);
        while c & 128 != 0 {
            c = self.bytes(1)?[0];
            val = val
                .checked_add(1)
                .and_then(|v| v.checked_mul(128))
                .and_then(|v| v.checked_add(usize::from(c & 127)))
                .context("corrupt varint")?;
        }
        Ok(val)
    }
}

/// Paths whose index entry differs from HEAD's tree (every entry when HEAD is unborn), plus
/// unmerged and intent-to-add paths.
fn staged(repo: &Repository, index: &Index, dirty: &mut HashSet<Vec<u8>>) -> Result<()> {
    for e in &index.entries {
        if e.stage() != 0 || e.flags_extended & FLAG_INTENT_TO_ADD != 0 {
            dirty.insert(e.path.clone());
        }
    }
    let head_tree = match repo.head() {
        Ok(head) => Some(head.peel_to_tree()?),
        Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => None,
        Err(e) => return Err(e.into()),
    };
    let Some(tree) = head_tree else {
        dirty.extend(index.entries.iter().map(|e| e.path.clone()));
        return Ok(());
    };
    if index.tree == Some(tree.id()) {
        return Ok(());
    }
    let git_index = repo.index().context("reading the index")?;
    let mut opts = git2::DiffOptions::new();
    opts.include_typechange(true);
    let diff = repo.diff_tree_to_index(Some(&tree), Some(&git_index), Some(&mut opts))?;
    for delta in diff.deltas() {
        for file in [delta.old_file(), delta.new_file()] {
            if let Some(p) = file.path_bytes() {
                dirty.insert(p.to_vec());
            }
        }
    }
    Ok(())
}

/// The directories of the index as a tree: each holds its files (entry indices, sorted by name)
/// and its subdirectories (sorted by name).
struct DirNode<'a> {
    files: Vec<(&'a [u8], usize)>,
    dirs: Vec<(&'a [u8], DirNode<'a>)>,
}

impl<'a> DirNode<'a> {
    /// `order` holds entry indices whose paths share a prefix of `offset` bytes (this directory's
    /// path with its trailing `/`), in path order, so each subdirectory's entries are contiguous.
    fn build(entries: &'a [Entry], order: &[usize], offset: usize) -> DirNode<'a> {
        let mut node = DirNode {
            files: Vec::new(),
            dirs: Vec::new(),
        };
        let mut i = 0;
        while i < order.len() {
            let path = entries[order[i]].path.as_slice();
            let rest = &path[offset..];
            match rest.iter().position(|&b| b == b'/') {
                None => {
                    node.files.push((rest, order[i]));
                    i += 1;
                }
                Some(slash) => {
                    let prefix = &path[..=offset + slash];
                    let mut j = i + 1;
                    while j < order.len() && entries[order[j]].path.starts_with(prefix) {
                        j += 1;
                    }
                    let child = DirNode::build(entries, &order[i..j], offset + slash + 1);
                    node.dirs.push((&rest[..slash], child));
                    i = j;
                }
            }
        }
        // Path order puts `a-b/` before `a/`; lookups need name order.
        node.dirs.sort_by(|a, b| a.0.cmp(b.0));
        node
    }

    fn all_entries(&self, out: &mut Vec<usize>) {
        out.extend(self.files.iter().map(|f| f.1));
        for (_, d) in &self.dirs {
            d.all_entries(out);
        }
    }
}

/// What the walk found that needs the repository (or is already known dirty).
enum Found {
    Dirty(Vec<u8>),
    /// Raw content differs from the blob, but a CRLF or ident conversion may apply.
    Filtered(usize),
    /// A name the index does not know; repo-relative, without a trailing slash.
    Untracked {
        path: Vec<u8>,
        is_dir: bool,
    },
}

struct Walk<'a> {
    workdir: &'a Path,
    entries: &'a [Entry],
    index_mtime: Option<(i64, i64)>,
    settings: &'a Settings,
    /// Split the walk over the cores: not when called from a rayon task (`list` inspects its
    /// sessions in parallel, so the cores are busy already and splitting only adds scheduling),
    /// but when called alone (`info`, `cleanup`).
    parallel: bool,
}

impl Walk<'_> {
    /// Visits one directory of the index (`dir` is its open handle, `None` when it could not be
    /// opened: every entry below it is then missing) and, in parallel, its subdirectories.
    fn visit(&self, dir: Option<Dir>, path: &[u8], node: &DirNode) -> Vec<Found> {
        let Some(mut dir) = dir else {
            let mut below = Vec::new();
            node.all_entries(&mut below);
            return below
                .into_iter()
                .filter_map(|i| self.check(i, -1))
                .collect();
        };
        let fd = dir.as_raw_fd();
        let mut found: Vec<Found> = Vec::new();
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
                let entry = &self.entries[node.files[k].1];
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
        found.extend(node.files.iter().filter_map(|&(_, i)| self.check(i, fd)));

        let visit_child = |(name, child): &(&[u8], DirNode)| {
            let sub = Dir::openat(
                Some(fd),
                *name,
                OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
                Mode::empty(),
            )
            .ok();
            self.visit(sub, &join(path, name), child)
        };
        let below: Vec<Found> = if self.parallel {
            node.dirs.par_iter().flat_map_iter(visit_child).collect()
        } else {
            node.dirs.iter().flat_map(visit_child).collect()
        };
        found.extend(below);
        found
    }

    /// Compares entry `i` with the file named by its last component in the open directory `fd`
    /// (`-1`: the directory is gone), like git's `ie_match_stat` followed by a content check
    /// when the stat data cannot be trusted. `None` when it is clean or listed elsewhere.
    fn check(&self, i: usize, fd: RawFd) -> Option<Found> {
        let e = &self.entries[i];
        // Unmerged and intent-to-add entries are listed by `staged`; skip-worktree and
        // assume-unchanged entries are not compared with the worktree, as in git.
        if e.stage() != 0
            || e.flags_extended & (FLAG_INTENT_TO_ADD | FLAG_SKIP_WORKTREE) != 0
            || e.flags & FLAG_VALID != 0
        {
            return None;
        }
        let dirty = || Some(Found::Dirty(e.path.clone()));
        let name = e.path.rsplit(|&b| b == b'/').next().unwrap_or(&e.path);
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
                    Type::Directory if !self.gitlink_moved(e) => None,
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
                .and_then(|t| Oid::hash_object(ObjectType::Blob, t.as_bytes()).ok())
        } else {
            Oid::hash_file(ObjectType::Blob, self.workdir.join(bytes_path(&e.path))).ok()
        };
        match id {
            Some(id) if id == e.id => None,
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
    fn gitlink_moved(&self, e: &Entry) -> bool {
        let dir = self.workdir.join(bytes_path(&e.path));
        if !dir.join(".git").exists() {
            return false;
        }
        match Repository::open(&dir).and_then(|r| r.head().map(|h| h.target())) {
            Ok(Some(head)) => head != e.id,
            _ => false,
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

fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut p = Vec::with_capacity(dir.len() + name.len() + 1);
    p.extend_from_slice(dir);
    if !dir.is_empty() {
        p.push(b'/');
    }
    p.extend_from_slice(name);
    p
}

fn bytes_path(p: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(p))
}

/// Raw content differs from the blob; with a possible CRLF or ident conversion, libgit2 (which
/// applies those built-in conversions and runs no filter program) decides.
fn filtered_differs(repo: &Repository, path: &[u8], autocrlf: bool) -> Result<bool> {
    let rel = bytes_path(path);
    let attr_set = |name: &str| {
        repo.get_attr_bytes(rel, name, git2::AttrCheckFlags::FILE_THEN_INDEX)
            .ok()
            .flatten()
            .is_some()
    };
    if !(autocrlf || ["text", "eol", "crlf", "ident"].into_iter().any(attr_set)) {
        return Ok(true);
    }
    let status = repo
        .status_file(rel)
        .with_context(|| format!("reading the status of {}", rel.display()))?;
    Ok(status.intersects(
        git2::Status::WT_MODIFIED | git2::Status::WT_TYPECHANGE | git2::Status::WT_DELETED,
    ))
}

/// Adds an untracked, not ignored name (or, for a directory, the files in it) to `dirty`.
fn untracked(
    repo: &Repository,
    workdir: &Path,
    mut path: Vec<u8>,
    is_dir: bool,
    dirty: &mut HashSet<Vec<u8>>,
) -> Result<()> {
    if !is_dir {
        if !ignored(repo, &path)? {
            dirty.insert(path);
        }
        return Ok(());
    }
    path.push(b'/');
    if ignored(repo, &path)? {
        return Ok(());
    }
    let abs = workdir.join(bytes_path(&path));
    if is_nested_repository(&abs) {
        dirty.insert(path);
        return Ok(());
    }
    path.pop();
    let Ok(read) = std::fs::read_dir(&abs) else {
        return Ok(());
    };
    for entry in read.flatten() {
        let name = entry.file_name();
        if name.as_bytes() == b".git" {
            continue;
        }
        let Ok(ft) = entry.file_type() else { continue };
        if ft.is_dir() || ft.is_file() || ft.is_symlink() {
            untracked(
                repo,
                workdir,
                join(&path, name.as_bytes()),
                ft.is_dir(),
                dirty,
            )?;
        }
    }
    Ok(())
}

fn ignored(repo: &Repository, path: &[u8]) -> Result<bool> {
    repo.is_path_ignored(bytes_path(path)).with_context(|| {
        format!(
            "checking whether {} is ignored",
            String::from_utf8_lossy(path)
        )
    })
}

/// A directory git lists as one untracked entry instead of entering it: it holds a `.git`
/// directory with a `HEAD`, or a `.git` file pointing elsewhere.
fn is_nested_repository(dir: &Path) -> bool {
    let dotgit = dir.join(".git");
    match std::fs::symlink_metadata(&dotgit) {
        Ok(m) if m.is_dir() => dotgit.join("HEAD").exists(),
        Ok(m) if m.is_file() => std::fs::read(&dotgit).is_ok_and(|t| t.starts_with(b"gitdir:")),
        _ => false,
    }
}

/// libgit2's own status, for configurations this module does not model (see the module doc).
pub fn dirty_files_libgit2(repo: &Repository, worktree: &Path) -> Result<Vec<String>> {
    let mut opts = git2::StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(false)
        .renames_head_to_index(false);
    let statuses = repo
        .statuses(Some(&mut opts))
        .with_context(|| format!("reading the status of {}", worktree.display()))?;
    let mut out: Vec<String> = statuses
        .iter()
        .filter(|s| !s.status().is_ignored())
        .filter_map(|s| s.path().map(str::to_string))
        .collect();
    out.sort();
    out.dedup();
    Ok(out)
}
