//! Which files of a worktree are uncommitted or untracked: the path set of
//! `git status --porcelain -z --untracked-files=all --no-renames`, computed in-process.
//!
//! Why not libgit2's `statuses()`: its working-directory iterator costs more than `git status`
//! itself on a 10k-file worktree, and `list` runs this for every session. Here the work is what
//! git's own is, minus what git does beyond answering the question (verifying the index checksum,
//! walking each path from the root, starting a process):
//! - The index file is decoded by [`crate::git::index`] (versions 2 to 4), without verifying its
//!   checksum (git does not verify it on read either). An index that decoder leaves aside (a
//!   mandatory extension such as a split or sparse index, another hash) is read through
//!   libgit2.
//! - Staged: the guard's routes ([`crate::git::staged`]) on the same file: when the index's cache
//!   tree (the `TREE` extension git keeps) names the whole index's tree, HEAD's tree and it are
//!   compared by id (nothing to do when they are the same); otherwise one pass over the entries
//!   hops over every directory the cache tree vouches for. Unmerged and intent-to-add paths are
//!   always listed.
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
//! - Skipping only what git skips ([`Untracked::AsGitStatus`], `list` only): where the index
//!   holds git's untracked cache (`UNTR`, `core.untrackedCache`) recorded for `-uall` and git
//!   would use it, a directory it still vouches for is not read; its recorded untracked names
//!   are taken instead (`cache.rs` has git's rules). Tracked files are still compared one by one
//!   (git's cache holds no stat data of them). git's other skip, the built-in fsmonitor daemon
//!   (`core.fsmonitor=true`), is not asked: there is no daemon on Linux (`git fsmonitor--daemon`
//!   is not supported there), so git skips nothing on its account on these machines and neither
//!   does this module; a client that could not be tested against a real daemon is not built.
//!   A configured fsmonitor program (a hook) is never run.
//!
//! Invariants: nothing here writes (not the index, not the object database), and no program named
//! by the repository's configuration runs (no fsmonitor, no filter driver). The untracked cache is
//! only used when asked for ([`Untracked::AsGitStatus`]): every other caller, and `cleanup` and
//! `prune` always, gets the full walk, so nothing is removed on the word of a cache.
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

//!
//! Within [`one_walk_per_worktree`] (`list`), sessions that share a worktree share one walk of it.

mod cache;
mod dir_walk;
mod shared;
mod untracked;

pub use shared::one_walk_per_worktree;

use crate::git::index::{self, Index, MAX_DIR_DEPTH};
use crate::git::Checkout;
use anyhow::{bail, Context, Result};
use dir_walk::{DirNode, Found, OpenDir, Walk};
use nix::fcntl::OFlag;
use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Repo-relative paths (sorted, `/`-separated) that
/// `git status --porcelain -z --untracked-files=all --no-renames` would list for the worktree at
/// `worktree`: staged, unstaged, deleted, unmerged and untracked-but-not-ignored files (an
/// untracked nested repository as `dir/`).
///
/// Outside [`one_walk_per_worktree`] every directory is read ([`Untracked::FullWalk`]); inside
/// it, as the scope says.
pub fn dirty_files(worktree: &Path) -> Result<Vec<String>> {
    shared::dirty_files(worktree, walk_worktree)
}

/// Where the names the index does not know come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Untracked {
    /// Every directory that holds tracked files is read: the truth on disk. What `cleanup` and
    /// `prune` decide on, and the default everywhere else.
    FullWalk,
    /// Like `git status --untracked-files=all`: the index's untracked cache stands in for the
    /// directories it still vouches for, where git would use it (see `cache.rs`); so a change git's
    /// cache cannot see (a file created in a directory whose mtime is then put back) is missed
    /// as git misses it. For display only (`list`).
    AsGitStatus,
}

/// [`dirty_files`] by a walk of its own, never shared, with untracked names found as `untracked`
/// says.
pub fn dirty_files_with(worktree: &Path, untracked: Untracked) -> Result<Vec<String>> {
    walk_worktree(worktree, untracked)
}

/// [`dirty_files`], always walking.
fn walk_worktree(worktree: &Path, untracked: Untracked) -> Result<Vec<String>> {
    let repo = Checkout::open(worktree)
        .with_context(|| format!("opening the worktree {}", worktree.display()))?;
    let settings = Settings::read(&repo)?;
    if settings.needs_libgit2 {
        return dirty_files_libgit2(&repo, worktree);
    }
    let Some(workdir) = repo.workdir().map(Path::to_path_buf) else {
        bail!("{} has no working directory", worktree.display());
    };
    let index_path = repo.gitdir().join("index");
    // The index file's mtime is read before the index itself: if the index is rewritten in
    // between, the older mtime only makes more entries count as racy (checked by content).
    let index_mtime = std::fs::metadata(&index_path)
        .ok()
        .map(|m| (m.mtime(), m.mtime_nsec()));
    let index = match Index::read(&index_path) {
        Ok(index) => index,
        Err(e) if index::is_unsupported(&e) => repo.read_index()?,
        Err(e) => return Err(e).with_context(|| format!("reading {}", index_path.display())),
    };

    let order: Vec<usize> = (0..index.entries.len()).collect();
    let Some(tree) = DirNode::build(&index, &order, 0, 0) else {
        bail!("its index nests directories deeper than {MAX_DIR_DEPTH}; not walked");
    };

    let mut dirty: HashSet<Vec<u8>> = HashSet::new();
    // Unmerged and intent-to-add paths are listed whatever HEAD holds.
    for (i, e) in index.entries.iter().enumerate() {
        if e.stage() != 0 || e.intent_to_add() {
            dirty.insert(index.path(i).to_vec());
        }
    }
    // Read again, by the guard's routes: usually only the end of the file (the cache tree) and
    // the trees it names. A file rewritten in between only makes this a later snapshot.
    let staged = crate::git::staged::staged_raw(repo.objects(), &index_path)
        .with_context(|| format!("comparing the index of {} with HEAD", worktree.display()))?;
    dirty.extend(staged);

    let cache = match untracked {
        Untracked::AsGitStatus => cache::Cache::usable(&repo, &workdir, &index, &settings),
        Untracked::FullWalk => None,
    };
    let walk = Walk {
        workdir: &workdir,
        index: &index,
        index_mtime,
        settings: &settings,
        parallel: rayon::current_thread_index().is_none(),
        cache: cache.as_ref(),
    };
    let root = OpenDir::openat(
        None,
        &workdir,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
    )
    .with_context(|| format!("opening {}", workdir.display()))?;
    let root_rec = cache.as_ref().map(cache::Cache::root);
    let found = walk.visit(Some(root), &[], &tree, root_rec);

    for f in found {
        match f {
            Found::Dirty(path) | Found::Listed(path) => {
                dirty.insert(path);
            }
            Found::Filtered(i) => {
                let path = index.path(i);
                if untracked::filtered_differs(&repo, path, settings.autocrlf)? {
                    dirty.insert(path.to_vec());
                }
            }
            Found::Untracked { path, is_dir } => {
                untracked::untracked(&repo, &workdir, path, is_dir, &mut dirty)?
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
    fn read(repo: &Checkout) -> Result<Settings> {
        let config = repo.config()?;
        let flag = |key: &str, default: bool| config.get_bool(key).unwrap_or(default);
        let autocrlf = config
            .get_string("core.autocrlf")
            .is_some_and(|v| v.eq_ignore_ascii_case("input"))
            || flag("core.autocrlf", false);
        let check_stat_minimal = config
            .get_string("core.checkStat")
            .is_some_and(|v| v.eq_ignore_ascii_case("minimal"));
        let sha1 = config
            .get_string("extensions.objectFormat")
            .is_none_or(|v| v.eq_ignore_ascii_case("sha1"));
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

/// libgit2's own status, for configurations this module does not model (see the module doc).
pub fn dirty_files_libgit2(repo: &Checkout, worktree: &Path) -> Result<Vec<String>> {
    repo.dirty_files(worktree)
}
