//! Finishing the removal of a damaged session ([`crate::session::removal::Damage`]): a removal
//! that was killed or that git could not finish, and a directory git no longer knows as a
//! worktree.
//!
//! Invariants:
//! - A removal of ours that did not finish is finished without judging the files again: they
//!   were judged (or archived) before it began, and the tracked files missing are the ones it
//!   deleted. Its branch goes only when that removal was going to delete it and it is still at
//!   the tip recorded then, or when base holds it; otherwise it is kept.
//! - A directory git knows no worktree at, which no removal of ours left, may hold work: it goes
//!   only with `--force`, after an archive commit of its files
//!   (`refs/session-archive/<label>/<stamp>`, parent: the branch tip).
//! - Only the admin entry that names the session's directory is removed, never an entry the
//!   directory's `.git` points at but which names another directory, and never a locked one.
//! - The directory is deleted only where [`Layout::may_delete`] allows it.

use super::{count, delete_branch, LifecycleError, PORCELAIN_DEADLINE};
use crate::base::clock;
use crate::base::failpoint;
use crate::git::{self, Repo, Run};
use crate::session::removal::{Damage, Removal};
use crate::session::{self, Layout, Status};
use crate::store::Store;
use anyhow::{anyhow, Result};

/// What finishing a removal did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FinishedRemoval {
    /// The branch was deleted (else kept).
    pub branch_deleted: bool,
    /// The archive written first (`--force` of a directory git did not know).
    pub archive: Option<String>,
}

/// Finishes the removal of the damaged session `status` (see the module doc).
pub fn finish_removal(
    repo: &Repo,
    layout: &Layout,
    store: &Store,
    status: &Status,
    forced: bool,
) -> Result<FinishedRemoval> {
    let record = &status.record;
    let label = &record.label;
    let Some(damage) = &status.damage else {
        return Err(anyhow!("session \"{label}\" is not damaged"));
    };
    if !layout.may_delete(record) {
        return Err(LifecycleError::OutsideWorktrees {
            label: label.to_string(),
            path: record.path.clone(),
            worktrees_dir: layout.worktrees_dir.clone(),
        }
        .into());
    }
    let mut archive = None;
    if let Damage::Unregistered {
        repairable,
        left_count,
        ..
    } = damage
    {
        if !forced {
            return Err(LifecycleError::Unregistered {
                label: label.to_string(),
                path: record.path.clone(),
                repairable: *repairable,
                left_count: *left_count,
            }
            .into());
        }
        archive = Some(archive_directory(repo, status)?);
    }
    let branch_tip = match status.removal.as_ref().and_then(|r| r.branch_tip.clone()) {
        Some(tip) => Some(tip),
        None if status.merged.is_merged() => status.tip.map(|t| t.to_string()),
        None => None,
    }
    .filter(|_| record.branch.starts_with(&layout.prefix));
    Removal::begin(store, label, &record.path, branch_tip.clone())?;
    failpoint::reach("cleanup-finish", "journal-written");
    let entry = git::worktree_entry(&repo.common_dir, &record.path).filter(|e| e.locked.is_none());
    if let Err(e) = std::fs::remove_dir_all(&record.path) {
        return Err(super::unfinished(
            store,
            label,
            &record.path,
            &format!("deleting {}: {e}", record.path.display()),
        ));
    }
    failpoint::reach("cleanup-finish", "directory-removed");
    if let Some(entry) = entry {
        std::fs::remove_dir_all(&entry.admin)
            .map_err(|e| anyhow!("removing {}: {e}", entry.admin.display()))?;
    }
    if record
        .path
        .parent()
        .is_some_and(|p| session::normalize(p) == layout.worktrees_dir)
    {
        let _ = std::fs::remove_dir(&layout.worktrees_dir);
    }
    let mut branch_deleted = false;
    if let (Some(want), Some(tip)) = (branch_tip, status.tip) {
        if tip.to_string() == want {
            delete_branch(repo, &record.branch, tip)?;
            branch_deleted = true;
        }
    }
    crate::ownership::remove_session(store, label)?;
    Removal::end(store, label)?;
    store.audit(
        "removal-finished",
        serde_json::json!({"label": label, "path": record.path.display().to_string(),
                           "branch_deleted": branch_deleted, "archive": archive}),
    );
    Ok(FinishedRemoval {
        branch_deleted,
        archive,
    })
}

/// An archive commit of the files in a directory git knows no worktree at: a throwaway index
/// over the common directory, `git add -A` of the directory, the branch tip as parent.
fn archive_directory(repo: &Repo, status: &Status) -> Result<String> {
    let record = &status.record;
    let tmp = tempfile::Builder::new()
        .prefix("git-session-archive")
        .tempdir()
        .map_err(|e| anyhow!("creating a temporary index: {e}"))?;
    let index = tmp.path().join("index");
    let git = |args: &[&str]| -> Result<String> {
        Run::new(&record.path, args.iter().copied())
            .deadline(PORCELAIN_DEADLINE)
            .env("GIT_DIR", &repo.common_dir)
            .env("GIT_WORK_TREE", &record.path)
            .env("GIT_INDEX_FILE", &index)
            .run()
            .map(|o| o.stdout.trim().to_string())
            .map_err(|e| {
                anyhow!(
                    "git {} (archive of {}): {e}",
                    args[0],
                    record.path.display()
                )
            })
    };
    git(&["add", "-A", "--", "."])?;
    let tree = git(&["write-tree"])?;
    let files = git(&["ls-files", "-z"])?
        .split('\0')
        .filter(|f| !f.is_empty())
        .count();
    let stamp = clock::now().format("%Y%m%dT%H%M%SZ").to_string();
    let refname = format!("refs/session-archive/{}/{stamp}", record.label.file_name());
    let message = format!(
        "git-session archive of {} ({stamp})\n\nbranch: {}\npath: {}\n{} of a directory git \
         no longer knew as a worktree\n",
        record.label,
        record.branch,
        record.path.display(),
        count(files, "file")
    );
    let parents: Vec<git::Oid> = status.tip.into_iter().collect();
    let commit = super::archive::commit_tree(repo.porcelain_dir(), &tree, &parents, &message)?;
    super::archive::create_ref(repo, &refname, &commit)?;
    Ok(refname)
}

/// Drops the record of every removal whose owner died after the session's own record was
/// removed (its last step): nothing of the session is left to finish.
pub fn forget_finished_removals(store: &Store) -> Result<()> {
    for name in store.list("removals")? {
        let Ok(label) = session::Label::from_file_name(&name) else {
            continue;
        };
        let Some(removal) = Removal::load(store, &label)? else {
            continue;
        };
        if removal.abandoned() && session::load(store, &label)?.is_none() {
            Removal::end(store, &label)?;
        }
    }
    Ok(())
}
