//! Removing sessions from the command line, for `cleanup`, `merge` (after integrating) and
//! Claude Code's `worktree-hook remove` alike.
//!
//! What would be lost is decided by [`hazards::inspect`] (the branch, the worktree's own HEAD,
//! operations in progress, files, submodules, processes) and nothing is removed while it reports
//! anything. `--force` overrides those, but only after [`lifecycle::archive`] has written an
//! archive ref holding all of it, and only then does `git worktree remove` get `--force`: without
//! it, git's own refusals stand. A worktree that cannot be judged (a broken `.git` link) and a
//! locked worktree are never removed, not even with `--force`.

use crate::base::clock;
use crate::base::process::Liveness;
use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::cli::user_error::UserError;
use crate::cli::words::hazards as words;
use crate::config::Config;
use crate::git::{Merged, Repo};
use crate::hazards;
use crate::lifecycle;
use crate::session::{self, Label, Layout, RecordState, SessionRecord, State, Status};
use anyhow::Result;

/// What to remove, and how (the `cleanup` arguments).
#[derive(Debug, Default)]
pub struct Cleanup {
    /// Sessions to remove [default: the session of the current worktree].
    pub labels: Vec<String>,
    /// Archive, then remove, past every hazard `--force` may pass.
    pub force: bool,
    /// Do not ask before archiving.
    pub yes: bool,
    /// Say what would be removed, remove nothing.
    pub dry_run: bool,
}

/// Removes the sessions `args` names (the acting one when none), each on its own: with several,
/// one that fails is reported and the others still go.
pub fn cleanup(cx: &CommandHelper, args: Cleanup) -> Result<()> {
    let config = cx.config()?;
    cx.recover()?;
    let layout = cx.layout()?;
    let labels = if args.labels.is_empty() {
        vec![cx
            .acting()?
            .ok_or_else(|| session::SessionError::NoneHere {
                usage: "git session cleanup LABEL".to_string(),
            })?]
    } else {
        args.labels
            .iter()
            .map(|l| Label::new(l))
            .collect::<Result<Vec<_>, _>>()?
    };
    let now = clock::now();
    let mut failures = Vec::new();
    for label in &labels {
        if let Err(e) = cleanup_one(&cx.repo, config, &layout, label, &args, now) {
            if labels.len() == 1 {
                return Err(e);
            }
            crate::cli::report::report(&e);
            failures.push(label.clone());
        }
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(UserError::refused(format!(
            "{} of {} sessions were not cleaned up: {}",
            failures.len(),
            labels.len(),
            failures.join(", ")
        ))
        .into())
    }
}

/// Why a session may not be removed without `--force`: the lines of [`hazards::inspect`].
pub fn blockers(repo: &Repo, status: &Status) -> Vec<String> {
    words::all_lines(&hazards::inspect(repo, status))
}

/// How long a cleanup waits for another removal of the same session to finish.
const OP_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

fn cleanup_one(
    repo: &Repo,
    config: &Config,
    layout: &Layout,
    label: &Label,
    args: &Cleanup,
    now: clock::Time,
) -> Result<()> {
    let store = crate::store::Store::of(repo);
    session::require(&store, label)?;
    // A running `create` holds the op lock until its final record: waiting for it would remove
    // the session right after `create` handed out its path. Refused at once instead, naming the
    // creator, and judged again under the lock below.
    if let Some(record) = session::load(&store, label)? {
        if record.state == RecordState::Creating {
            return not_while_created(repo, config, &store, &record);
        }
    }
    // One removal of a session at a time; whoever comes second finds it gone.
    let Some(_op) = lifecycle::lock_session_op(&store, label, OP_WAIT)? else {
        return Err(UserError::refused(format!(
            "session \"{label}\" is busy: another git-session command is removing it"
        ))
        .hinted("run the command again once that one has finished")
        .into());
    };
    let Some(record) = session::load(&store, label)? else {
        output::note(format!(
            "session \"{label}\" was already removed by another command meanwhile"
        ));
        return Ok(());
    };
    let status = session::inspect(&repo.common_dir, record, config, now)?;
    crate::guard::unguarded::sweep_session(repo, config, &status);
    if status.state == State::Creating {
        return not_while_created(repo, config, &store, &status.record);
    }
    refuse_unjudgeable(layout, &status)?;
    if status.damage.is_some() {
        return finish_damaged(repo, layout, &store, &status, args);
    }
    let hazards = hazards::inspect(repo, &status);
    let blockers = words::all_lines(&hazards);
    // A missing worktree holds no files; an unmerged branch of it is kept, not archived away.
    let keep_branch = status.state == State::Missing && status.merged == Merged::No;
    refuse_unforceable(&status, &hazards)?;
    if args.dry_run && !blockers.is_empty() && !args.force {
        // A dry run reports what the cleanup would refuse, and succeeds.
        output::line(format!(
            "would not remove session \"{label}\" without --force:"
        ))?;
        for b in &blockers {
            output::line(format!("  {b}"))?;
        }
        output::hint(words::hint(&hazards, &status.record.path));
        return Ok(());
    }
    if !blockers.is_empty() && !args.force {
        return Err(held_work(&status, &hazards, &blockers).into());
    }
    if args.dry_run {
        return say_what_would_go(&status, &blockers, keep_branch);
    }
    let forced = args.force && (!blockers.is_empty() || hazards.has_modules);
    if forced {
        archive_first(repo, &store, &status, &hazards, &blockers, args.yes)?;
    }
    let record = &status.record;
    let stood_inside = !record.attached && stands_inside(&record.path);
    lifecycle::remove(repo, layout, &store, &status, keep_branch, forced)?;
    say_removed(&status, keep_branch);
    if stood_inside {
        point_the_way_out(repo);
    }
    Ok(())
}

/// A damaged session (a removal that did not finish, a directory git no longer knows): its
/// removal finished ([`lifecycle::finish_removal`]), the branch kept unless merged.
fn finish_damaged(
    repo: &Repo,
    layout: &Layout,
    store: &crate::store::Store,
    status: &Status,
    args: &Cleanup,
) -> Result<()> {
    let record = &status.record;
    let label = &record.label;
    if args.dry_run {
        output::line(format!(
            "would finish the removal of session \"{label}\": {}",
            crate::cli::words::damage::detail(status).unwrap_or_default()
        ))?;
        return Ok(());
    }
    let done = lifecycle::finish_removal(repo, layout, store, status, args.force)?;
    if let Some(archive) = &done.archive {
        output::note(format!(
            "archived what was left of session \"{label}\" as {archive}"
        ));
    }
    let mut what = vec![format!("worktree {}", record.path.display())];
    if done.branch_deleted {
        what.push(format!("branch {}", record.branch));
    }
    what.push("state".to_string());
    output::note(format!(
        "finished the removal of session \"{label}\": {}",
        what.join(", ")
    ));
    if !done.branch_deleted && status.tip.is_some() {
        output::note(format!(
            "kept branch {}: {} does not hold it",
            record.branch, record.base
        ));
    }
    Ok(())
}

/// A locked worktree, and a record pointing outside the worktrees directory, are never removed.
fn refuse_unjudgeable(layout: &Layout, status: &Status) -> Result<()> {
    let record = &status.record;
    let label = &record.label;
    if let Some(reason) = &status.locked {
        return Err(
            UserError::refused(format!("the worktree of \"{label}\" is locked: {reason}"))
                .hinted(format!(
                    "unlock it first if that is over: git worktree unlock {}",
                    crate::base::quote::shell_quote(&record.path.display().to_string())
                ))
                .into(),
        );
    }
    if !record.attached && record.path.exists() && !layout.may_delete(record) {
        return Err(UserError::refused(format!(
            "the record of \"{label}\" points at {}, outside {}; not followed",
            record.path.display(),
            layout.worktrees_dir.display()
        ))
        .hinted("remove that worktree with `git worktree remove` if it is really this session's")
        .into());
    }
    Ok(())
}

/// What `--force` may not pass either: a worktree that cannot be judged.
fn refuse_unforceable(status: &Status, hazards: &hazards::Hazards) -> Result<()> {
    let Some(h) = hazards.unforceable() else {
        return Ok(());
    };
    let mut err = UserError::refused(format!(
        "session \"{}\" cannot be judged safe to remove, not even with --force",
        status.record.label
    ));
    for line in words::lines(h) {
        err = err.detail(line);
    }
    Err(err
        .hinted(format!(
            "repair the worktree (git worktree repair {}), then rerun",
            crate::base::quote::shell_quote(&status.record.path.display().to_string())
        ))
        .into())
}

/// The refusal without `--force`: processes inside (or no way to tell), or work that would be
/// lost.
fn held_work(status: &Status, hazards: &hazards::Hazards, blockers: &[String]) -> UserError {
    let label = &status.record.label;
    let unknown = hazards.items.iter().find_map(|h| match h {
        hazards::Hazard::OccupancyUnknown(why) => Some(why),
        _ => None,
    });
    let only_processes = hazards.items.iter().all(|h| {
        matches!(
            h,
            hazards::Hazard::Occupied(_) | hazards::Hazard::OccupancyUnknown(_)
        )
    });
    if let (true, Some(why)) = (only_processes, unknown) {
        return UserError::refused(format!(
            "session \"{label}\" may be in use: cannot tell whether another process \
             works inside its worktree, because {why}"
        ))
        .hinted(format!(
            "make sure no shell, editor or agent works inside {}, then rerun with --force \
             (it archives everything first)",
            crate::base::quote::shell_quote(&status.record.path.display().to_string())
        ));
    }
    if only_processes {
        let mut err = UserError::refused(format!(
            "session \"{label}\" is in use: other processes work inside its worktree"
        ));
        for b in blockers {
            err = err.detail(b.clone());
        }
        return err.hinted(
            "stop those processes or move them out of the worktree, then rerun \
             (--force archives the worktree and removes it anyway)",
        );
    }
    let mut err = UserError::refused(format!("session \"{label}\" holds work that would be lost"));
    for b in blockers {
        err = err.detail(b.clone());
    }
    err.hinted(words::hint(hazards, &status.record.path))
}

/// `--dry-run`: what would be archived and removed.
fn say_what_would_go(status: &Status, blockers: &[String], keep_branch: bool) -> Result<()> {
    let record = &status.record;
    let label = &record.label;
    if !blockers.is_empty() {
        output::line(format!("would archive session \"{label}\" (forced):"))?;
        for b in blockers {
            output::line(format!("  {b}"))?;
        }
    }
    let mut parts = Vec::new();
    if !record.attached && record.path.exists() {
        parts.push(format!("worktree {}", record.path.display()));
    }
    if !record.attached && status.tip.is_some() && !keep_branch {
        parts.push(format!("branch {}", record.branch));
    }
    if record.attached {
        output::line(crate::cli::words::lifecycle::unregistered(record, true))?;
        return Ok(());
    }
    parts.push("state".to_string());
    output::line(format!(
        "would remove session \"{label}\": {}",
        parts.join(", ")
    ))?;
    Ok(())
}

/// `--force` past hazards: asked on a terminal (unless `--yes`), then the archive that holds it
/// all, said and recorded in the audit log.
fn archive_first(
    repo: &Repo,
    store: &crate::store::Store,
    status: &Status,
    hazards: &hazards::Hazards,
    blockers: &[String],
    yes: bool,
) -> Result<()> {
    let label = &status.record.label;
    if !yes && output::stderr_is_terminal() && std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        output::note(format!("session \"{label}\":"));
        for b in blockers {
            output::note(format!("  {b}"));
        }
        let go = dialoguer::Confirm::new()
            .with_prompt("Archive all of this and remove the session?")
            .default(false)
            .interact()
            .unwrap_or(false);
        if !go {
            return Err(UserError::refused("cleanup cancelled; nothing was changed").into());
        }
    }
    let archived = lifecycle::archive(repo, status, hazards)?;
    for line in &archived.not_archived {
        output::warn(format!("not archived: {line}"));
    }
    match &archived.refname {
        Some(refname) => {
            output::note(format!("archived session \"{label}\" as {refname}"));
            output::note(crate::cli::words::creation::restore_with(label, refname));
        }
        None => output::note(format!(
            "session \"{label}\" had nothing an archive could hold"
        )),
    }
    store.audit(
        "forced-cleanup",
        serde_json::json!({"label": label, "archive": archived.refname,
                           "reasons": blockers, "not_archived": archived.not_archived}),
    );
    Ok(())
}

/// What went: the worktree (unless it was missing already), the branch, the state.
fn say_removed(status: &Status, keep_branch: bool) {
    let record = &status.record;
    let label = &record.label;
    if record.attached {
        output::note(crate::cli::words::lifecycle::unregistered(record, false));
        return;
    }
    let mut what = Vec::new();
    if !record.attached && status.state != State::Missing {
        what.push(format!("worktree {}", record.path.display()));
    }
    if !record.attached && status.tip.is_some() && !keep_branch {
        what.push(format!("branch {}", record.branch));
    }
    what.push("state".to_string());
    output::note(format!("removed session \"{label}\": {}", what.join(", ")));
    if keep_branch && status.tip.is_some() {
        output::note(format!(
            "kept branch {}: it has commits not in {}",
            record.branch, record.base
        ));
    }
}

/// A session recorded as `creating` is never removed by `cleanup`, not even with `--force`:
/// while its creator runs (or may run) the refusal names it; a creator provably gone on this
/// host has its creation rolled back (or completed) by the recovery, run again here because it
/// may have died since this command started. `Ok` only when that rolled it back: nothing of the
/// session is left to remove.
fn not_while_created(
    repo: &Repo,
    config: &Config,
    store: &crate::store::Store,
    record: &SessionRecord,
) -> Result<()> {
    let label = &record.label;
    let judged = record.creator.as_ref().map(|c| (c, c.liveness()));
    let Some((creator, liveness)) = judged.filter(|(_, l)| *l != Liveness::Dead) else {
        lifecycle::recover_interrupted(repo, config, store)?;
        return match session::load(store, label)? {
            None => {
                output::note(format!(
                    "session \"{label}\" was an interrupted creation, rolled back just now; \
                     nothing is left to remove"
                ));
                Ok(())
            }
            Some(r) if r.state != RecordState::Creating => Err(UserError::refused(format!(
                "session \"{label}\" was an interrupted creation, completed just now"
            ))
            .hinted("look at it with `git session info`, then run the cleanup again")
            .into()),
            Some(_) => Err(UserError::refused(format!(
                "the interrupted creation of session \"{label}\" cannot be rolled back yet"
            ))
            .hinted("see the messages above; run the cleanup again once that is resolved")
            .into()),
        };
    };
    let (pid, host) = (creator.pid, &creator.host);
    let err = match liveness {
        Liveness::Alive => UserError::refused(format!(
            "session \"{label}\" is being created by pid {pid} on this host ({host})"
        ))
        .hinted("wait for that `git session create` to finish, then run the cleanup again"),
        Liveness::OtherHost => UserError::refused(format!(
            "session \"{label}\" is being created on host {host} (pid {pid})"
        ))
        .hinted(format!(
            "a creation on another host is never judged or broken from here: let it finish, \
             or run the cleanup on {host}"
        )),
        Liveness::Unknown | Liveness::Dead => UserError::refused(format!(
            "session \"{label}\" is being created by pid {pid} on this host ({host}), unless \
             that pid was reused: {}",
            creator.unknown_because()
        ))
        .hinted(format!(
            "once pid {pid} has exited, the next git-session command rolls the creation back \
             or completes it; run the cleanup again then"
        )),
    };
    Err(err.into())
}

/// Whether this command was started from inside `worktree` (the user's shell stands there).
fn stands_inside(worktree: &std::path::Path) -> bool {
    let (Ok(here), Ok(tree)) = (std::env::current_dir(), std::fs::canonicalize(worktree)) else {
        return false;
    };
    std::fs::canonicalize(&here)
        .unwrap_or(here)
        .starts_with(tree)
}

/// After removing the worktree the caller stands in: the shell integration moves the shell to
/// the main worktree; without it, say where to go.
fn point_the_way_out(repo: &Repo) {
    let Some(main) = repo.main_worktree.as_deref().filter(|p| p.is_dir()) else {
        output::note("your shell stood in that worktree, which is gone now; cd elsewhere");
        return;
    };
    if !crate::cli::shell::request_cd(main) {
        output::note(format!(
            "your shell stood in that worktree, which is gone now; go back with: cd {}",
            crate::base::quote::shell_quote(&main.display().to_string())
        ));
    }
}

/// With `[claims] remote` and `[resources] ports`: the port blocks of the removed sessions are
/// withdrawn from the remote, so other clones can have them now (a remote that does not answer
/// is a warning: the next create, cleanup or prune here withdraws them). Run by `cleanup` and
/// by `merge` once its removals are done.
pub fn withdraw_shared_ports(cx: &CommandHelper) -> Result<()> {
    let config = cx.config()?;
    let Some(settings) = config
        .shared_claims()
        .filter(|_| config.resources.ports > 0)
    else {
        return Ok(());
    };
    if let Err(e) = crate::shared_claims::leases::tidy(&cx.repo, &cx.store, &settings)? {
        crate::cli::output::warn(format!(
            "the removed sessions' port blocks are still held on the remote ({e}); the next \
             create, cleanup or prune here gives them back"
        ));
    }
    Ok(())
}
