//! The git part of `create`'s transaction ([`super::create`]), and what runs while it still
//! holds the worktree:
//! `git worktree add --lock` under the deadline (creations taking turns through git's
//! registration phase), the copied files and the setup commands, and the removal of our lock.
//!
//! Invariant: our lock (reason [`lifecycle::CreatingLock`]) is removed last, right before
//! the final record, and only after every step above succeeded or was reported; its absence is
//! what tells [`lifecycle::recover_interrupted`] that a creation finished, so nothing that can
//! still fail or be interrupted may run after [`unlock_ours`].

use super::create::{Observer, SetupNotice};
use super::worktree_setup;
use crate::base::process::ProcessId;
use crate::config::Config;
use crate::git::{Repo, Run, RunError};
use crate::lifecycle;
use crate::session::{self, SessionRecord};
use crate::store::Store;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Waits for the registration gate in short steps, so Ctrl-C and the deadline still apply.
fn take_turn(
    store: &Store,
    deadline: Duration,
    interrupted: &AtomicBool,
) -> Result<crate::store::LockFile, RunError> {
    let started = std::time::Instant::now();
    let step = store.clone().with_lock_wait(Duration::from_millis(200));
    loop {
        match step.lock("worktree-add") {
            Ok(lock) => return Ok(lock),
            Err(e) if e.downcast_ref::<crate::store::LockBusy>().is_some() => {
                if interrupted.load(Ordering::SeqCst) {
                    return Err(RunError::Interrupted);
                }
                if started.elapsed() >= deadline {
                    return Err(RunError::TimedOut(deadline));
                }
            }
            Err(e) => {
                return Err(RunError::Failed {
                    status: None,
                    stderr: format!("{e:#}"),
                })
            }
        }
    }
}

/// `git worktree add --lock`: the lock keeps `git worktree prune` and other tools away from a
/// half-made worktree, and its reason marks it as ours for rollback; [`unlock_ours`] removes it
/// once everything but the final record is done.
pub(super) fn make_worktree(
    repo: &Repo,
    store: &Store,
    record: &SessionRecord,
    deadline: Duration,
    interrupted: &AtomicBool,
    observer: &dyn Observer,
) -> Result<(), RunError> {
    let cwd = repo.porcelain_dir().to_path_buf();
    if let Some(parent) = record.path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| RunError::Failed {
            status: None,
            stderr: format!("cannot create {}: {e}", parent.display()),
        })?;
    }
    observer.started(&record.label);
    let progress = |line: &str| observer.progress(line);
    let reason =
        lifecycle::CreatingLock::reason(&record.label, &record.base_commit, record.dir_existed);
    let record_worker = |pid: u32| {
        let worker = ProcessId::of(pid);
        // Without fsync: the worker's pid lets a rollback stop what a killed `create` left
        // running, a fact void after a machine crash (the worker died with it), and a killed
        // process loses no write the kernel already has.
        let step = store.clone().volatile();
        let _ = step.update::<SessionRecord, _>(&SessionRecord::store_path(&record.label), |r| {
            Ok(r.map(|mut r| {
                r.worker = Some(worker);
                r
            }))
        });
    };
    // Git reads every `<common>/worktrees/*` entry while it validates a new one, and dies on an
    // entry another `git worktree add` has only half written (git 2.47: "failed to read
    // .../commondir"). So creations take turns through their registration phase, holding a store
    // lock until git has written our entry; the slow part, the checkout, still runs in parallel.
    let gate = std::cell::RefCell::new(Some(take_turn(store, deadline, interrupted)?));
    let release_when_registered = || {
        if gate.borrow().is_some() {
            // Written, not only made: git creates each file before it writes it, and another
            // `git worktree add` that reads it empty dies ("failed to read .../commondir:
            // Success").
            let written = |p: std::path::PathBuf| std::fs::metadata(p).is_ok_and(|m| m.len() > 0);
            let registered = crate::git::worktree_entry(&repo.common_dir, &record.path)
                .is_some_and(|e| {
                    ["commondir", "HEAD", "gitdir"]
                        .iter()
                        .all(|f| written(e.admin.join(f)))
                });
            if registered {
                gate.borrow_mut().take();
            }
        }
    };
    // `-b` makes the branch before git looks at the other worktrees: a run that died on one
    // half written (git::run) leaves our branch at the base, which must go before the next try.
    let branch_ref = format!("refs/heads/{}", record.branch);
    let forget_branch = || {
        let args = ["update-ref", "-d", &branch_ref, &record.base_commit];
        let _ = Run::new(&cwd, args).once().run();
    };
    let result = Run::new(
        &cwd,
        [
            // A symbolic-link HEAD (core.preferSymlinkRefs) in a linked worktree points into the
            // admin entry, where no refs are: git follows it by name, libgit2 cannot open it.
            "-c".as_ref(),
            "core.preferSymlinkRefs=false".as_ref(),
            "worktree".as_ref(),
            "add".as_ref(),
            "--lock".as_ref(),
            "--reason".as_ref(),
            reason.as_ref(),
            "--no-track".as_ref(),
            "-b".as_ref(),
            record.branch.as_ref(),
            "--end-of-options".as_ref(),
            record.path.as_os_str(),
            record.base_commit.as_ref(),
        ],
    )
    .deadline(deadline)
    .interrupt(interrupted)
    .progress(&progress)
    .on_spawn(&record_worker)
    .tick(&release_when_registered)
    .before_retry(&forget_branch)
    .run();
    gate.borrow_mut().take();
    observer.finished();
    result?;
    if interrupted.load(Ordering::SeqCst) {
        return Err(RunError::Interrupted);
    }
    match crate::git::worktree_entry(&repo.common_dir, &record.path) {
        Some(_) => Ok(()),
        None => Err(RunError::Failed {
            status: None,
            stderr: format!("git did not register {}", record.path.display()),
        }),
    }
}

/// What follows the checkout while our lock still holds the worktree: the mark the unguarded-
/// commit check starts from, the `[create] copy` files and the setup commands. Their failures go
/// to the observer, never fatal (the `setup` command completes them).
#[allow(clippy::too_many_arguments)]
pub(super) fn after_checkout(
    repo: &Repo,
    config: &Config,
    store: &Store,
    record: &SessionRecord,
    base_commit: crate::git::Oid,
    approve_run: bool,
    deadline: Duration,
    env: &[(String, String)],
    observer: &dyn Observer,
) {
    let path = &record.path;
    // From here on, commits made in the worktree without the hooks can be found after the fact.
    if let Some(gitdir) = session::admin_dir_of(path) {
        super::seen::mark_seen(&gitdir, base_commit);
    }
    for failure in worktree_setup::copy_files(repo, config, path) {
        observer.setup(SetupNotice::CopyFailed(failure));
    }
    // A relative core.hooksPath names a directory per worktree: a generated one that git
    // ignores (husky's `.husky/_`) is copied in, so the hooks run here from the first commit.
    if let Some(main) = repo.main_worktree.as_deref() {
        if let Err(e) = crate::hooks::wire::materialize(main, path) {
            observer.setup(SetupNotice::HooksDirNotCopied {
                path: path.clone(),
                error: format!("{e:#}"),
            });
        }
    }
    match worktree_setup::run_commands(config, store, path, approve_run, deadline, env) {
        worktree_setup::RunOutcome::NotApproved(commands) => {
            observer.setup(SetupNotice::NotApproved {
                label: record.label.clone(),
                commands,
            })
        }
        worktree_setup::RunOutcome::Ran { failed } => {
            for f in failed {
                observer.setup(SetupNotice::CommandFailed(f));
            }
        }
        worktree_setup::RunOutcome::Nothing => {}
    }
}

/// Removes our `git worktree add --lock` (what `git worktree unlock` does, without a second git
/// process on the measured path). Only our own lock, recognised by its reason, is removed; its
/// absence is what marks the creation as finished for a later recovery.
pub(super) fn unlock_ours(repo: &Repo, record: &SessionRecord) -> Result<(), RunError> {
    let entry = crate::git::worktree_entry(&repo.common_dir, &record.path).ok_or_else(|| {
        RunError::Failed {
            status: None,
            stderr: format!("git did not register {}", record.path.display()),
        }
    })?;
    if entry
        .locked
        .as_deref()
        .is_some_and(|r| lifecycle::CreatingLock::is_of(r, &record.label))
    {
        std::fs::remove_file(entry.admin.join("locked")).map_err(|e| RunError::Failed {
            status: None,
            stderr: format!("cannot unlock {}: {e}", entry.admin.display()),
        })?;
    }
    Ok(())
}

/// Puts our creating lock back on a finished creation's worktree, so that
/// [`lifecycle::rollback`] recognises the worktree as this creation's again (see
/// [`super::create::undo`]). A lock someone else put there meanwhile is left, and refused.
pub(super) fn relock_ours(repo: &Repo, record: &SessionRecord) -> anyhow::Result<()> {
    let entry = crate::git::worktree_entry(&repo.common_dir, &record.path)
        .ok_or_else(|| anyhow::anyhow!("git does not list {}", record.path.display()))?;
    if let Some(reason) = entry.locked.as_deref() {
        if lifecycle::CreatingLock::is_of(reason, &record.label) {
            return Ok(());
        }
        anyhow::bail!("{} is locked: {reason}", record.path.display());
    }
    let reason =
        lifecycle::CreatingLock::reason(&record.label, &record.base_commit, record.dir_existed);
    std::fs::write(entry.admin.join("locked"), reason)
        .map_err(|e| anyhow::anyhow!("cannot lock {}: {e}", entry.admin.display()))
}
