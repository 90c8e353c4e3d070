//! Every git call goes through this module: no other module names `git2`.
//!
//! Why one wrapper: reads go through libgit2 (git2), which never runs a program named by the
//! repository's configuration (`core.fsmonitor`, `core.pager`, `diff.external`, filter drivers),
//! so `list`, `info`, the guard and the context hook are safe in a hostile repository. Errors get
//! context here, and "not found" becomes `Option`, so callers never match on libgit2 error codes.
//! The libgit2 handles are private fields of [`Repo`] (a command's repository, with the paths it
//! needs) and [`Checkout`] (a worktree opened only to read its state); what callers get back are
//! values ([`Oid`], strings, paths, a tree's bytes as [`RawTree`]) or a thin wrapper
//! ([`Commit`]).
//!
//! One submodule per concept: `objects` (commits, HEAD, blob ids), `tree` (tree objects read as
//! raw bytes), `history`
//! (reachability and revision walks), `refs` (names to commits, the main branch, archive refs),
//! `checkout` (a worktree's status, ignore rules, attributes, libgit2's index reading), `run`
//! (the process runner).
//!
//! Porcelain that must run hooks and honour the user's configuration (`worktree add/remove`, the
//! archive commit) shells out through [`Run`], the one helper that spawns `git`: it puts the child
//! in its own process group, enforces a deadline, kills the whole group on timeout or interrupt,
//! and puts git's stderr into the error.
//!
//! Invariant: arguments that come from users (labels, revisions, paths) reach `git` only after
//! `--end-of-options` or `--`, so they can never be read as options.

use anyhow::{Context, Result};
use git2::{ErrorCode, Repository};
use std::path::{Path, PathBuf};

mod checkout;
mod config_env;
mod history;
pub mod index;
mod loose;
mod objects;
pub mod ref_records;
pub mod reflog;
mod refs;
mod run;
pub mod staged;
pub mod status;
mod tree;
pub mod worktree_head;

pub use checkout::{gitlinks_in_index_file, head_at, Checkout, ConfigView};
/// Object ids are plain values (20 bytes, `Copy`, ordered, hex in `Display`): shared as they are.
pub use git2::Oid;
pub use history::History;
pub use objects::{hash_blob, hash_blob_file, Commit, Objects};
pub use refs::is_valid_ref_name;
pub use run::{cli_common_dir, git_ok, kill_group, Run, RunError};
pub use tree::{RawEntry, RawTree};
pub use worktree_head::{operations, read_head, Head, Operation};

/// An opened repository plus the paths every command needs. The libgit2 handle stays private:
/// every operation on it is a method here or in a submodule.
pub struct Repo {
    git: Repository,
    /// `<common dir>`, absolute and canonical: the store lives below it.
    pub common_dir: PathBuf,
    /// The main worktree's root; `None` for a bare repository.
    pub main_worktree: Option<PathBuf>,
    /// The root of the worktree the command runs in, if any.
    pub current_worktree: Option<PathBuf>,
}

/// Process-wide libgit2 settings, applied before the first repository is opened.
///
/// Strict hash verification is off: libgit2 otherwise re-hashes every object it reads (SHA-1
/// with collision detection) to check it against its name, a check git itself makes only in
/// `fsck` and transfers. The guard reads HEAD's trees on every commit, and there the re-hashing
/// was the largest single cost after reading the index. Reads here never create objects, so
/// nothing unchecked is ever written.
pub fn configure_libgit2() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| git2::opts::strict_hash_verification(false));
}

/// git's colour setting for this tool: `color.session`, else `color.ui`, from the configuration
/// of the repository the environment points at (or the user's and system's outside one). Read
/// through libgit2 like every other read here, so no configured program can run.
pub fn colour_setting() -> Option<String> {
    configure_libgit2();
    let config = match git2::Repository::open_from_env() {
        Ok(repo) => repo.config().ok()?,
        Err(_) => git2::Config::open_default().ok()?,
    };
    colour_of(config_env::with_environment(config).ok()?)
}

/// `color.session`, else `color.ui`, in `config`.
fn colour_of(mut config: git2::Config) -> Option<String> {
    let config = config.snapshot().ok()?;
    ["color.session", "color.ui"]
        .iter()
        .find_map(|key| config.get_string(key).ok())
}

/// Why the repository could not be used; the command line words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RepoError {
    /// git's refusal of a repository owned by someone else (`safe.directory`). The tool never
    /// sets that: trusting a repository is the user's decision.
    NotOwned { path: String },
    /// Not inside a repository at all.
    NotARepository,
    /// The main branch cannot be told (no `base`, no `origin/HEAD`, a detached main worktree).
    NoMainBranch,
}

impl std::fmt::Display for RepoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RepoError::NotOwned { path } => write!(f, "repository {path} owned by another user"),
            RepoError::NotARepository => f.write_str("not inside a git repository"),
            RepoError::NoMainBranch => f.write_str("no main branch"),
        }
    }
}

impl std::error::Error for RepoError {}

fn not_owned(e: &git2::Error) -> RepoError {
    let path = e
        .message()
        .split('\'')
        .nth(1)
        .unwrap_or("this repository")
        .to_string();
    RepoError::NotOwned { path }
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// The main worktree of the common directory `common` (canonical), from its own configuration
/// file, in the cases where that file decides it as opening the repository would: `core.bare`
/// written (as `git init` and `git clone` write it) and no `core.worktree`. `None` when it does
/// not decide (the caller opens the repository then); `Some(None)` for a bare one. Every commit
/// in a session's worktree asks this: a second opening of the repository costs the guard about
/// 30 system calls and half a million instructions.
fn main_worktree_of(common: &Path) -> Option<Option<PathBuf>> {
    let config = git2::Config::open(&common.join("config")).ok()?;
    if config.get_entry("core.worktree").is_ok() {
        return None;
    }
    match config.get_bool("core.bare").ok()? {
        true => Some(None),
        false => Some(Some(common.parent()?.to_path_buf())),
    }
}

impl Repo {
    /// Opens the repository the environment points at (`GIT_DIR`, as in a hook) or the one
    /// containing the current directory. `None` outside any repository.
    pub fn discover() -> Result<Option<Repo>> {
        configure_libgit2();
        let git = match Repository::open_from_env() {
            Ok(r) => r,
            Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
            Err(e) if e.code() == ErrorCode::Owner => return Err(not_owned(&e).into()),
            Err(e) => return Err(e).context("opening the repository"),
        };
        Ok(Some(Repo::from_git(git)?))
    }

    pub fn open(path: &Path) -> Result<Repo> {
        configure_libgit2();
        let git = match Repository::open(path) {
            Ok(g) => g,
            Err(e) if e.code() == ErrorCode::Owner => return Err(not_owned(&e).into()),
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("opening the repository at {}", path.display()))
            }
        };
        Repo::from_git(git)
    }

    fn from_git(git: Repository) -> Result<Repo> {
        let common_dir = canonical(git.commondir());
        let current_worktree = git.workdir().map(canonical);
        let main_worktree = if git.is_worktree() {
            main_worktree_of(&common_dir).unwrap_or_else(|| {
                Repository::open(&common_dir)
                    .ok()
                    .and_then(|main| main.workdir().map(canonical))
            })
        } else {
            current_worktree.clone()
        };
        Ok(Repo {
            git,
            common_dir,
            main_worktree,
            current_worktree,
        })
    }

    /// Like [`Repo::discover`], but refuses outside a repository.
    pub fn require() -> Result<Repo> {
        Repo::discover()?.ok_or_else(|| RepoError::NotARepository.into())
    }

    /// Where repository-wide porcelain runs: a directory in which `git` finds this repository by
    /// itself. The main worktree, when its `.git` is there; otherwise (a bare repository, or
    /// `core.worktree` naming a directory with no `.git` in it) the common directory, where git
    /// finds itself as it does in a bare repository.
    pub fn porcelain_dir(&self) -> &Path {
        match &self.main_worktree {
            Some(main) if main.join(".git").exists() => main,
            _ => &self.common_dir,
        }
    }

    /// The main worktree's root, or the common dir when bare: where relative configured paths
    /// (the worktrees directory) are anchored.
    pub fn anchor_dir(&self) -> &Path {
        self.main_worktree.as_deref().unwrap_or(&self.common_dir)
    }

    /// The directory holding `.git-session.toml`: the main worktree (the team's shared file).
    pub fn config_root(&self) -> Option<&Path> {
        self.main_worktree.as_deref()
    }

    /// The worktree's own git directory (`.git`, or its admin entry for a linked worktree):
    /// where its index, HEAD and the hooks' markers live.
    #[inline]
    pub fn gitdir(&self) -> &Path {
        self.git.path()
    }

    /// The working directory as libgit2 found it (not canonicalised); `None` when bare.
    #[inline]
    pub fn workdir(&self) -> Option<&Path> {
        self.git.workdir()
    }

    /// This repository's objects and HEAD, for the guard's tree comparison.
    #[inline]
    pub fn objects(&self) -> Objects<'_> {
        Objects::new(&self.git)
    }

    /// The commit HEAD names; `None` when HEAD is unborn or unreadable.
    #[inline]
    pub fn head_id(&self) -> Option<Oid> {
        self.objects().head_id()
    }

    /// [`colour_setting`] from this repository, which is the one the environment points at
    /// when it was opened by [`Repo::discover`]: no second opening.
    pub fn colour_setting(&self) -> Option<String> {
        colour_of(config_env::with_environment(self.git.config().ok()?).ok()?)
    }

    /// The repository's configuration, as libgit2 reads it (no program runs).
    pub fn config(&self) -> Result<ConfigView> {
        let config = self
            .git
            .config()
            .and_then(config_env::with_environment)
            .context("reading the repository configuration")?;
        Ok(ConfigView::new(config))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Merged {
    No,
    Ancestor,
    Integrated,
}

impl Merged {
    pub fn is_merged(self) -> bool {
        self != Merged::No
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Merged::No => "no",
            Merged::Ancestor => "ancestor",
            Merged::Integrated => "integrated",
        }
    }
}

/// One worktree as git registers it in `<common>/worktrees/<name>/`.
#[derive(Debug, Clone)]
pub struct WorktreeEntry {
    /// The admin directory `<common>/worktrees/<name>`.
    pub admin: PathBuf,
    /// The worktree's root directory (from the `gitdir` file).
    pub path: PathBuf,
    pub locked: Option<String>,
}

/// One admin entry under `<common>/worktrees/`, as far as it could be read: an entry a killed
/// `git worktree add` left may have no readable `gitdir` yet.
#[derive(Debug, Clone)]
pub struct AdminEntry {
    pub admin: PathBuf,
    /// The worktree's root directory, from the `gitdir` file.
    pub path: Option<PathBuf>,
    pub locked: Option<String>,
}

/// The largest admin file read (`gitdir`, `locked`, `HEAD`): a path or a lock reason.
const MAX_ADMIN_FILE: u64 = 64 << 10;

/// A small file under the git directory, read without blocking on a FIFO or following into a
/// directory or device ([`crate::base::files::read_text`]); anything else reads as absent.
pub fn read_admin_file(path: &Path) -> Option<String> {
    crate::base::files::read_text(path, MAX_ADMIN_FILE).ok()
}

/// A file `git worktree add` reads in every admin entry (`gitdir`, `HEAD`, `locked`,
/// `commondir`) that is there but is not a regular file: git would wait forever on a FIFO there,
/// and fails obscurely on a directory, so `create` refuses before it runs git.
pub fn admin_blocker(common_dir: &Path) -> Option<PathBuf> {
    let entries = std::fs::read_dir(common_dir.join("worktrees")).ok()?;
    entries.flatten().find_map(|e| {
        ["gitdir", "HEAD", "locked", "commondir"]
            .into_iter()
            .map(|name| e.path().join(name))
            .find(|p| std::fs::metadata(p).is_ok_and(|m| !m.is_file()))
    })
}

/// Every admin entry under `<common>/worktrees/`, read straight from disk (no git process).
pub fn admin_entries(common_dir: &Path) -> Vec<AdminEntry> {
    let Ok(entries) = std::fs::read_dir(common_dir.join("worktrees")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .map(|e| read_admin_entry(&e.path()))
        .collect()
}

/// One admin entry, read now.
pub fn read_admin_entry(admin: &Path) -> AdminEntry {
    let path = read_admin_file(&admin.join("gitdir")).map(|gitdir| {
        let dotgit = PathBuf::from(gitdir.trim_end_matches(['\n', '\r']));
        // git 2.48's `worktree.useRelativePaths` writes it relative to the entry itself.
        let dotgit = if dotgit.is_relative() {
            admin.join(dotgit)
        } else {
            dotgit
        };
        dotgit.parent().map(Path::to_path_buf).unwrap_or(dotgit)
    });
    AdminEntry {
        admin: admin.to_path_buf(),
        path,
        locked: read_admin_file(&admin.join("locked")),
    }
}

/// Linked worktrees registered in `common_dir`: the admin entries that name their worktree.
pub fn linked_worktrees(common_dir: &Path) -> Vec<WorktreeEntry> {
    admin_entries(common_dir)
        .into_iter()
        .filter_map(|e| {
            Some(WorktreeEntry {
                path: e.path?,
                admin: e.admin,
                locked: e.locked,
            })
        })
        .collect()
}

/// The admin entry of the worktree at `path`, if git has one.
pub fn worktree_entry(common_dir: &Path, path: &Path) -> Option<WorktreeEntry> {
    let want = canonical(path);
    linked_worktrees(common_dir)
        .into_iter()
        .find(|w| w.path == path || canonical(&w.path) == want)
}

/// The git directory of the repository containing `dir`, searching upwards as git does and
/// stopping at `ceilings` (`GIT_CEILING_DIRECTORIES`).
pub fn discover_gitdir(dir: &Path, ceilings: &[PathBuf]) -> Option<PathBuf> {
    Repository::discover_path(dir, ceilings).ok()
}
