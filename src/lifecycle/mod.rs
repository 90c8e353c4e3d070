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

use crate::error::UserError;
use crate::git::{self, Repo, Run, RunError};
use crate::session::{self, Layout, SessionRecord, CREATING_LOCK_PREFIX};
use crate::store::Store;
use anyhow::{Context, Result};
use std::path::Path;
use std::time::Duration;

mod archive;
mod rollback;

pub use archive::{archive, Archived};
pub use rollback::{recover_interrupted, rollback};

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
        .lock(&format!("sessions/{label}.op"))
    {
        Ok(lock) => Ok(Some(lock)),
        Err(e) if e.downcast_ref::<crate::store::LockBusy>().is_some() => Ok(None),
        Err(e) => Err(e),
    }
}

/// Deadline for `git worktree remove` and the other porcelain cleanup runs.
pub(super) const PORCELAIN_DEADLINE: Duration = Duration::from_secs(120);

/// The lock reason `create` gives the worktree it is making: rollback recognises its own entry
/// by it, and by nothing else.
pub fn creating_lock_reason(label: &str) -> String {
    format!("{CREATING_LOCK_PREFIX} {label}")
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
        let mut args: Vec<&std::ffi::OsStr> = vec!["worktree".as_ref(), "remove".as_ref()];
        if forced {
            args.push("--force".as_ref());
        }
        args.extend(["--".as_ref(), record.path.as_os_str()]);
        Run::new(repo.porcelain_dir(), args)
            .deadline(PORCELAIN_DEADLINE)
            .run()
            .map_err(|e| {
                let err = UserError::refused(format!(
                    "git refused to remove the worktree of \"{}\": {}",
                    record.label,
                    e.to_string().trim_start_matches("git exited with 128: ")
                ));
                match &e {
                    RunError::Failed { stderr, .. } if stderr.contains("submodule") => err.hinted(
                        "git removes a worktree with submodules only when forced: \
                         `git session cleanup --force` archives everything first",
                    ),
                    _ => err.hinted("nothing was removed; see git's reason above"),
                }
            })?;
    } else if !record.attached {
        // The directory is gone by hand: drop this session's stale admin entry (what it held was
        // judged by the caller), and no other entry.
        for entry in git::linked_worktrees(&repo.common_dir) {
            if same_path(&entry.path, &record.path)
                && entry.locked.is_none()
                && !entry.path.exists()
            {
                std::fs::remove_dir_all(&entry.admin)
                    .with_context(|| format!("removing {}", entry.admin.display()))?;
            }
        }
    }
    if !keep_branch && !record.attached && record.branch.starts_with(&layout.prefix) {
        if let Some(tip) = status.tip {
            delete_branch(repo, &record.branch, tip)?;
        }
    }
    crate::ownership::remove_session(store, &record.label)?;
    Ok(())
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
        let gitdir = std::fs::read_to_string(admin.join("gitdir"))
            .ok()
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
