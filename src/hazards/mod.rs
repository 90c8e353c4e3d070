//! What removing a session's worktree would lose: the one inspection every removal path uses.
//!
//! `cleanup`, `prune` and anything else that deletes a worktree ask [`inspect`] and remove nothing
//! while it reports a hazard (unless the user forced it, and then only after the archive holds
//! what it can). It reads ground truth, never the session record's idea of it:
//! - the branch tip against base (commits not in base);
//! - the worktree's own `HEAD` (its admin entry's `HEAD` file): detached, or on another branch,
//!   it may hold commits that no ref and not base holds, which die with the admin entry;
//! - an operation in progress (rebase, am, merge, cherry-pick, revert, bisect, a sequencer): the
//!   state files git keeps in the worktree's admin entry;
//! - uncommitted and untracked (not ignored) files;
//! - every submodule repository under the admin entry's `modules/` (initialised, or deinit'ed and
//!   kept): its uncommitted files, and commits reachable from its HEAD or local branches that are
//!   neither on one of its remote-tracking refs or tags nor the commit the superproject records;
//! - a `.git` link that points nowhere (then nothing can be judged: refuse);
//! - other processes working inside the worktree.
//!
//! Invariants a reader must not break:
//! - Anything that cannot be inspected is itself a hazard ([`Hazard::Uninspectable`]): deletion
//!   fails closed.
//! - The inspection only reads (libgit2 and the filesystem); it runs no program the repository
//!   names.

use crate::git::{self, History, Merged, Oid, Repo};
use crate::git::{operations, read_head, Head, Operation};
/// A worktree's HEAD and operations in progress are git facts, read in [`crate::git`]; named here
/// too until the guard reads them from there.
mod submodules;

use crate::base::process::{self, Occupancy, Occupant};
use crate::session::{self, State, Status};
use anyhow::Result;
use std::path::{Path, PathBuf};
use submodules::{module_gitdirs, submodule_hazards};
pub use submodules::{
    uninitialised as uninitialised_submodules, without_shared as without_shared_warnings,
};

/// How deep nested submodules (`modules/a/modules/b/...`) are followed.
const MAX_MODULE_DEPTH: usize = 8;
/// How many commits a message lists before "... and N more".
pub const LIST_LIMIT: usize = 20;

/// Commits at risk in one submodule repository.
#[derive(Debug, Clone)]
pub struct SubmoduleRisk {
    /// Its path relative to the worktree (its name under `modules/` when not checked out).
    pub path: String,
    /// Its git directory (under the worktree's admin entry).
    pub gitdir: PathBuf,
    /// Tips whose history holds the commits below (HEAD and local branches).
    pub tips: Vec<Oid>,
    /// Commits no remote-tracking ref, tag or recorded commit holds, newest first.
    pub commits: Vec<(Oid, String)>,
    /// Uncommitted and untracked files of its checked-out worktree, relative to it.
    pub dirty: Vec<String>,
}

/// One reason the worktree may not be removed without `--force`.
#[derive(Debug, Clone)]
pub enum Hazard {
    /// The session branch has commits not in base.
    Unmerged {
        /// The session's label, for the command that merges it.
        label: session::Label,
        branch: String,
        base: String,
        total: usize,
        commits: Vec<(Oid, String)>,
    },
    /// The worktree's HEAD (detached), its HEAD reflog or its per-worktree refs hold commits no
    /// ref or base holds.
    Head {
        head: Option<Oid>,
        commits: Vec<(Oid, String)>,
    },
    Operation(Operation),
    Dirty(Vec<String>),
    Submodule(SubmoduleRisk),
    /// The worktree's `.git` link points at no admin entry of this repository.
    BrokenLink(String),
    /// Something that had to be looked at could not be: refusing is the only safe answer.
    Uninspectable(String),
    /// The worktree's uncommitted files could not be read (the session's status says so): like
    /// [`Hazard::Uninspectable`], refused and never forced.
    DirtyUnknown,
    Occupied(Vec<Occupant>),
    /// Whether another process works inside cannot be told here (the reason): refused like
    /// [`Hazard::Occupied`], and forceable like it once the user has checked.
    OccupancyUnknown(String),
}

impl Hazard {
    /// Whether `cleanup --force` may go past it (after archiving). A worktree that cannot be
    /// judged at all, or whose link is broken, is never removed: there is nothing sound to
    /// archive from.
    pub fn forceable(&self) -> bool {
        !matches!(
            self,
            Hazard::BrokenLink(_) | Hazard::Uninspectable(_) | Hazard::DirtyUnknown
        )
    }
}

/// Everything removing one session's worktree would lose, plus what an archive needs to hold it.
#[derive(Debug, Clone, Default)]
pub struct Hazards {
    pub items: Vec<Hazard>,
    /// The worktree's HEAD commit when it differs from the branch tip (an archive parent).
    pub head: Option<Oid>,
    /// Other tips only this worktree holds (its HEAD reflog, per-worktree refs): archive parents.
    pub reflog_tips: Vec<Oid>,
    /// The worktree's admin entry, when there is one.
    pub admin: Option<PathBuf>,
    /// Submodule repositories live under the admin entry: git removes such a worktree only
    /// when forced, so a user's `--force` must reach git (after the archive).
    pub has_modules: bool,
}

impl Hazards {
    /// The first hazard `--force` may not override, if any.
    pub fn unforceable(&self) -> Option<&Hazard> {
        self.items.iter().find(|h| !h.forceable())
    }

    pub fn submodules(&self) -> impl Iterator<Item = &SubmoduleRisk> {
        self.items.iter().filter_map(|h| match h {
            Hazard::Submodule(s) => Some(s),
            _ => None,
        })
    }
}

/// Inspects what removing the session's worktree (and its branch) would lose.
pub fn inspect(repo: &Repo, status: &Status) -> Hazards {
    let mut out = Hazards::default();
    let record = &status.record;
    if record.attached {
        // An attached session owns no worktree or branch: removing it deletes only its record.
        return out;
    }
    let missing = status.state == State::Missing;
    // A missing worktree's unmerged branch is kept, not removed, so it blocks nothing.
    if status.merged == Merged::No && !missing {
        if let (Some(tip), Some(base)) = (status.tip, status.base_tip) {
            match repo.unmerged_commits(tip, base, LIST_LIMIT) {
                Ok(commits) if !commits.is_empty() => out.items.push(Hazard::Unmerged {
                    label: record.label.clone(),
                    branch: record.branch.clone(),
                    base: record.base.clone(),
                    total: status.ahead.max(commits.len()),
                    commits,
                }),
                Ok(_) => {}
                Err(e) => out.items.push(Hazard::Uninspectable(format!(
                    "the commits of {}: {e:#}",
                    record.branch
                ))),
            }
        }
    }
    // The admin entry: found through git's registry (works when the directory is gone, where
    // the admin entry, its HEAD and its submodules still sit), else through the `.git` link.
    let registered = git::worktree_entry(&repo.common_dir, &record.path).map(|e| e.admin);
    let linked = if record.path.is_dir() {
        session::admin_dir_of(&record.path)
    } else {
        None
    };
    if record.path.is_dir() {
        match &linked {
            Some(admin) if admin.is_dir() && admin.starts_with(&repo.common_dir) => {}
            Some(admin) => out.items.push(Hazard::BrokenLink(format!(
                "it points at {}, which {}",
                admin.display(),
                if admin.is_dir() {
                    "is not this repository's"
                } else {
                    "does not exist"
                }
            ))),
            None => out.items.push(Hazard::BrokenLink(
                "there is no readable .git file in it".to_string(),
            )),
        }
    }
    let admin = registered.or(linked).filter(|a| a.is_dir());
    out.admin = admin.clone();
    if let Some(admin) = &admin {
        head_hazard(repo, status, admin, &mut out);
        for op in operations(admin) {
            out.items.push(Hazard::Operation(op));
        }
        submodule_hazards(repo, status, admin, &mut out);
    }
    if !missing {
        if status.dirty_unknown {
            out.items.push(Hazard::DirtyUnknown);
        }
        if !status.dirty.is_empty() {
            out.items.push(Hazard::Dirty(status.dirty.clone()));
        }
        match process::occupants(&record.path) {
            Occupancy::Known(list) if list.is_empty() => {}
            Occupancy::Known(list) => out.items.push(Hazard::Occupied(list)),
            // "Nobody" is never assumed: what cannot be seen refuses the removal like a process.
            Occupancy::Unknown(why) => out.items.push(Hazard::OccupancyUnknown(why)),
        }
    }
    out
}

/// What an admin entry whose worktree directory is gone still holds: a detached HEAD with
/// commits no ref holds, or submodule repositories. `None` when removing it loses nothing.
pub fn admin_holds_work(repo: &Repo, admin: &Path) -> Option<String> {
    if !module_gitdirs(admin).is_empty() {
        return Some("it holds submodule repositories".to_string());
    }
    let Ok(Head::Detached(oid)) = read_head(admin) else {
        return None;
    };
    let held = (|| -> Result<bool> {
        let mut walk = repo.history()?;
        walk.hide_refs(&|_| true);
        Ok(walk_commits(walk, &[oid], 1)?.is_empty())
    })();
    match held {
        Ok(true) => None,
        Ok(false) => Some(format!(
            "its detached HEAD {} has commits no ref holds",
            &oid.to_string()[..10]
        )),
        Err(e) => Some(format!("its HEAD cannot be judged ({e:#})")),
    }
}

/// Commits reachable from `tips` but not hidden, newest first, at most `limit` (+ the count).
pub(super) fn walk_commits(
    mut walk: History,
    tips: &[Oid],
    limit: usize,
) -> Result<Vec<(Oid, String)>> {
    for t in tips {
        walk.push(*t)?;
    }
    walk.commits(limit)
}

/// The new values a reflog file records, newest last (at most the last `limit` lines).
fn reflog_new_ids(path: &Path, limit: usize) -> Vec<Oid> {
    crate::git::reflog::read(path, limit)
        .into_iter()
        .map(|e| e.new)
        .filter(|id| !id.is_zero())
        .collect()
}

/// Refs kept in the worktree's own admin entry (`refs/bisect/*`, `refs/worktree/*`, ...): they
/// go with it.
fn per_worktree_ref_ids(admin: &Path) -> Vec<Oid> {
    let mut out = Vec::new();
    let mut stack = vec![(admin.join("refs"), 0usize)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() && depth < MAX_MODULE_DEPTH {
                stack.push((e.path(), depth + 1));
            } else if kind.is_file() {
                if let Some(text) = crate::git::read_admin_file(&e.path()) {
                    out.extend(Oid::from_str(text.trim()).ok());
                }
            }
        }
    }
    out
}

/// What only this worktree's admin entry holds: its detached HEAD, what its HEAD reflog recorded
/// (commits made on a detached HEAD, then left), its per-worktree refs. Commits a branch, tag,
/// other ref, base, another worktree's HEAD, or the session branch's own reflog (amended or
/// rebased away on purpose) holds are not at risk.
fn head_hazard(repo: &Repo, status: &Status, admin: &Path, out: &mut Hazards) {
    let head = match read_head(admin) {
        Ok(h) => h,
        Err(e) => {
            out.items
                .push(Hazard::Uninspectable(format!("the worktree's HEAD: {e:#}")));
            return;
        }
    };
    let detached = match head {
        Head::Detached(oid) => Some(oid),
        Head::Branch(_) => None,
    };
    if let Some(oid) = detached.filter(|o| Some(*o) != status.tip) {
        out.head = Some(oid);
    }
    let mut tips: Vec<Oid> = detached.into_iter().collect();
    tips.extend(reflog_new_ids(&admin.join("logs/HEAD"), 1000));
    tips.extend(per_worktree_ref_ids(admin));
    tips.sort();
    tips.dedup();
    if tips.is_empty() {
        return;
    }
    let branch_log = repo
        .common_dir
        .join("logs/refs/heads")
        .join(&status.record.branch);
    let result = (|| -> Result<Vec<(Oid, String)>> {
        let mut walk = repo.history()?;
        walk.hide_refs(&|_| true);
        if let Some(base) = status.base_tip {
            walk.hide(base)?;
        }
        for id in reflog_new_ids(&branch_log, 10_000) {
            let _ = walk.hide(id);
        }
        // Another worktree's HEAD holds what it points at; removing this one does not lose it.
        for w in git::linked_worktrees(&repo.common_dir) {
            if w.admin != admin {
                if let Ok(Head::Detached(other)) = read_head(&w.admin) {
                    let _ = walk.hide(other);
                }
            }
        }
        let present: Vec<Oid> = tips
            .iter()
            .copied()
            .filter(|t| repo.objects().has_commit(*t))
            .collect();
        walk_commits(walk, &present, 1000)
    })();
    match result {
        Ok(commits) if commits.is_empty() => {}
        Ok(commits) => {
            // The archive keeps every tip that is itself one of those commits.
            out.reflog_tips = tips
                .iter()
                .copied()
                .filter(|t| Some(*t) != detached && commits.iter().any(|(c, _)| c == t))
                .take(64)
                .collect();
            out.items.push(Hazard::Head {
                head: detached,
                commits,
            })
        }
        Err(e) => out.items.push(Hazard::Uninspectable(format!(
            "what the worktree's HEAD holds: {e:#}"
        ))),
    }
}
