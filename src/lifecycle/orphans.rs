//! Creations git remembers and the store does not: admin entries under `<common>/worktrees/`
//! that carry our creating lock ([`CreatingLock`]) while no record of that label names their
//! worktree, which are undone; and finished session worktrees whose record was lost, which are
//! registered again ([`readopt`]).
//!
//! `create` writes its session record without fsync (RELIABILITY.md, "Durability"), so a machine
//! crash in the middle of a creation can lose the record, or leave it empty and so set aside.
//! What it cannot lose without losing the entry too is the lock: `git worktree add --lock` writes
//! it into the entry before anything else there, and `create` removes it only when everything but
//! the final record is done. A lock with our reason and no record is therefore a creation that
//! never finished, and this module undoes it from what the lock names.
//!
//! Invariants a reader must not break:
//! - Only a locked entry is undone: the lock goes before `create` prints the path, so a locked
//!   worktree was never handed to anyone.
//! - A running `create` holds its session's op lock ([`super::lock_session_op`]) from before its
//!   record is written until after the final one. An entry whose label's op lock is held is left
//!   alone, and one whose record turns up under that lock is the record's business
//!   ([`super::recover_interrupted`]).
//! - An entry is undone only while it is exactly what a creation makes ([`as_created`]: HEAD on
//!   the session branch, the branch still at the commit the lock names); a lock with our reason on
//!   anything else is left alone.
//! - Nothing else is touched: the branch goes only while it is still at the commit the lock names
//!   and no record of the label exists (a record at another path owns the branch now); the
//!   worktree directory only as far as [`Layout::may_delete`] allows, and emptied rather than
//!   removed when the lock says it existed before.
//! - A session registered again carries git's dates, never the moment of its readoption
//!   ([`true_dates`]): a lost record must not make an idle session live again, nor bring its
//!   lapsed claims back into force.

use super::rollback::{delete_branch_quietly, stop_groups_inside, undo_git_part};
use super::{lock_session_op, same_path, CreatingLock};
use crate::base::announce::{self, Announcement};
use crate::git::{self, Repo};
use crate::session::{self, Layout, RecordState, SessionRecord};
use crate::store::Store;
use anyhow::Result;
use std::path::Path;
use std::time::Duration;

/// Undoes every creation only git's lock still records, and registers again every finished
/// session worktree whose record is gone (see the module doc). `records` are the store's
/// records as read before: only what none of them names is looked at more closely.
pub(super) fn recover_orphans(
    repo: &Repo,
    layout: &Layout,
    config: &crate::config::Config,
    store: &Store,
    records: &[SessionRecord],
) -> Result<()> {
    // The usual case: a session's own entry. Attached sessions name the worktree too, but do
    // not own it: the session that made it may still be the one whose record is gone.
    let owners: Vec<&Path> = records
        .iter()
        .filter(|r| !r.attached)
        .map(|r| r.path.as_path())
        .collect();
    // `same_path` against every owner, with each owner's path resolved at most once, and only
    // when no owner names the entry's path as it is written: `list` runs this, and comparing
    // every entry with every record by `same_path` canonicalised both sides each time (10k
    // `canonicalize` calls, ~50k `readlink`, for 100 sessions, on one thread).
    let resolved: std::cell::OnceCell<Vec<std::path::PathBuf>> = std::cell::OnceCell::new();
    let owned = |path: &Path| {
        owners.contains(&path)
            || resolved
                .get_or_init(|| owners.iter().map(|p| session::normalize(p)).collect())
                .contains(&session::normalize(path))
    };
    for seen in git::admin_entries(&repo.common_dir) {
        if seen.path.as_deref().is_some_and(owned) {
            continue;
        }
        let Some(lock) = seen.locked.as_deref().and_then(CreatingLock::parse) else {
            if seen.locked.is_none() {
                readopt(repo, layout, config, store, &seen)?;
            }
            continue;
        };
        let names = |entry: &git::AdminEntry, r: &SessionRecord| {
            entry.path.as_deref().is_some_and(|p| same_path(&r.path, p))
        };
        // A short wait, so that a lock a killed process left is broken (its owner is provably
        // dead) and taken; a live `create` keeps it.
        let Some(_op) = lock_session_op(store, &lock.label, Duration::from_millis(100))? else {
            continue; // its `create` still runs
        };
        // Read again under the op lock: what was seen before it may be a `create` that has
        // finished meanwhile (its entry complete and unlocked now), and no `create` of this
        // label can change the entry while we hold it.
        let entry = git::read_admin_entry(&seen.admin);
        if entry.locked.as_deref().and_then(CreatingLock::parse) != Some(lock.clone()) {
            continue;
        }
        let record = session::load(store, &lock.label)?;
        if record.as_ref().is_some_and(|r| names(&entry, r)) {
            continue;
        }
        let branch = layout.branch(&lock.label);
        let Some(path) = entry.path.clone() else {
            // Killed before git wrote where the worktree is: the entry is all there is, besides
            // the branch `git worktree add -b` makes before it (at the commit the lock names).
            let mut left = match std::fs::remove_dir_all(&entry.admin) {
                Ok(()) => Vec::new(),
                Err(e) => vec![format!("{}: {e}", entry.admin.display())],
            };
            if record.is_none() {
                left.extend(unmade_branch(repo, &branch, &lock));
            }
            report(store, &lock, &entry.admin, left);
            continue;
        };
        if !as_created(repo, &entry.admin, &branch, &lock) {
            continue;
        }
        let branch_lock = repo.common_dir.join(format!("refs/heads/{branch}.lock"));
        let made = SessionRecord {
            state: RecordState::Creating,
            custom_path: !layout.holds(&path),
            // Empty: the branch is kept (undo_git_part deletes it only at this commit).
            base_commit: match (&record, &lock.base) {
                (None, Some(base)) => base.clone(),
                _ => String::new(),
            },
            dir_existed: lock.existing_dir,
            ..SessionRecord::new(lock.label.clone(), branch, path, String::new())
        };
        stop_groups_inside(layout, &made);
        // A ref lock the killed git left on the session's own branch is stale now.
        let _ = std::fs::remove_file(branch_lock);
        let left = undo_git_part(repo, layout, &made).left;
        report(store, &lock, &made.path, left);
    }
    Ok(())
}

/// Registers again a session worktree `create` finished whose record is gone: the record was
/// written without fsync, so a machine crash can lose it or leave it empty (then set aside), and
/// a damaged record is set aside too. Git's own state says all a record must: the entry is
/// unlocked (so `create` finished and handed it out), its HEAD is on `<prefix><label>` for a
/// valid label, and `create` left its mark there ([`super::seen::SEEN`]); no record of that
/// label exists. The base is the configured one (the name `--base` gave is not kept by git), and
/// the base commit the one the branch's reflog says it was created from. Without this, such a
/// session would vanish from `list`, and `cleanup` and `prune` would never see it again.
fn readopt(
    repo: &Repo,
    layout: &Layout,
    config: &crate::config::Config,
    store: &Store,
    seen: &git::AdminEntry,
) -> Result<()> {
    let Some(path) = seen.path.clone() else {
        return Ok(());
    };
    if !seen.admin.join(super::seen::SEEN).is_file()
        || session::admin_dir_of(&path).is_none_or(|a| !same_path(&a, &seen.admin))
    {
        return Ok(());
    }
    let Some(head) = git::read_admin_file(&seen.admin.join("HEAD")) else {
        return Ok(());
    };
    let Some(label) = head
        .trim_end()
        .strip_prefix("ref: refs/heads/")
        .and_then(|b| b.strip_prefix(layout.prefix.as_str()))
        .and_then(|l| session::Label::new(l).ok())
    else {
        return Ok(());
    };
    let branch = layout.branch(&label);
    let Some(_op) = lock_session_op(store, &label, Duration::from_millis(100))? else {
        return Ok(());
    };
    // Under the op lock, from disk: no record of this label, and no other session owning this
    // worktree (one attached to it does not own it).
    if session::load(store, &label)?.is_some()
        || session::load_all(store)?
            .iter()
            .any(|r| !r.attached && same_path(&r.path, &path))
    {
        return Ok(());
    }
    let base = match &config.base {
        Some(b) => b.clone(),
        None => repo.default_base().unwrap_or_default(),
    };
    // The dates git kept, never "now": a session idle for days must stay idle (and its claims
    // lapsed), or the lost record would give it a new life and keep `prune` from it.
    let (created, last_seen) = true_dates(repo, &seen.admin, &branch);
    let record = SessionRecord {
        base_commit: created_from(repo, &branch).unwrap_or_default(),
        custom_path: !layout.holds(&path),
        created,
        last_seen,
        ..SessionRecord::new(label.clone(), branch, path.clone(), base)
    };
    if store.write_new(&SessionRecord::store_path(&label), &record)? {
        store.audit(
            "readopt",
            serde_json::json!({"label": label, "path": path.display().to_string()}),
        );
        announce::emit(Announcement::Readopted {
            label: label.to_string(),
            path,
        });
    }
    Ok(())
}

/// The first line of `branch`'s reflog: what `git worktree add -b` wrote when it made the branch.
fn first_reflog_line(repo: &Repo, branch: &str) -> Option<String> {
    let log = repo.common_dir.join("logs/refs/heads").join(branch);
    let text = crate::store::read_text(&log, 8 << 20).ok()?;
    text.lines().next().map(str::to_string)
}

/// A re-registered session's `created` and `last_seen` from git's ground truth: created when
/// its branch was (the time on the first line of the branch's reflog), last seen at the newest
/// of its worktree's index and HEAD reflog mtimes (what [`session::last_activity`] reads too).
/// Where one is unknown the other stands in; only with neither is it now.
fn true_dates(
    repo: &Repo,
    admin: &std::path::Path,
    branch: &str,
) -> (crate::base::clock::Time, crate::base::clock::Time) {
    let created = first_reflog_line(repo, branch).and_then(|line| reflog_time(&line));
    let active = ["index", "logs/HEAD"]
        .iter()
        .filter_map(|f| crate::base::clock::mtime(&admin.join(f)))
        .max();
    let last_seen = active.or(created).unwrap_or_else(crate::base::clock::now);
    (created.unwrap_or(last_seen).min(last_seen), last_seen)
}

/// The time of one reflog line: `<old> <new> <name> <<email>> <seconds> <zone>\t<message>`.
fn reflog_time(line: &str) -> Option<crate::base::clock::Time> {
    let head = line.split('\t').next()?;
    let mut fields = head.rsplit(' ');
    let _zone = fields.next()?;
    let seconds: i64 = fields.next()?.parse().ok()?;
    chrono::DateTime::from_timestamp(seconds, 0)
}

/// The commit `branch` was created at, from the first line of its reflog (`git worktree add -b`
/// writes `branch: Created from <commit>` there, the new value being that commit).
fn created_from(repo: &Repo, branch: &str) -> Option<String> {
    let first = first_reflog_line(repo, branch)?;
    let mut fields = first.split(' ');
    let old = fields.next()?;
    let new = fields.next()?;
    let hex = |s: &str| matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit());
    (hex(old) && old.bytes().all(|b| b == b'0') && hex(new)).then(|| new.to_string())
}

/// Whether the entry is still only what a creation of `lock.label` makes: its HEAD, once git
/// wrote one, is the session branch (or git's placeholder, a zero id), and that branch, once it
/// exists, is still at the commit the lock names. Anything else was changed after the creation
/// or never was one, and is left as it is.
fn as_created(repo: &Repo, admin: &std::path::Path, branch: &str, lock: &CreatingLock) -> bool {
    let head = git::read_admin_file(&admin.join("HEAD"));
    let head_ok = head.as_deref().map(str::trim_end).is_none_or(|h| {
        h == format!("ref: refs/heads/{branch}") || (!h.is_empty() && h.bytes().all(|b| b == b'0'))
    });
    let branch_ok = match repo.branch_tip(branch) {
        Ok(None) => true,
        Ok(Some(tip)) => lock.base.as_deref() == Some(tip.to_string().as_str()),
        Err(_) => false,
    };
    head_ok && branch_ok
}

/// Deletes the session branch a creation made before its entry, while it is still at the commit
/// the lock names and no worktree has it checked out. Returns what could not be done.
fn unmade_branch(repo: &Repo, branch: &str, lock: &CreatingLock) -> Option<String> {
    let tip = repo.branch_tip(branch).ok().flatten()?;
    if lock.base.as_deref() != Some(tip.to_string().as_str()) {
        return None;
    }
    let head = format!("ref: refs/heads/{branch}");
    let checked_out = std::iter::once(repo.common_dir.clone())
        .chain(
            git::linked_worktrees(&repo.common_dir)
                .into_iter()
                .map(|w| w.admin),
        )
        .any(|admin| {
            git::read_admin_file(&admin.join("HEAD")).is_some_and(|h| h.trim_end() == head)
        });
    if checked_out {
        return None;
    }
    delete_branch_quietly(repo, branch, tip)
        .err()
        .map(|e| format!("branch {branch}: {e:#}"))
}

fn report(store: &Store, lock: &CreatingLock, path: &std::path::Path, left: Vec<String>) {
    store.audit(
        "rollback",
        serde_json::json!({"label": lock.label, "path": path.display().to_string(),
                           "found_by": "creating lock, no record", "incomplete": left}),
    );
    let label = lock.label.to_string();
    announce::emit(if left.is_empty() {
        Announcement::RolledBack { label }
    } else {
        Announcement::RolledBackInPart {
            label,
            left: left.join("; "),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::reflog_time;

    #[test]
    fn a_reflog_line_gives_its_time_and_nothing_else_does() {
        let zero = "0".repeat(40);
        let one = "1".repeat(40);
        let line = format!(
            "{zero} {one} A U Thor <a@example.com> 1767225600 +0100\tbranch: Created from HEAD"
        );
        assert_eq!(
            reflog_time(&line).map(|t| t.to_rfc3339()),
            Some("2026-01-01T00:00:00+00:00".to_string())
        );
        for bad in ["", "garbage", "a b c <d> notanumber +0000\tx"] {
            assert_eq!(reflog_time(bad), None, "{bad:?}");
        }
    }
}
