//! Every git call goes through this module.
//!
//! Why one wrapper: reads go through libgit2 (git2), which never runs a program named by the
//! repository's configuration (`core.fsmonitor`, `core.pager`, `diff.external`, filter drivers),
//! so `list`, `info`, the guard and the context hook are safe in a hostile repository. Errors get
//! context here, and "not found" becomes `Option`, so callers never match on libgit2 error codes.
//!
//! Porcelain that must run hooks and honour the user's configuration (`worktree add/remove`, the
//! archive commit) shells out through [`Run`], the one helper that spawns `git`: it puts the child
//! in its own process group, enforces a deadline, kills the whole group on timeout or interrupt,
//! and puts git's stderr into the error.
//!
//! Invariant: arguments that come from users (labels, revisions, paths) reach `git` only after
//! `--end-of-options` or `--`, so they can never be read as options.

use crate::error::UserError;
use anyhow::{Context, Result};
use git2::{ErrorCode, Oid, Repository};
use std::path::{Path, PathBuf};

mod run;
mod tree;

pub use run::{git_ok, kill_group, Output, Run, RunError};
pub use tree::{RawEntry, RawTree};

/// An opened repository plus the paths every command needs.
pub struct Repo {
    pub git: Repository,
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
    let mut config = match git2::Repository::open_from_env() {
        Ok(repo) => repo.config().ok()?,
        Err(_) => git2::Config::open_default().ok()?,
    };
    let config = config.snapshot().ok()?;
    ["color.session", "color.ui"]
        .iter()
        .find_map(|key| config.get_string(key).ok())
}

/// git's own answer to a repository owned by someone else: the `safe.directory` hint. The tool
/// never sets it: trusting a repository is the user's decision.
fn not_owned(e: &git2::Error) -> UserError {
    let path = e
        .message()
        .split('\'')
        .nth(1)
        .unwrap_or("this repository")
        .to_string();
    UserError::refused(format!("the repository at {path} is owned by another user"))
        .hinted(format!(
            "if you trust it, mark it safe as git says: git config --global --add safe.directory {path}"
        ))
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
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
            Repository::open(&common_dir)
                .ok()
                .and_then(|main| main.workdir().map(canonical))
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
        Repo::discover()?.ok_or_else(|| {
            UserError::refused("not inside a git repository")
                .hinted("run git session from a repository or one of its worktrees")
                .into()
        })
    }

    pub fn store(&self) -> crate::store::Store {
        crate::store::Store::for_common_dir(&self.common_dir)
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

    /// `<rev>^{commit}`, or `None` when it names nothing.
    pub fn resolve_commit(&self, rev: &str) -> Result<Option<Oid>> {
        match self.git.revparse_single(rev) {
            Ok(obj) => match obj.peel_to_commit() {
                Ok(c) => Ok(Some(c.id())),
                Err(_) => Ok(None),
            },
            Err(e) if matches!(e.code(), ErrorCode::NotFound | ErrorCode::InvalidSpec) => Ok(None),
            Err(e) if e.class() == git2::ErrorClass::Reference => Ok(None),
            Err(e) => Err(e).with_context(|| format!("resolving {rev}")),
        }
    }

    /// Tip of `refs/heads/<name>`, or `None`.
    pub fn branch_tip(&self, name: &str) -> Result<Option<Oid>> {
        self.ref_target(&format!("refs/heads/{name}"))
    }

    pub fn ref_target(&self, full: &str) -> Result<Option<Oid>> {
        match self.git.find_reference(full) {
            Ok(r) => Ok(r.resolve().ok().and_then(|r| r.target())),
            Err(e) if e.code() == ErrorCode::NotFound || e.code() == ErrorCode::InvalidSpec => {
                Ok(None)
            }
            Err(e) => Err(e).with_context(|| format!("reading {full}")),
        }
    }

    /// The repository's main branch: the local branch `origin/HEAD` names, else `main`, else
    /// `master`, else whatever the main worktree has checked out.
    pub fn default_base(&self) -> Result<String> {
        if let Ok(r) = self.git.find_reference("refs/remotes/origin/HEAD") {
            if let Some(target) = r.symbolic_target() {
                if let Some(short) = target.strip_prefix("refs/remotes/origin/") {
                    if self.branch_tip(short)?.is_some() {
                        return Ok(short.to_string());
                    }
                    return Ok(format!("origin/{short}"));
                }
            }
        }
        for name in ["main", "master"] {
            if self.branch_tip(name)?.is_some() {
                return Ok(name.to_string());
            }
        }
        let main = match &self.main_worktree {
            Some(dir) => Repository::open(dir).ok(),
            None => Repository::open(&self.common_dir).ok(),
        };
        if let Some(main) = main {
            if let Ok(head) = main.find_reference("HEAD") {
                if let Some(t) = head.symbolic_target() {
                    if let Some(short) = t.strip_prefix("refs/heads/") {
                        return Ok(short.to_string());
                    }
                }
            }
        }
        Err(
            UserError::refused("cannot tell which branch is the main branch")
                .hinted("name it with --base REV or set `base` in .git-session.toml")
                .into(),
        )
    }

    /// Commits on `tip` that are not on `base`, newest first (at most `limit`).
    pub fn unmerged_commits(
        &self,
        tip: Oid,
        base: Oid,
        limit: usize,
    ) -> Result<Vec<(Oid, String)>> {
        let mut walk = self.git.revwalk()?;
        walk.push(tip)?;
        walk.hide(base)?;
        summarize(&self.git, walk, limit)
    }

    pub fn ahead_behind(&self, tip: Oid, base: Oid) -> Result<(usize, usize)> {
        self.git
            .graph_ahead_behind(tip, base)
            .context("counting commits ahead of and behind base")
    }

    /// Whether `tip`'s work is already in `base`, checked against base explicitly.
    pub fn merge_state(&self, tip: Oid, base: Oid) -> Result<Merged> {
        if tip == base || self.git.graph_descendant_of(base, tip)? {
            return Ok(Merged::Ancestor);
        }
        if self.patches_in_base(tip, base)? || self.merge_changes_nothing(tip, base)? {
            return Ok(Merged::Integrated);
        }
        Ok(Merged::No)
    }

    /// Every non-merge commit of `tip` not in `base` has a patch-id equal to one in `base` since
    /// their merge base (a rebase merge, or a cherry-pick of each).
    fn patches_in_base(&self, tip: Oid, base: Oid) -> Result<bool> {
        const LIMIT: usize = 2000;
        let ids = |from: Oid, hide: Oid| -> Result<Option<Vec<Oid>>> {
            let mut walk = self.git.revwalk()?;
            walk.push(from)?;
            walk.hide(hide)?;
            let ids: Vec<Oid> = walk.take(LIMIT + 1).collect::<Result<_, _>>()?;
            Ok((ids.len() <= LIMIT).then_some(ids))
        };
        let (Some(mine), Some(theirs)) = (ids(tip, base)?, ids(base, tip)?) else {
            return Ok(false);
        };
        let mut base_patches = std::collections::HashSet::new();
        for id in theirs {
            if let Some(p) = self.patch_id(id)? {
                base_patches.insert(p);
            }
        }
        for id in mine {
            match self.patch_id(id)? {
                Some(p) if base_patches.contains(&p) => {}
                Some(_) => return Ok(false),
                // A merge commit or an empty commit carries no patch of its own.
                None => {}
            }
        }
        Ok(true)
    }

    fn patch_id(&self, id: Oid) -> Result<Option<Oid>> {
        let commit = self.git.find_commit(id)?;
        if commit.parent_count() != 1 {
            return Ok(None);
        }
        let parent = commit.parent(0)?.tree()?;
        let diff = self
            .git
            .diff_tree_to_tree(Some(&parent), Some(&commit.tree()?), None)?;
        if diff.deltas().len() == 0 {
            return Ok(None);
        }
        Ok(Some(diff.patchid(None)?))
    }

    /// Merging `tip` into `base` would leave base's tree as it is (a squash merge).
    fn merge_changes_nothing(&self, tip: Oid, base: Oid) -> Result<bool> {
        let ours = self.git.find_commit(base)?;
        let theirs = self.git.find_commit(tip)?;
        let mut index = match self.git.merge_commits(&ours, &theirs, None) {
            Ok(i) => i,
            Err(_) => return Ok(false),
        };
        if index.has_conflicts() {
            return Ok(false);
        }
        let tree = index.write_tree_to(&self.git)?;
        Ok(tree == ours.tree_id())
    }

    /// Short names of `refs/session-archive/<label>/*`, oldest first.
    pub fn archive_refs(&self, label: &str) -> Result<Vec<(String, Oid)>> {
        let glob = format!("refs/session-archive/{label}/*");
        let mut out = Vec::new();
        for r in self.git.references_glob(&glob)? {
            let r = r?;
            if let (Some(name), Some(target)) = (r.name(), r.target()) {
                out.push((name.to_string(), target));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Every archive ref, any label.
    pub fn all_archive_refs(&self) -> Result<Vec<(String, Oid)>> {
        let mut out = Vec::new();
        for r in self.git.references_glob("refs/session-archive/*")? {
            let r = r?;
            if let (Some(name), Some(target)) = (r.name(), r.target()) {
                out.push((name.to_string(), target));
            }
        }
        out.sort();
        Ok(out)
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

/// Linked worktrees registered in `common_dir`, read straight from disk (no git process).
pub fn linked_worktrees(common_dir: &Path) -> Vec<WorktreeEntry> {
    let Ok(entries) = std::fs::read_dir(common_dir.join("worktrees")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let admin = entry.path();
        let Ok(gitdir) = std::fs::read_to_string(admin.join("gitdir")) else {
            continue;
        };
        let dotgit = PathBuf::from(gitdir.trim_end_matches(['\n', '\r']));
        // git 2.48's `worktree.useRelativePaths` writes it relative to the entry itself.
        let dotgit = if dotgit.is_relative() {
            admin.join(dotgit)
        } else {
            dotgit
        };
        let path = dotgit.parent().map(Path::to_path_buf).unwrap_or(dotgit);
        let locked = std::fs::read_to_string(admin.join("locked")).ok();
        out.push(WorktreeEntry {
            admin,
            path,
            locked,
        });
    }
    out
}

/// The admin entry of the worktree at `path`, if git has one.
pub fn worktree_entry(common_dir: &Path, path: &Path) -> Option<WorktreeEntry> {
    let want = canonical(path);
    linked_worktrees(common_dir)
        .into_iter()
        .find(|w| w.path == path || canonical(&w.path) == want)
}

/// The commits a prepared walk yields (at most `limit`), each with its summary line.
pub fn summarize(
    repo: &Repository,
    walk: git2::Revwalk,
    limit: usize,
) -> Result<Vec<(Oid, String)>> {
    let mut out = Vec::new();
    for id in walk.take(limit) {
        let id = id?;
        let summary = repo
            .find_commit(id)
            .ok()
            .and_then(|c| c.summary().map(str::to_string))
            .unwrap_or_default();
        out.push((id, summary));
    }
    Ok(out)
}
