//! Session lifecycle: rolling back a creation, archiving, and removing a session.
//!
//! Invariants a reader must not break:
//! - Rollback and removal delete only what this tool created: a directory only when
//!   [`Layout::may_delete`] allows it and it is empty or its `.git` points into this repository;
//!   a branch only under the configured prefix, and by rollback only while it still points at the
//!   commit the session started from; a worktree lock only when it is our own creating lock.
//! - Nothing with unmerged commits or uncommitted files is removed unless an archive ref holding
//!   it was written first ([`archive`]).
//! - Every rollback and forced removal leaves a line in the audit log.

use crate::clock;
use crate::config::Config;
use crate::error::UserError;
use crate::git::{self, Repo, Run};
use crate::output;
use crate::process::Liveness;
use crate::session::{self, Layout, RecordState, SessionRecord, CREATING_LOCK_PREFIX};
use crate::store::Store;
use anyhow::{anyhow, Context, Result};
use std::path::Path;
use std::time::Duration;

/// Deadline for `git worktree remove` and the other porcelain cleanup runs.
const PORCELAIN_DEADLINE: Duration = Duration::from_secs(120);

/// Undoes a creation: worktree directory, admin entry (and its lock), branch, state record.
/// Returns what could not be removed (empty when the rollback is complete).
pub fn rollback(
    repo: &Repo,
    layout: &Layout,
    store: &Store,
    record: &SessionRecord,
) -> Vec<String> {
    let mut left = Vec::new();
    // The admin entry first: once it is gone, git no longer thinks the directory is a worktree.
    if let Some(entry) = git::worktree_entry(&repo.common_dir, &record.path) {
        let ours = entry
            .locked
            .as_deref()
            .is_none_or(|reason| reason.trim().starts_with(CREATING_LOCK_PREFIX));
        if ours {
            if let Err(e) = std::fs::remove_dir_all(&entry.admin) {
                left.push(format!("{}: {e}", entry.admin.display()));
            }
        } else {
            left.push(format!(
                "{} is locked by someone else; not removed",
                entry.admin.display()
            ));
        }
    }
    if record.path.exists() {
        let empty = std::fs::read_dir(&record.path).is_ok_and(|mut d| d.next().is_none());
        let ours = session::admin_dir_of(&record.path)
            .is_some_and(|a| a.starts_with(repo.common_dir.join("worktrees")))
            || session::points_into(&record.path, &repo.common_dir);
        let dotgit_dangling = std::fs::read_to_string(record.path.join(".git"))
            .ok()
            .and_then(|t| t.strip_prefix("gitdir:").map(|s| s.trim().to_string()))
            .is_some_and(|t| Path::new(&t).starts_with(repo.common_dir.join("worktrees")));
        if layout.may_delete(record) && (empty || ours || dotgit_dangling) {
            if let Err(e) = std::fs::remove_dir_all(&record.path) {
                left.push(format!("{}: {e}", record.path.display()));
            }
        } else {
            left.push(format!(
                "{} was not made by this creation; not removed",
                record.path.display()
            ));
        }
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
    if let Err(e) = store.remove(&SessionRecord::store_path(&record.label)) {
        left.push(format!("state record: {e:#}"));
    }
    store.audit(
        "rollback",
        serde_json::json!({"label": record.label, "path": record.path.display().to_string(),
                           "incomplete": left}),
    );
    left
}

/// Rolls back every creation whose process is gone (same host, pid and start time). Any
/// command may call this; it reports what it did on stderr.
pub fn recover_interrupted(repo: &Repo, config: &Config, store: &Store) -> Result<()> {
    let layout = Layout::new(repo, config);
    for record in session::load_all(store)? {
        if record.state != RecordState::Creating {
            continue;
        }
        let dead = record
            .creator
            .as_ref()
            .is_none_or(|p| p.liveness() == Liveness::Dead);
        if !dead {
            continue;
        }
        // Re-read under the lock so two commands noticing at once roll back only once.
        let lock = store.lock(&SessionRecord::store_path(&record.label))?;
        let still = session::load(store, &record.label)?;
        drop(lock);
        let Some(still) = still.filter(|r| r.state == RecordState::Creating) else {
            continue;
        };
        let left = rollback(repo, &layout, store, &still);
        if left.is_empty() {
            output::note(format!(
                "rolled back the interrupted creation of session \"{}\"",
                still.label
            ));
        } else {
            output::warn(format!(
                "rolled back the interrupted creation of \"{}\" only in part: {}",
                still.label,
                left.join("; ")
            ));
        }
    }
    Ok(())
}

/// Deletes `refs/heads/<branch>` through libgit2, only if it still points at `expected`.
/// Rollback runs from any command, read-only ones included, and those must never run a program
/// the repository names (git's `reference-transaction` hook would run under `git update-ref`).
fn delete_branch_quietly(repo: &Repo, branch: &str, expected: git2::Oid) -> Result<()> {
    let full = format!("refs/heads/{branch}");
    let mut reference = repo
        .git
        .find_reference(&full)
        .with_context(|| format!("reading {full}"))?;
    if reference.target() != Some(expected) {
        return Err(anyhow!("{full} has moved"));
    }
    // libgit2 deletes against the value it loaded: a concurrent move makes this fail, not lose it.
    reference
        .delete()
        .with_context(|| format!("deleting {full}"))
}

/// Deletes `refs/heads/<branch>` only if it still points at `expected`.
pub fn delete_branch(repo: &Repo, branch: &str, expected: git2::Oid) -> Result<()> {
    let full = format!("refs/heads/{branch}");
    let dir = repo.porcelain_dir().to_path_buf();
    git::git_ok(
        &dir,
        [
            "update-ref",
            "-d",
            "-m",
            "git-session: remove session branch",
            "--end-of-options",
            &full,
            &expected.to_string(),
        ],
    )
    .map(|_| ())
}

/// Writes `refs/session-archive/<label>/<UTC timestamp>`: a commit whose parent is the branch
/// tip and whose tree is the worktree's uncommitted and untracked (not ignored) files. Returns
/// the ref name and the command that restores it.
pub fn archive(repo: &Repo, status: &session::Status) -> Result<(String, String)> {
    let record = &status.record;
    let tip = status
        .tip
        .ok_or_else(|| anyhow!("branch {} does not exist", record.branch))?;
    let stamp = clock::now().format("%Y%m%dT%H%M%SZ").to_string();
    let refname = format!("refs/session-archive/{}/{stamp}", record.label);
    let message = format!(
        "git-session archive of {} ({})\n\nbranch: {}\npath: {}\n",
        record.label,
        stamp,
        record.branch,
        record.path.display()
    );
    let commit = if record.path.is_dir() && !status.dirty.is_empty() {
        // A throwaway index seeded from the worktree's own, so `add -A` only rehashes what changed.
        let tmp = tempfile::Builder::new()
            .prefix("git-session-archive")
            .tempdir_in(&repo.common_dir)
            .context("creating a temporary index")?;
        let index = tmp.path().join("index");
        if let Some(admin) = session::admin_dir_of(&record.path) {
            let _ = std::fs::copy(admin.join("index"), &index);
        }
        let add = Run::new(&record.path, ["add", "-A", "--", "."])
            .deadline(PORCELAIN_DEADLINE)
            .env("GIT_INDEX_FILE", &index)
            .run()
            .map_err(|e| anyhow!("git add -A (archive): {e}"))?;
        drop(add);
        let tree = Run::new(&record.path, ["write-tree"])
            .deadline(PORCELAIN_DEADLINE)
            .env("GIT_INDEX_FILE", &index)
            .run()
            .map_err(|e| anyhow!("git write-tree (archive): {e}"))?
            .stdout;
        let tree = tree.trim().to_string();
        git::git_ok(
            &record.path,
            ["commit-tree", "-p", &tip.to_string(), "-m", &message, &tree],
        )?
    } else {
        let tree = repo.git.find_commit(tip)?.tree_id().to_string();
        git::git_ok(
            repo.porcelain_dir(),
            ["commit-tree", "-p", &tip.to_string(), "-m", &message, &tree],
        )?
    };
    let commit = commit.trim().to_string();
    git::git_ok(
        repo.porcelain_dir(),
        [
            "update-ref",
            "-m",
            "git-session: archive",
            "--end-of-options",
            &refname,
            &commit,
            "",
        ],
    )?;
    let restore = format!(
        "git worktree add -b {branch} {path} {refname}^ && git -C {path} restore --source={refname} --worktree -- .",
        branch = shell_quote(&record.branch),
        path = shell_quote(&record.path.display().to_string()),
    );
    Ok((refname, restore))
}

/// Quotes for a POSIX shell when needed.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:@,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Removes a session's worktree (via `git worktree remove`), its branch (if it is ours, still at
/// `status.tip`, and `keep_branch` is false) and its record. The caller has decided that this
/// loses nothing.
pub fn remove(
    repo: &Repo,
    layout: &Layout,
    store: &Store,
    status: &session::Status,
    keep_branch: bool,
) -> Result<()> {
    let record = &status.record;
    if !record.attached && record.path.exists() {
        if !layout.may_delete(record) {
            return Err(UserError::refused(format!(
                "the record of \"{}\" points at {}, outside {}",
                record.label,
                record.path.display(),
                layout.worktrees_dir.display()
            ))
            .hinted("remove that worktree by hand with `git worktree remove`, then rerun")
            .into());
        }
        Run::new(
            repo.porcelain_dir(),
            [
                "worktree".as_ref(),
                "remove".as_ref(),
                "--force".as_ref(),
                "--".as_ref(),
                record.path.as_os_str(),
            ],
        )
        .deadline(PORCELAIN_DEADLINE)
        .run()
        .map_err(|e| anyhow!("git worktree remove {}: {e}", record.path.display()))?;
    } else if !record.attached {
        // The directory is gone by hand: let git drop its stale admin entry.
        let _ = git::git_ok(repo.porcelain_dir(), ["worktree", "prune"]);
    }
    if !keep_branch && !record.attached && record.branch.starts_with(&layout.prefix) {
        if let Some(tip) = status.tip {
            delete_branch(repo, &record.branch, tip)?;
        }
    }
    store.remove(&SessionRecord::store_path(&record.label))?;
    Ok(())
}
