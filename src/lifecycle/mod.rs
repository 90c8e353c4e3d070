//! Session lifecycle: creating a session ([`create`]), rolling back a creation, archiving, and
//! removing a session.
//!
//! Invariants a reader must not break:
//! - Rollback and removal delete only what this tool created: a directory only when
//!   [`Layout::may_delete`] allows it and it is empty or its `.git` points into this repository;
//!   a branch only under the configured prefix, and by rollback only while it still points at the
//!   commit the session started from; a worktree lock only when it is our own creating lock.
//! - Nothing with unmerged commits or uncommitted files is removed unless an archive ref holding
//!   it was written first ([`archive`]).
//! - Every rollback and forced removal leaves a line in the audit log.

use crate::base::failpoint;
use crate::git::{self, Repo, Run, RunError};
use crate::session::removal::{self, Removal};
use crate::session::{self, Layout, SessionRecord, CREATING_LOCK_PREFIX};
use crate::store::Store;
use anyhow::{Context, Result};
use std::path::Path;
use std::time::Duration;

mod archive;
pub mod collisions;
pub mod create;
mod create_git;
mod damaged;
mod git_locks;
pub mod integrate;
pub mod merge;
pub mod merge_batch;
pub mod merge_check;
mod merge_in_the_way;
pub mod merge_journal;
pub mod merge_regenerate;
mod merge_union;
mod orphans;
mod raw_commit;
mod refusals;
pub mod restore;
mod rollback;
pub mod seen;
pub mod worktree_setup;

pub use archive::{archive, delete_archive, expired_archives};
pub use damaged::finish_removal;
pub use refusals::LifecycleError;
pub use rollback::{recover_interrupted, rollback, Undone};

/// Held for the whole of one removal of a session (inspect, archive, remove), so two `cleanup`s
/// or `prune`s of one session never interleave: the second waits, then finds the session gone.
pub fn lock_session_op(
    store: &Store,
    label: &session::Label,
    wait: Duration,
) -> Result<Option<crate::store::LockFile>> {
    match store
        .clone()
        .with_lock_wait(wait)
        .lock(&format!("sessions/{}.op", label.file_name()))
    {
        Ok(lock) => Ok(Some(lock)),
        Err(e) if e.downcast_ref::<crate::store::LockBusy>().is_some() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Deadline for `git worktree remove` and the other porcelain cleanup runs.
pub(super) const PORCELAIN_DEADLINE: Duration = Duration::from_secs(120);

/// The lock `create` puts on the worktree it is making (`git worktree add --lock --reason`), read
/// back. Its reason is `git-session: creating <label> from <base commit>`, with ` in an existing
/// directory` added when the target was an empty directory already: rollback recognises its own
/// entry by it, and by nothing else, and it is also the write-ahead entry git keeps for us. The
/// session record is written without fsync, so after a machine crash the lock may be all that
/// says a creation was under way ([`recover_interrupted`]); it names what that recovery needs:
/// whose creation it was, which commit the new branch started at, and whether the directory was
/// there before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatingLock {
    pub label: session::Label,
    /// The commit the branch was created at, as hex; absent in the reasons of earlier
    /// versions (`git-session: creating <label>`), whose branches recovery then leaves alone.
    pub base: Option<String>,
    /// The worktree went into an empty directory that existed before (rollback empties it and
    /// leaves it). Earlier versions did not say; they read as `true`, which removes less.
    pub existing_dir: bool,
}

const EXISTING_DIR: &str = " in an existing directory";

impl CreatingLock {
    /// The reason `create` gives `git worktree add --lock`.
    pub fn reason(label: &session::Label, base_commit: &str, existing_dir: bool) -> String {
        let existing = if existing_dir { EXISTING_DIR } else { "" };
        format!("{CREATING_LOCK_PREFIX} {label} from {base_commit}{existing}")
    }

    /// Reads a lock reason as ours, or not at all: anything but exactly the shapes
    /// [`CreatingLock::reason`] writes (or the earlier one without a base), with a valid label
    /// and a full lowercase commit id, is someone else's lock.
    pub fn parse(reason: &str) -> Option<CreatingLock> {
        let rest = reason
            .trim_end_matches(['\n', '\r'])
            .strip_prefix(CREATING_LOCK_PREFIX)?
            .strip_prefix(' ')?;
        let Some((label, base)) = rest.split_once(" from ") else {
            return Some(CreatingLock {
                label: session::Label::new(rest).ok()?,
                base: None,
                existing_dir: true,
            });
        };
        let (base, existing_dir) = match base.strip_suffix(EXISTING_DIR) {
            Some(base) => (base, true),
            None => (base, false),
        };
        let hex = matches!(base.len(), 40 | 64)
            && base.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !hex {
            return None;
        }
        Some(CreatingLock {
            label: session::Label::new(label).ok()?,
            base: Some(base.to_string()),
            existing_dir,
        })
    }

    /// Whether `reason` is the creating lock of `label`.
    pub fn is_of(reason: &str, label: &session::Label) -> bool {
        CreatingLock::parse(reason).is_some_and(|l| l.label == *label)
    }
}

pub(super) fn same_path(a: &Path, b: &Path) -> bool {
    a == b || session::normalize(a) == session::normalize(b)
}

/// Deletes `refs/heads/<branch>` only if it still points at `expected`.
pub fn delete_branch(repo: &Repo, branch: &str, expected: git::Oid) -> Result<()> {
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

/// "1 commit", "3 commits": a count with its noun, for the lines the domain writes (archive
/// notes, merge summaries).
pub(crate) fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Removes a session's worktree (via `git worktree remove`), its branch (if it is ours, still at
/// `status.tip`, and `keep_branch` is false) and its record. The caller has decided, through
/// [`crate::hazards::inspect`], that this loses nothing, or the user forced it and [`archive`]
/// holds the work: only then (`forced`) does git get `--force`; otherwise git's own refusal
/// (dirty files, submodules) stands and is reported.
pub fn remove(
    repo: &Repo,
    layout: &Layout,
    store: &Store,
    status: &session::Status,
    keep_branch: bool,
    forced: bool,
) -> Result<()> {
    let record = &status.record;
    let label = &record.label;
    let deletes_branch =
        !keep_branch && !record.attached && record.branch.starts_with(&layout.prefix);
    if !record.attached && record.path.exists() {
        if !layout.may_delete(record) {
            return Err(LifecycleError::OutsideWorktrees {
                label: record.label.to_string(),
                path: record.path.clone(),
                worktrees_dir: layout.worktrees_dir.clone(),
            }
            .into());
        }
        // The write-ahead record: a removal killed from here on (or that git cannot finish) is
        // shown as damaged and finished by the next `cleanup` (see `session::removal`).
        let branch_tip = status.tip.filter(|_| deletes_branch).map(|t| t.to_string());
        Removal::begin(store, label, &record.path, branch_tip)?;
        failpoint::reach("cleanup", "journal-written");
        let mut args: Vec<&std::ffi::OsStr> = vec!["worktree".as_ref(), "remove".as_ref()];
        if forced {
            args.push("--force".as_ref());
        }
        args.extend(["--".as_ref(), record.path.as_os_str()]);
        let removed = Run::new(repo.porcelain_dir(), args)
            .deadline(PORCELAIN_DEADLINE)
            .run();
        if let Err(e) = removed {
            let reason = e
                .to_string()
                .trim_start_matches("git exited with 128: ")
                .to_string();
            // git's own refusals come before it deletes anything: the worktree is whole, and the
            // removal never began. Anything else is a removal git began and could not finish.
            let whole = git::worktree_entry(&repo.common_dir, &record.path).is_some()
                && !removal::lost_tracked_files(&record.path);
            if !whole {
                return Err(unfinished(store, label, &record.path, &reason));
            }
            Removal::end(store, label)?;
            return Err(LifecycleError::RemoveRefused {
                label: record.label.to_string(),
                reason,
                submodules: matches!(
                    &e,
                    RunError::Failed { stderr, .. } if stderr.contains("submodule")
                ),
            }
            .into());
        }
        failpoint::reach("cleanup", "worktree-removed");
        // The last session gone: the worktrees directory goes too, when it is empty (a directory
        // that holds anything, or is not the worktrees directory, stays).
        if record
            .path
            .parent()
            .is_some_and(|p| session::normalize(p) == layout.worktrees_dir)
        {
            let _ = std::fs::remove_dir(&layout.worktrees_dir);
        }
    } else if !record.attached {
        // The directory is gone by hand: drop this session's stale admin entry (what it held was
        // judged by the caller), and no other entry.
        drop_stale_entry(repo, &record.path)?;
    }
    if deletes_branch {
        if let Some(tip) = status.tip {
            delete_branch(repo, &record.branch, tip)?;
        }
    }
    failpoint::reach("cleanup", "branch-deleted");
    crate::ownership::remove_session(store, &record.label)?;
    failpoint::reach("cleanup", "record-removed");
    Removal::end(store, label)
}

/// Removes the unlocked admin entry of a worktree whose directory is gone, and no other entry.
fn drop_stale_entry(repo: &Repo, path: &Path) -> Result<()> {
    for entry in git::linked_worktrees(&repo.common_dir) {
        if same_path(&entry.path, path) && entry.locked.is_none() && !entry.path.exists() {
            std::fs::remove_dir_all(&entry.admin)
                .with_context(|| format!("removing {}", entry.admin.display()))?;
        }
    }
    Ok(())
}

/// A removal that began and could not finish: said in its record (so `list` shows why), and as
/// the error, with what is left and who works inside.
fn unfinished(store: &Store, label: &session::Label, path: &Path, reason: &str) -> anyhow::Error {
    if let Err(e) = Removal::failed(store, label, reason) {
        return e;
    }
    let (left, left_count) = removal::entries_left(path);
    let inside = match crate::base::process::occupants(path) {
        crate::base::process::Occupancy::Known(list) => {
            list.into_iter().map(|o| (o.pid, o.command)).collect()
        }
        crate::base::process::Occupancy::Unknown(_) => Vec::new(),
    };
    LifecycleError::RemovalUnfinished {
        label: label.to_string(),
        path: path.to_path_buf(),
        reason: reason.to_string(),
        left,
        left_count,
        inside,
    }
    .into()
}

/// What `prune` did (or, in a dry run, would do) with one admin entry under `<common>/worktrees/`.
#[derive(Debug, Clone)]
pub struct EntryVerdict {
    pub admin: std::path::PathBuf,
    /// Removed (a dry run: would be removed).
    pub removed: bool,
    pub why: String,
}

/// `git worktree prune`, decided entry by entry so that every removal is reported and nothing
/// that holds work goes. An entry is removed only when it is unlocked, its worktree directory is
/// gone (or it has no `gitdir` at all), no session record names that directory (sessions go only
/// through their own checks), and it holds no work of its own (a detached HEAD with commits no
/// ref holds, submodule repositories). Two entries naming one existing directory are reported
/// (`git worktree repair` sorts them out), never removed.
pub fn prune_entries(repo: &Repo, records: &[SessionRecord], dry_run: bool) -> Vec<EntryVerdict> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir(repo.common_dir.join("worktrees")) else {
        return out;
    };
    let mut seen: Vec<(std::path::PathBuf, std::path::PathBuf)> = Vec::new();
    let mut entries: Vec<_> = dir.flatten().map(|e| e.path()).collect();
    entries.sort();
    for admin in entries {
        let keep = |why: String| EntryVerdict {
            admin: admin.clone(),
            removed: false,
            why,
        };
        let Ok(meta) = std::fs::symlink_metadata(&admin) else {
            continue;
        };
        if !meta.is_dir() {
            out.push(keep("not a directory; left for a person to look at".into()));
            continue;
        }
        if admin.join("locked").exists() {
            continue;
        }
        let gitdir = git::read_admin_file(&admin.join("gitdir"))
            .map(|t| std::path::PathBuf::from(t.trim_end_matches(['\n', '\r'])))
            .map(|p| if p.is_relative() { admin.join(p) } else { p });
        let worktree = gitdir.as_ref().map(|g| {
            g.parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| g.clone())
        });
        if let Some(wt) = &worktree {
            if wt.exists() {
                let canonical = session::normalize(wt);
                if let Some((other, _)) = seen.iter().find(|(_, p)| *p == canonical) {
                    out.push(keep(format!(
                        "it and {} both name {}; run `git worktree repair`",
                        other.display(),
                        wt.display()
                    )));
                }
                seen.push((admin.clone(), canonical));
                continue;
            }
            if records.iter().any(|r| same_path(&r.path, wt)) {
                // A session's entry goes only with its session, after that session's checks
                // (prune's own verdict for it is reported there).
                continue;
            }
        }
        if let Some(work) = crate::hazards::admin_holds_work(repo, &admin) {
            out.push(keep(format!("{work}; kept")));
            continue;
        }
        let why = match &worktree {
            Some(wt) => format!("its directory {} is gone", wt.display()),
            None => "it has no gitdir file".to_string(),
        };
        let removed = dry_run || std::fs::remove_dir_all(&admin).is_ok();
        out.push(EntryVerdict {
            admin: admin.clone(),
            removed,
            why: if removed {
                why
            } else {
                format!("{why}, but it could not be removed")
            },
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::CreatingLock;
    use crate::session::Label;

    const BASE: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn a_creating_lock_reads_back_as_written_and_nothing_else_reads_as_one() {
        let label = Label::new("fix-login.2").unwrap();
        for existing_dir in [false, true] {
            let reason = CreatingLock::reason(&label, BASE, existing_dir);
            // git writes the reason with a newline after it.
            for text in [reason.clone(), format!("{reason}\n")] {
                assert_eq!(
                    CreatingLock::parse(&text),
                    Some(CreatingLock {
                        label: label.clone(),
                        base: Some(BASE.to_string()),
                        existing_dir,
                    }),
                    "{text:?}"
                );
            }
        }
        // The reason of earlier versions: no base, so recovery keeps the branch and the directory.
        assert_eq!(
            CreatingLock::parse("git-session: creating old\n"),
            Some(CreatingLock {
                label: Label::new("old").unwrap(),
                base: None,
                existing_dir: true,
            })
        );
        let sha256 = "a".repeat(64);
        assert!(CreatingLock::parse(&format!("git-session: creating x from {sha256}")).is_some());
        for foreign in [
            "initializing".to_string(),
            "git-session: creating".to_string(),
            "git-session: creating ".to_string(),
            "git-session: creatingx".to_string(),
            "git-session: creating ../../x".to_string(),
            format!("git-session: creating ../../x from {BASE}"),
            format!("git-session: creating a b from {BASE}"),
            format!("git-session: creating x from {}", BASE.to_uppercase()),
            format!("git-session: creating x from {}", &BASE[..39]),
            format!("git-session: creating x from {BASE} by hand"),
            format!("git-session: creating x from {BASE}\nsecond line"),
            format!("  git-session: creating x from {BASE}"),
            format!("git-session: creating x from -{}", &BASE[1..]),
        ] {
            assert_eq!(CreatingLock::parse(&foreign), None, "{foreign:?}");
        }
        assert!(CreatingLock::is_of(
            &CreatingLock::reason(&label, BASE, false),
            &label
        ));
        assert!(!CreatingLock::is_of(
            &CreatingLock::reason(&label, BASE, false),
            &Label::new("fix-login").unwrap()
        ));
    }
}
