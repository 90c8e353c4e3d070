//! The index's untracked cache (`UNTR`), honoured exactly where `git status
//! --untracked-files=all` would honour it, so `list` skips only the work git itself skips.
//!
//! What git checks before it uses the cache at all (dir.c, `validate_untracked_cache`), each
//! checked here the same way, else the walk reads every directory:
//! - `GIT_DISABLE_UNTRACKED_CACHE` is not set, `core.untrackedCache` is not false;
//! - the first ident string is `Location <worktree>, system <uname -s>` for this worktree;
//! - the cache serves the run's flags: 0 is `--untracked-files=all` (git records that only when
//!   `status.showUntrackedFiles=all`; otherwise it records the "normal" mode and bypasses the
//!   cache for an `-uall` run);
//! - the per-directory ignore file is `.gitignore`;
//! - `info/exclude` and `core.excludesFile` have the ids recorded (git's id of such a file is
//!   the blob id of its content with a newline appended, or the empty blob's for an empty file).
//!
//! Then, per directory ([`Cache::judge`], git's `valid_cached_dir` and `prep_exclude`): its
//! record is used instead of reading the directory when it is valid, its stat data matches the
//! directory's (git's `match_stat_data`) and is not racy (its mtime is older than the index
//! file's second), it was not recorded in check-only mode, and its `.gitignore` has the id
//! recorded (or, when the record is valid and noted none, git does not look). A `.gitignore`
//! whose id differs makes the directory and everything below it read, as git invalidates them.
//! A tracked, unmodified `.gitignore` (no content conversion) has its index entry's id, any
//! other the id of its content with a newline appended (git's `add_patterns`).
//!
//! Where git would use a record and this module can tell less than git (a directory the cache
//! has no record for, a cached untracked directory whose record is not valid), it reads the
//! directory: that answer is the full walk's, never a guess. git's fsmonitor is never asked
//! (see the module doc of [`super`]).

use super::dir_walk::{bytes_path, join, DirNode, Found, Walk};
use super::Settings;
use crate::git::index::entries::{FLAG_INTENT_TO_ADD, FLAG_SKIP_WORKTREE, MODE_DIR, MODE_TYPE};
use crate::git::index::untracked_cache::{StatData, UntrackedCache};
use crate::git::index::{Index, OID_LEN};
use crate::git::Checkout;
use nix::dir::Dir;
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{fstat, fstatat, FileStat, Mode};
use std::collections::HashSet;
use std::io::Read;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

type Id = [u8; OID_LEN];

/// The index's untracked cache, checked usable for this worktree.
pub(super) struct Cache {
    uc: UntrackedCache,
    /// Index entries of `.gitignore` files a content conversion may apply to: git hashes those
    /// instead of taking the entry's id.
    converting: HashSet<usize>,
}

/// What a directory's record is worth.
pub(super) struct Judged {
    /// Its untracked names can stand in for reading it.
    pub use_names: bool,
    /// Its ignore file is as recorded, so its subdirectories' records may be used.
    pub ignores_ok: bool,
}

impl Cache {
    /// The cache of `index`, when git's `status --untracked-files=all` in the worktree at
    /// `workdir` would use it.
    pub fn usable(
        repo: &Checkout,
        workdir: &Path,
        index: &Index,
        settings: &Settings,
    ) -> Option<Cache> {
        let body = index.untracked_cache.as_deref()?;
        if std::env::var("GIT_DISABLE_UNTRACKED_CACHE").is_ok_and(|v| !is_false(&v)) {
            return None;
        }
        let config = repo.config().ok()?;
        if config.get_bool("core.untrackedCache") == Some(false) {
            return None;
        }
        let uc = UntrackedCache::parse(body).ok()?;
        let workdir = std::fs::canonicalize(workdir).ok()?;
        let ident = format!("Location {}, system {}", workdir.display(), system_name()?);
        if uc.dirs.is_empty()
            || uc.dir_flags != 0
            || uc.exclude_per_dir != b".gitignore"
            || uc.ident != ident.as_bytes()
        {
            return None;
        }
        let info_exclude = repo.commondir().join("info/exclude");
        if uc.info_exclude != global_id(&info_exclude)? {
            return None;
        }
        let excludes_file = match config.get_path("core.excludesFile") {
            Some(p) => Some(workdir.join(p)),
            None => default_excludes_file(),
        };
        let excludes_id = match excludes_file {
            Some(p) => global_id(&p)?,
            None => None,
        };
        if uc.excludes_file != excludes_id {
            return None;
        }
        let converting = (0..index.entries.len())
            .filter(|&i| {
                let path = index.path(i);
                path.rsplit(|&b| b == b'/').next() == Some(b".gitignore")
                    && (settings.autocrlf || may_convert(repo, path))
            })
            .collect();
        Some(Cache { uc, converting })
    }

    /// The root directory's record.
    pub fn root(&self) -> usize {
        0
    }

    /// The record of subdirectory `name` of the directory recorded at `dir`.
    pub fn child(&self, dir: usize, name: &[u8]) -> Option<usize> {
        self.uc.child(dir, name)
    }

    /// Judges record `rec` against the open directory `fd` (repo-relative `path`), whose
    /// tracked `.gitignore`, if any, is index entry `gitignore`.
    pub fn judge(
        &self,
        walk: &Walk,
        rec: usize,
        fd: RawFd,
        path: &[u8],
        gitignore: Option<usize>,
    ) -> Judged {
        let d = &self.uc.dirs[rec];
        let stat_ok = !d.check_only
            && d.stat.is_some_and(|sd| {
                fstat(fd).is_ok_and(|st| stat_matches(&sd, &st, walk.settings))
                    && walk
                        .index_mtime
                        .is_some_and(|(sec, _)| i64::from(sd.mtime.0) < sec)
            });
        let ignores_ok = (stat_ok && d.exclude_oid.is_none())
            || self.gitignore_id(walk, fd, path, gitignore) == Some(d.exclude_oid);
        Judged {
            use_names: stat_ok && ignores_ok,
            ignores_ok,
        }
    }

    /// What a directory judged usable holds that is untracked: its recorded names (less those
    /// the index now has, as git's `dir_add_name` drops them), and, through their own records,
    /// its recorded subdirectories the index has nothing in (those it has, `node`'s, are walked
    /// by the caller). `node` is `None` for a directory with nothing tracked below.
    pub fn names(
        &self,
        walk: &Walk,
        rec: usize,
        fd: RawFd,
        path: &[u8],
        node: Option<&DirNode>,
        found: &mut Vec<Found>,
    ) {
        let d = &self.uc.dirs[rec];
        for name in &d.untracked {
            if !node.is_some_and(|n| n.has_file(name)) {
                found.push(Found::Listed(join(path, name)));
            }
        }
        for &sub in &d.dirs {
            let name = self.uc.dirs[sub].name.as_slice();
            if !node.is_some_and(|n| n.has_dir(name)) {
                self.untracked_dir(walk, sub, fd, &join(path, name), name, found);
            }
        }
    }

    /// A recorded subdirectory with nothing tracked in it: its record's names when it is still
    /// valid, else the full walk's answer for it.
    fn untracked_dir(
        &self,
        walk: &Walk,
        rec: usize,
        parent: RawFd,
        path: &[u8],
        name: &[u8],
        found: &mut Vec<Found>,
    ) {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let Ok(dir) = Dir::openat(Some(parent), name, flags, Mode::empty()) else {
            // Gone: nothing (git's `lstat` fails too). Replaced by something else: read it.
            if let Ok(st) = fstatat(Some(parent), name, AtFlags::AT_SYMLINK_NOFOLLOW) {
                let is_dir = st.st_mode & MODE_TYPE == MODE_DIR;
                found.push(Found::Untracked {
                    path: path.to_vec(),
                    is_dir,
                });
            }
            return;
        };
        let fd = dir.as_raw_fd();
        if !self.judge(walk, rec, fd, path, None).use_names {
            found.push(Found::Untracked {
                path: path.to_vec(),
                is_dir: true,
            });
            return;
        }
        self.names(walk, rec, fd, path, None, found);
    }

    /// The id git computes for the `.gitignore` of directory `path` (open as `fd`); `None`
    /// inside: it has none, or git could not read it.
    fn gitignore_id(
        &self,
        walk: &Walk,
        fd: RawFd,
        path: &[u8],
        tracked: Option<usize>,
    ) -> Option<Option<Id>> {
        let entry = tracked.map(|i| (i, &walk.index.entries[i]));
        let file = walk.workdir.join(bytes_path(path)).join(".gitignore");
        let Ok(mut file) = std::fs::File::options()
            .read(true)
            .custom_flags(nix::libc::O_NOFOLLOW)
            .open(file)
        else {
            // git reads a `.gitignore` outside the sparse checkout from the index.
            let skipped = entry.filter(|(_, e)| e.flags_extended & FLAG_SKIP_WORKTREE != 0);
            return Some(skipped.map(|(_, e)| e.oid));
        };
        let mut content = Vec::new();
        if file.read_to_end(&mut content).is_err() {
            return Some(None);
        }
        if content.is_empty() {
            return Some(Some(blob_id(b"")?));
        }
        if let Some((i, e)) = entry {
            let clean = e.flags_extended & FLAG_INTENT_TO_ADD == 0 && walk.check(i, fd).is_none();
            if clean && !self.converting.contains(&i) {
                return Some(Some(e.oid));
            }
        }
        content.push(b'\n');
        Some(Some(blob_id(&content)?))
    }
}

/// git's `match_stat_data` for a directory record, as git is built by distributions (without
/// `USE_NSEC`: nanoseconds are recorded but not compared; see the module doc of [`super`]). A
/// change within the second of the recorded mtime is caught by the racy check instead (a record
/// whose mtime is not older than the index file's second is never used).
fn stat_matches(sd: &StatData, st: &FileStat, settings: &Settings) -> bool {
    let check_stat = !settings.check_stat_minimal;
    let mut same = sd.mtime.0 == st.st_mtime as u32 && sd.size == st.st_size as u32;
    if settings.trust_ctime && check_stat {
        same &= sd.ctime.0 == st.st_ctime as u32;
    }
    if check_stat {
        same &= sd.uid == st.st_uid && sd.gid == st.st_gid && sd.ino == st.st_ino as u32;
    }
    same
}

/// The id git records for `info/exclude` or `core.excludesFile` (`None` inside: no readable
/// file); the outer `None` when git would fail on it.
fn global_id(path: &Path) -> Option<Option<Id>> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(None),
        // Unreadable: git warns and leaves it out; here that is too unusual to model.
        Err(_) => return None,
    };
    if !meta.is_file() {
        return None;
    }
    let mut content = std::fs::read(path).ok()?;
    if !content.is_empty() {
        content.push(b'\n');
    }
    Some(Some(blob_id(&content)?))
}

/// git's default `core.excludesFile`: `$XDG_CONFIG_HOME/git/ignore`, else
/// `$HOME/.config/git/ignore`.
fn default_excludes_file() -> Option<PathBuf> {
    match std::env::var_os("XDG_CONFIG_HOME") {
        Some(x) if !x.is_empty() => Some(PathBuf::from(x).join("git/ignore")),
        _ => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config/git/ignore")),
    }
}

/// A content conversion (line endings, ident, a filter) may apply to `path`.
fn may_convert(repo: &Checkout, path: &[u8]) -> bool {
    ["text", "eol", "crlf", "ident", "filter"]
        .into_iter()
        .any(|name| repo.has_attr(bytes_path(path), name))
}

fn blob_id(content: &[u8]) -> Option<Id> {
    crate::git::hash_blob(content)?.as_bytes().try_into().ok()
}

/// What git's boolean parsing takes as false.
fn is_false(v: &str) -> bool {
    v.is_empty()
        || ["false", "no", "off", "0"]
            .iter()
            .any(|f| v.eq_ignore_ascii_case(f))
}

/// `uname -s`, which git puts in the cache's ident.
fn system_name() -> Option<String> {
    let uts = nix::sys::utsname::uname().ok()?;
    uts.sysname().to_str().map(str::to_string)
}
