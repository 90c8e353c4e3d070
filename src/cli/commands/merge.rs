//! `git session merge [LABEL] [--keep]`: integrate a session into its base branch, then clean
//! it up as `cleanup` would.
//!
//! How it integrates is the team's `[merge] strategy` (`rebase`, the default: the session's
//! commits replayed onto the base, then the base fast-forwarded; `merge`: a merge commit;
//! `squash`: one commit). It refuses, changing nothing, when the session holds uncommitted work
//! (or anything else `cleanup` would not remove), when the base's worktree has uncommitted
//! changes, and when the integration conflicts (naming the paths). The integration itself is
//! [`crate::lifecycle::integrate`]: computed as new objects first, then carried out with
//! compare-and-swap ref moves that are undone on failure, Ctrl-C or the `[merge] timeout`. Then
//! [`crate::cli::cleaning::cleanup`] removes the session (unless `--keep`, which releases its
//! claims instead: they end with the merge either way).

use crate::base::clock;
use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::cli::user_error::UserError;
use crate::cli::words::hazards as words;
use crate::hazards::{self, Hazard};
use crate::lifecycle;
use crate::lifecycle::integrate::{self, Sides, Stopped, Target, Watch};
use crate::session::{self, State};
use anyhow::Result;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// How long a merge waits for another command removing the same session.
const OP_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Integrate a session into its base branch, then remove it (as cleanup does)
#[derive(Debug, clap::Args)]
#[command(after_help = "The team chooses how in .git-session.toml:\n  \
                        [merge]\n  \
                        strategy = \"rebase\"   # default: replay onto the base, fast-forward\n  \
                        # strategy = \"merge\"  # a merge commit\n  \
                        # strategy = \"squash\" # one commit")]
pub struct Args {
    /// Session label [default: the session of the current worktree, or GIT_SESSION]
    pub label: Option<String>,
    /// Keep the session (worktree and branch) after merging; its claims still end
    #[arg(long)]
    pub keep: bool,
}

pub fn run(args: Args) -> Result<()> {
    let cx = CommandHelper::open()?;
    let config = cx.config()?;
    cx.recover()?;
    let label = cx.given_or_acting(args.label, "git session merge LABEL")?;
    let repo = &cx.repo;
    let store = &cx.store;
    session::require(store, &label)?;
    let interrupted = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        let _ = signal_hook::flag::register(signal, Arc::clone(&interrupted));
    }
    let deadline = config.merge_timeout.to_std()?;
    let done = {
        // One change of a session at a time: a cleanup or prune of it waits for the merge.
        let Some(_op) = lifecycle::lock_session_op(store, &label, OP_WAIT)? else {
            return Err(UserError::refused(format!(
                "session \"{label}\" is busy: another git-session command is changing it"
            ))
            .hinted("run the merge again once that one has finished")
            .into());
        };
        // The deadline counts from here: waiting for the lock is no part of the merge.
        let watch = Watch {
            interrupted: &interrupted,
            started: Instant::now(),
            deadline,
        };
        integrate_one(&cx, &label, args.keep, &watch)?
    };
    output::note(done);
    if args.keep {
        let released = crate::ownership::release(repo, &label, None)?;
        if !released.is_empty() {
            output::note(format!(
                "released the {} of \"{label}\"",
                output::count(released.len(), "claim")
            ));
        }
        output::note(format!("kept session \"{label}\" (--keep)"));
        return Ok(());
    }
    crate::cli::cleaning::cleanup(
        &cx,
        crate::cli::cleaning::Cleanup {
            labels: vec![label.to_string()],
            ..Default::default()
        },
    )
}

/// Checks, computes and applies the integration of one session; returns one line saying what
/// was done (or that its base holds all of it already).
fn integrate_one(
    cx: &CommandHelper,
    label: &session::Label,
    keep: bool,
    watch: &Watch,
) -> Result<String> {
    let config = cx.config()?;
    let repo = &cx.repo;
    let record = session::require(&cx.store, label)?;
    let status = session::inspect(&repo.common_dir, record, config, clock::now())?;
    let record = &status.record;
    if record.attached {
        return Err(UserError::refused(format!(
            "session \"{label}\" is attached to a worktree it shares; it has no branch of its own \
             to merge"
        ))
        .hinted("merge that worktree's branch with git itself")
        .into());
    }
    if status.state == State::Creating {
        return Err(
            UserError::refused(format!("session \"{label}\" is still being created"))
                .hinted("wait for `git session create` to finish, then merge")
                .into(),
        );
    }
    let Some(tip) = status.tip else {
        return Err(UserError::refused(format!(
            "session \"{label}\" has no branch {} to merge",
            record.branch
        ))
        .hinted(format!(
            "`git session cleanup {label}` removes what is left of it"
        ))
        .into());
    };
    let base_ref = format!("refs/heads/{}", record.base);
    let base_tip = match repo.ref_target(&base_ref)? {
        Some(oid) if crate::git::is_valid_ref_name(&base_ref) => oid,
        _ => {
            return Err(UserError::refused(format!(
                "the base of \"{label}\" is {}, which is not a local branch to merge into",
                record.base
            ))
            .hinted(format!(
                "merge it where you want it with git (git merge {}), then `git session cleanup \
                 {label}`",
                record.branch
            ))
            .into())
        }
    };
    refuse_held_work(repo, &status, keep)?;
    let porcelain = repo.porcelain_dir().to_path_buf();
    let base_worktree = integrate::worktree_of(&porcelain, &base_ref)?;
    if let Some(wt) = &base_worktree {
        refuse_dirty_base(&record.base, wt)?;
    }
    let session_worktree =
        (status.state != State::Missing && record.path.is_dir()).then(|| record.path.clone());
    let session_ref = format!("refs/heads/{}", record.branch);
    if let Some(wt) = &session_worktree {
        // The merge may move the branch and bring the worktree along: its HEAD must be on it.
        let head = session::admin_dir_of(wt).and_then(|a| crate::git::read_head(&a).ok());
        if head != Some(crate::git::Head::Branch(session_ref.clone())) {
            return Err(UserError::refused(format!(
                "the worktree of \"{label}\" is not on its branch {}; nothing was merged",
                record.branch
            ))
            .hinted(format!(
                "check the branch out there (git -C {} switch {}), then merge again",
                crate::base::quote::shell_quote(&wt.display().to_string()),
                record.branch
            ))
            .into());
        }
    }
    let sides = Sides {
        dir: &porcelain,
        label,
        branch: &record.branch,
        base: &record.base,
        tip,
        base_tip,
    };
    let computed =
        integrate::compute(&sides, config.merge_strategy, watch).map_err(|e| stopped(e, label))?;
    let Some(computed) = computed else {
        return Ok(format!(
            "{} holds all of session \"{label}\" already; nothing to merge",
            record.base
        ));
    };
    let target = Target {
        repo_dir: porcelain.clone(),
        base_ref,
        base_worktree: base_worktree.clone(),
        base_tip,
        session_ref,
        session_worktree,
        tip,
    };
    integrate::apply(&target, &computed, label, watch).map_err(|e| stopped(e, label))?;
    let short = &computed.new_tip.to_string()[..12];
    let mut line = format!(
        "merged session \"{label}\" into {} ({}): {} is at {short}",
        record.base, computed.how, record.base
    );
    if let Some(wt) = &base_worktree {
        line.push_str(&format!("; updated the worktree {}", wt.display()));
    }
    Ok(line)
}

/// Everything `cleanup` would refuse to remove, except the commits the merge brings in (and,
/// with `--keep`, the processes working inside, which may go on).
fn refuse_held_work(repo: &crate::git::Repo, status: &session::Status, keep: bool) -> Result<()> {
    let label = &status.record.label;
    let found = hazards::inspect(repo, status);
    let held: Vec<&Hazard> = found
        .items
        .iter()
        .filter(|h| !matches!(h, Hazard::Unmerged { .. }))
        .filter(|h| !(keep && matches!(h, Hazard::Occupied(_))))
        .collect();
    if held.is_empty() {
        return Ok(());
    }
    let uncommitted = held
        .iter()
        .all(|h| matches!(h, Hazard::Dirty(_) | Hazard::Operation(_)));
    let occupied = held.iter().all(|h| matches!(h, Hazard::Occupied(_)));
    let mut err = if uncommitted {
        UserError::refused(format!(
            "session \"{label}\" holds uncommitted work; nothing was merged"
        ))
    } else if occupied {
        UserError::refused(format!(
            "session \"{label}\" is in use: other processes work inside its worktree; nothing \
             was merged"
        ))
    } else {
        UserError::refused(format!(
            "session \"{label}\" holds work the merge would not carry; nothing was merged"
        ))
    };
    for h in &held {
        for line in words::lines(h) {
            err = err.detail(line);
        }
    }
    let hint = if uncommitted {
        format!(
            "commit it (or stash it) in {}, then merge again",
            crate::base::quote::shell_quote(&status.record.path.display().to_string())
        )
    } else if occupied {
        "stop those processes or move them out of the worktree, or merge with --keep to keep \
         the session"
            .to_string()
    } else {
        words::hint(&found, &status.record.path)
    };
    Err(err.hinted(hint).into())
}

fn refuse_dirty_base(base: &str, worktree: &std::path::Path) -> Result<()> {
    let changed = integrate::changed_files(worktree)?;
    let operations = session::admin_dir_of(worktree)
        .map(|admin| crate::git::operations(&admin))
        .unwrap_or_default();
    if changed.is_empty() && operations.is_empty() {
        return Ok(());
    }
    let mut err = UserError::refused(format!(
        "the worktree of {base} has uncommitted changes; nothing was merged"
    ))
    .detail(format!("in {}:", worktree.display()));
    for op in &operations {
        err = err.detail(format!("a {} is in progress", op.as_str()));
    }
    for file in changed.iter().take(10) {
        err = err.detail(crate::base::quote::show_path(file));
    }
    if changed.len() > 10 {
        err = err.detail(format!("... and {} more", changed.len() - 10));
    }
    Err(err
        .hinted(format!(
            "commit or stash them there first (git -C {} stash), then merge again",
            crate::base::quote::shell_quote(&worktree.display().to_string())
        ))
        .into())
}

/// Ctrl-C and the deadline as the user reads them: nothing was changed.
fn stopped(e: anyhow::Error, label: &str) -> anyhow::Error {
    match e.downcast_ref::<Stopped>() {
        Some(Stopped::Interrupted) => UserError::refused(format!(
            "merging session \"{label}\" was interrupted; rolled back, nothing was changed"
        ))
        .into(),
        Some(Stopped::TimedOut(d)) => UserError::refused(format!(
            "merging session \"{label}\" did not finish within {}s; rolled back, nothing was \
             changed",
            d.as_secs()
        ))
        .hinted("raise `[merge] timeout` in .git-session.toml if the repository needs longer")
        .into(),
        None => e,
    }
}
