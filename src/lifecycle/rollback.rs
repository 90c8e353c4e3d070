//! Undoing a creation: [`rollback`] of one, and [`recover_interrupted`], which every command
//! but the guard and the hook runs first, for creations whose process died.
//!
//! Invariant: what decides between undoing and completing a creation is git's own state, not
//! how far our record got. `create` holds `git worktree add --lock` (reason
//! [`CreatingLock`]) until the checkout, the copied files and the setup commands are
//! done, removes that lock, and only then records `active` (without fsync). So a `creating`
//! record whose creator is gone is rolled back while our lock (or no registration) shows the
//! creation unfinished, and completed when git registered the worktree on the session's
//! branch and our lock is gone: then only the final record update was lost (a kill in the
//! instant between, or a machine crash before the page cache reached the disk), and undoing it
//! could delete a worktree someone was handed and works in.

use super::{same_path, CreatingLock};
use crate::base::announce::{self, Announcement};
use crate::base::process::Liveness;
use crate::config::Config;
use crate::git::{self, Repo};
use crate::session::{self, Layout, RecordState, SessionRecord};
use crate::store::Store;
use anyhow::Result;
use std::path::Path;
use std::time::Duration;

/// Removes everything inside `dir` (not following symlinks), leaving `dir` itself.
fn empty_dir(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            std::fs::remove_dir_all(entry.path())?;
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// What a rollback did not remove: what it made and could not remove (`left`, a rollback
/// in part), and what it found at the creation's places and rightly left alone because this
/// creation did not make it (`untouched`, not a leftover).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Undone {
    pub left: Vec<String>,
    pub untouched: Vec<String>,
}

impl Undone {
    /// "rolled back", with what was left (a rollback in part) or left alone, for messages.
    pub fn describe(&self) -> String {
        let mut out = if self.left.is_empty() {
            "rolled back".to_string()
        } else {
            format!("rolled back in part (left: {})", self.left.join("; "))
        };
        if !self.untouched.is_empty() {
            out.push_str(&format!(
                "; not made by this creation, so left as found: {}",
                self.untouched.join("; ")
            ));
        }
        out
    }
}

/// Undoes a creation: worktree directory, admin entry (and its lock), branch, state record.
pub fn rollback(repo: &Repo, layout: &Layout, store: &Store, record: &SessionRecord) -> Undone {
    let mut undone = undo_git_part(repo, layout, record);
    if let Err(e) = crate::ownership::remove_session(store, &record.label) {
        undone.left.push(format!("state record: {e:#}"));
    }
    store.audit(
        "rollback",
        serde_json::json!({"label": record.label, "path": record.path.display().to_string(),
                           "incomplete": undone.left, "not_ours": undone.untouched}),
    );
    undone
}

/// What git holds of a creation: its admin entry (only the one our creating lock marks), the
/// worktree directory, and the branch while it is still at `record.base_commit` (never when that
/// is empty).
pub(super) fn undo_git_part(repo: &Repo, layout: &Layout, record: &SessionRecord) -> Undone {
    let mut left = Vec::new();
    let mut untouched = Vec::new();
    // The admin entry first: once it is gone, git no longer thinks the directory is a worktree.
    // Only the entry this creation made: `git worktree add --lock` wrote it locked with our
    // reason naming this label. Any other entry for the same path (one that existed before this
    // create ran, a person's own, one another tool locked) is left as it is.
    for entry in git::linked_worktrees(&repo.common_dir) {
        if !same_path(&entry.path, &record.path) {
            continue;
        }
        let ours = entry
            .locked
            .as_deref()
            .is_some_and(|reason| CreatingLock::is_of(reason, &record.label));
        if ours {
            if let Err(e) = std::fs::remove_dir_all(&entry.admin) {
                left.push(format!("{}: {e}", entry.admin.display()));
            }
        } else {
            untouched.push(entry.admin.display().to_string());
        }
    }
    // A creation killed mid-way can leave its entry without a `gitdir` (git's own cleanup ran
    // while a child still wrote HEAD or the index): no worktree claims such an entry, and git
    // names the entry after the directory. Ours to remove when nobody else locked it.
    if let Some(name) = record.path.file_name() {
        let junk = repo.common_dir.join("worktrees").join(name);
        let locked = git::read_admin_file(&junk.join("locked"));
        let unclaimed = std::fs::symlink_metadata(&junk).is_ok_and(|m| m.is_dir())
            && !junk.join("gitdir").exists()
            && locked
                .as_deref()
                .is_none_or(|r| CreatingLock::is_of(r, &record.label));
        if unclaimed {
            if let Err(e) = std::fs::remove_dir_all(&junk) {
                left.push(format!("{}: {e}", junk.display()));
            }
        }
    }
    if record.path.exists() {
        let empty = std::fs::read_dir(&record.path).is_ok_and(|mut d| d.next().is_none());
        let ours = session::admin_dir_of(&record.path)
            .is_some_and(|a| a.starts_with(repo.common_dir.join("worktrees")))
            || session::points_into(&record.path, &repo.common_dir);
        let dotgit_dangling = git::read_admin_file(&record.path.join(".git"))
            .and_then(|t| t.strip_prefix("gitdir:").map(|s| s.trim().to_string()))
            .is_some_and(|t| Path::new(&t).starts_with(repo.common_dir.join("worktrees")));
        if layout.may_delete(record) && (empty || ours || dotgit_dangling) {
            // An empty directory that was there before `create` is emptied and left, as found.
            let removed = if record.dir_existed {
                empty_dir(&record.path)
            } else {
                std::fs::remove_dir_all(&record.path)
            };
            if let Err(e) = removed {
                left.push(format!("{}: {e}", record.path.display()));
            }
        } else {
            untouched.push(record.path.display().to_string());
        }
    }
    // The worktrees directory a first create made holds nothing now (git may have removed the
    // worktree itself when it died): it goes too, only while empty (remove_dir refuses else).
    if !record.path.exists()
        && record
            .path
            .parent()
            .is_some_and(|p| session::normalize(p) == layout.worktrees_dir)
    {
        let _ = std::fs::remove_dir(&layout.worktrees_dir);
    }
    if !record.attached && record.branch.starts_with(&layout.prefix) {
        match repo.branch_tip(&record.branch) {
            Ok(Some(tip)) if tip.to_string() == record.base_commit => {
                if let Err(e) = delete_branch_quietly(repo, &record.branch, tip) {
                    left.push(format!("branch {}: {e:#}", record.branch));
                }
            }
            Ok(Some(_)) => left.push(format!(
                "branch {} has moved since creation; not deleted",
                record.branch
            )),
            Ok(None) => {}
            Err(e) => left.push(format!("branch {}: {e:#}", record.branch)),
        }
    }
    Undone { left, untouched }
}

/// Rolls back every creation whose process is gone (same host, pid and start time), then every
/// one only git's creating lock still records ([`super::orphans`]). Any command may call this;
/// it reports what it did on stderr.
pub fn recover_interrupted(repo: &Repo, config: &Config, store: &Store) -> Result<()> {
    let layout = Layout::new(repo, config);
    let records = session::load_all(store)?;
    for record in records.iter().cloned() {
        if record.state != RecordState::Creating {
            continue;
        }
        let dead = record
            .creator
            .as_ref()
            .is_none_or(|p| p.liveness() == Liveness::Dead);
        // A worker whose pid still runs while this platform cannot tell whether it is the same
        // `git worktree add` (and so cannot stop it safely) keeps the creation as it is: rolling
        // back under a git that still writes would leave a half-made worktree behind.
        let worker_unknown = record
            .worker
            .as_ref()
            .is_some_and(|w| w.liveness() == Liveness::Unknown && !w.owns_its_group());
        if !dead || worker_unknown {
            continue;
        }
        // Re-read under the lock so two commands noticing at once roll back only once.
        let lock = store.lock(&SessionRecord::store_path(&record.label))?;
        let still = session::load(store, &record.label)?;
        drop(lock);
        let Some(still) = still.filter(|r| r.state == RecordState::Creating) else {
            continue;
        };
        if finished(repo, &still) {
            store.update::<SessionRecord, _>(&SessionRecord::store_path(&still.label), |r| {
                Ok(r.map(|mut r| {
                    if r.state == RecordState::Creating {
                        r.state = RecordState::Active;
                        r.creator = None;
                        r.worker = None;
                    }
                    r
                }))
            })?;
            store.audit(
                "roll-forward",
                serde_json::json!({"label": still.label, "path": still.path.display().to_string()}),
            );
            announce::emit(Announcement::RolledForward {
                label: still.label.to_string(),
            });
            continue;
        }
        // The dead creator's `git worktree add` (and the hooks it started) may still run: stop
        // its whole process group first, or it keeps writing into what is being rolled back.
        if let Some(worker) = &still.worker {
            stop_worker(worker);
        }
        // The worker may have started before its pid was recorded: what runs inside the half-made
        // worktree (the checkout, hooks) is its group's too. Never a terminal's own group.
        stop_groups_inside(&layout, &still);
        // A ref lock the killed git left on the session's own branch is stale now.
        let _ = std::fs::remove_file(
            repo.common_dir
                .join(format!("refs/heads/{}.lock", still.branch)),
        );
        // What it found and left alone is no part of the creation: not reported as left over.
        let left = rollback(repo, &layout, store, &still).left;
        if left.is_empty() {
            announce::emit(Announcement::RolledBack {
                label: still.label.to_string(),
            });
        } else {
            announce::emit(Announcement::RolledBackInPart {
                label: still.label.to_string(),
                left: left.join("; "),
            });
        }
    }
    super::orphans::recover_orphans(repo, &layout, config, store, &records)?;
    super::git_locks::clear_stale(repo);
    super::merge_journal::recover_merges(repo, store)?;
    super::damaged::forget_finished_removals(store)
}

/// Whether a creation got past everything but its final record (see the module doc): git
/// registered a worktree at the record's path, its HEAD is the session's branch, that branch
/// exists, and the entry is not locked (`create` removes its own lock last, after the setup).
fn finished(repo: &Repo, record: &SessionRecord) -> bool {
    if record.attached {
        return false;
    }
    let Some(entry) = git::worktree_entry(&repo.common_dir, &record.path) else {
        return false;
    };
    let head = git::read_admin_file(&entry.admin.join("HEAD")).unwrap_or_default();
    entry.locked.is_none()
        && head.trim_end() == format!("ref: refs/heads/{}", record.branch)
        && record.path.join(".git").is_file()
        && matches!(repo.branch_tip(&record.branch), Ok(Some(_)))
}

/// Kills a recorded worker's process group (git and every hook or child it started) and waits
/// briefly until none of it runs, when the group is provably the worker's own
/// ([`crate::base::process::ProcessId::owns_its_group`]); a live process with the leader's pid but
/// another start time, or one whose start time this platform does not show, is left alone.
fn stop_worker(worker: &crate::base::process::ProcessId) {
    if !worker.owns_its_group() {
        return;
    }
    git::kill_group(worker.pid);
    let started = std::time::Instant::now();
    while crate::base::process::group_has_members(worker.pid)
        && started.elapsed() < Duration::from_secs(5)
    {
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Kills the process groups of processes working inside a worktree being rolled back, except
/// our own group and any session-leading group (a terminal's shell). Only inside a directory
/// rollback may delete ([`Layout::may_delete`]): the path comes from a record or from a file in
/// git's directory, and one naming `/` or a home directory must not make us kill what runs there.
/// Where the platform does not show who works inside, nothing is killed: the worker's own group
/// ([`stop_worker`]) is then all that is stopped.
pub(super) fn stop_groups_inside(layout: &Layout, record: &SessionRecord) {
    if !layout.may_delete(record) {
        return;
    }
    let crate::base::process::Occupancy::Known(inside) =
        crate::base::process::occupants(&record.path)
    else {
        return;
    };
    let own = crate::base::process::group_and_session(std::process::id()).map(|(g, _)| g);
    for o in inside {
        let Some((pgid, sid)) = crate::base::process::group_and_session(o.pid) else {
            continue;
        };
        if Some(pgid) == own || pgid == sid || pgid <= 1 {
            continue;
        }
        git::kill_group(pgid);
        let started = std::time::Instant::now();
        while crate::base::process::group_has_members(pgid)
            && started.elapsed() < Duration::from_secs(5)
        {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Deletes `refs/heads/<branch>` through libgit2, only if it still points at `expected`.
/// Rollback runs from any command, read-only ones included, and those must never run a program
/// the repository names (git's `reference-transaction` hook would run under `git update-ref`).
pub(super) fn delete_branch_quietly(repo: &Repo, branch: &str, expected: git::Oid) -> Result<()> {
    repo.delete_ref_quietly(&format!("refs/heads/{branch}"), expected)
}
