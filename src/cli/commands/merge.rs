//! `git session merge [LABEL...] [--all] [--keep] [--no-check] [--dry-run] [--json]`: integrate
//! sessions into their base branch, then clean each up as `cleanup` would.
//!
//! How it integrates is the team's `[merge] strategy` (`rebase`, the default: the session's
//! commits replayed onto the base, then the base fast-forwarded; `merge`: a merge commit;
//! `squash`: one commit). It refuses, changing nothing, when the session holds uncommitted work
//! (or anything else `cleanup` would not remove), when the base's worktree has uncommitted
//! changes in files the merge changes, when the integration conflicts (naming the paths), and
//! when a `[merge] check` command fails on the integrated result (run in a scratch worktree before
//! the base moves). The transaction is [`crate::lifecycle::merge`], the integration itself
//! [`crate::lifecycle::integrate`], the check [`crate::lifecycle::merge_check`]: computed as new
//! objects first, then carried out with compare-and-swap ref moves that are undone on failure,
//! Ctrl-C or the `[merge] timeout`; a merge that another merge beat to the base makes its result
//! again once. Then [`crate::cli::cleaning::cleanup`] removes the session (unless `--keep`, which
//! releases its claims instead: they end with the merge either way; or processes work inside it,
//! which keeps it and says so).
//!
//! With `--all` or several labels it is a batch ([`crate::lifecycle::merge_batch`]): in creation
//! order, each session onto the result of the one before, a session not ready or refused skipped
//! and the batch going on, one summary line each (`--json`: one object each). Its exit code is 0
//! when every session tried was merged or had nothing to merge, 1 when any was skipped.

use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::cli::words::merging as words;
use crate::lifecycle::merge::{self, MergeOptions, Merged};
use crate::lifecycle::merge_batch;
use crate::session::Label;
use anyhow::Result;

/// Integrate sessions into their base branch, then remove them (as cleanup does)
#[derive(Debug, clap::Args)]
#[command(after_help = "The team chooses how in .git-session.toml:\n  \
                        [merge]\n  \
                        strategy = \"rebase\"   # default: replay onto the base, fast-forward\n  \
                        # strategy = \"merge\"  # a merge commit\n  \
                        # strategy = \"squash\" # one commit\n  \
                        # check = [\"cargo test --locked\"]  # run on the result first\n  \
                        # check_timeout = \"30m\"\n  \
                        # union = [\"CHANGELOG.md\"]  # both sides' added lines, once\n  \
                        # regenerate = { \"Cargo.lock\" = \"cargo generate-lockfile\" }")]
pub struct Args {
    /// Session labels [default: the session of the current worktree, or GIT_SESSION]
    pub labels: Vec<String>,
    /// Every session ready to merge (committed, clean, nobody inside), oldest first
    #[arg(long, conflicts_with = "labels")]
    pub all: bool,
    /// Keep the sessions (worktree and branch) after merging; their claims still end
    #[arg(long)]
    pub keep: bool,
    /// Skip the `[merge] check` commands (recorded in the audit log)
    #[arg(long)]
    pub no_check: bool,
    /// Approve the `[merge] check` commands of the repository's .git-session.toml
    #[arg(long)]
    pub approve_check: bool,
    /// Compute (and check) every merge, move nothing
    #[arg(long)]
    pub dry_run: bool,
    /// One JSON object per session on stdout
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> Result<()> {
    let cx = CommandHelper::open()?;
    let config = cx.config()?;
    cx.recover()?;
    let options = MergeOptions {
        no_check: args.no_check,
        approve_check: args.approve_check,
        dry_run: args.dry_run,
        onto: None,
        answers: None,
    };
    if args.all || args.labels.len() > 1 || args.dry_run || args.json {
        return batch(&cx, &args, options);
    }
    let label = cx.given_or_acting(args.labels.first().cloned(), "git session merge LABEL")?;
    let merged = merge::merge(&cx.repo, &cx.store, config, &label, options)?;
    for line in words::checked_and_recomputed(&merged) {
        output::note(line);
    }
    output::note(words::merged(&label, &merged));
    after(&cx, &label, &merged, args.keep)?;
    if !args.keep {
        crate::cli::cleaning::withdraw_shared_ports(&cx)?;
    }
    Ok(())
}

/// What follows a merge: the session removed, or kept (`--keep`, or processes inside) with its
/// claims released.
fn after(cx: &CommandHelper, label: &Label, merged: &Merged, keep: bool) -> Result<()> {
    let occupied = match merged {
        Merged::Done { occupied, .. } => occupied.as_slice(),
        Merged::AlreadyIn { .. } => &[],
        Merged::Planned(_) => return Ok(()),
    };
    if !keep && occupied.is_empty() {
        return crate::cli::cleaning::cleanup(
            cx,
            crate::cli::cleaning::Cleanup {
                labels: vec![label.to_string()],
                ..Default::default()
            },
        );
    }
    let released = crate::ownership::release(&cx.repo, label, None)?;
    if !released.is_empty() {
        output::note(format!(
            "released the {} of \"{label}\"",
            output::count(released.len(), "claim")
        ));
    }
    if keep {
        output::note(format!("kept session \"{label}\" (--keep)"));
    } else {
        let (lines, hint) = words::kept_occupied(label, occupied);
        for line in lines {
            output::note(line);
        }
        output::hint(hint);
    }
    Ok(())
}

fn batch(cx: &CommandHelper, args: &Args, options: MergeOptions<'_>) -> Result<()> {
    let config = cx.config()?;
    let labels: Option<Vec<Label>> = if args.all {
        None
    } else if args.labels.is_empty() {
        Some(vec![cx.given_or_acting(None, "git session merge LABEL")?])
    } else {
        Some(
            args.labels
                .iter()
                .map(|l| Label::new(l))
                .collect::<Result<_, _>>()?,
        )
    };
    let progress = crate::cli::merge_progress::BatchProgress::on_terminal();
    let observer: &dyn merge_batch::Observer = match &progress {
        Some(p) => p,
        None => &merge_batch::Quiet,
    };
    let items = merge_batch::merge_all(
        &cx.repo,
        &cx.store,
        config,
        labels.as_deref(),
        options,
        observer,
    )?;
    drop(progress);
    for item in &items {
        if let Ok(merged @ Merged::Done { .. }) = &item.outcome {
            // The merge stands whatever its cleanup says; a cleanup that refuses is said.
            if let Err(e) = after(cx, &item.label, merged, args.keep) {
                crate::cli::report::report(&e);
            }
        }
    }
    // The removed sessions' port blocks leave the claims remote in one fetch and one push.
    if !args.keep
        && items
            .iter()
            .any(|i| matches!(i.outcome, Ok(Merged::Done { .. })))
    {
        crate::cli::cleaning::withdraw_shared_ports(cx)?;
    }
    let mut skipped = false;
    let mut json = Vec::new();
    for item in &items {
        skipped |= item.outcome.is_err();
        if args.json {
            json.push(words::batch_json(item));
        } else {
            output::note(words::batch_line(item));
        }
    }
    if args.json {
        output::json(&serde_json::Value::Array(json))?;
    }
    if items.is_empty() {
        output::note("no session to merge");
    }
    if skipped {
        return Err(crate::cli::user_error::UserError::refused(format!(
            "{} of {} not merged",
            output::count(
                items.iter().filter(|i| i.outcome.is_err()).count(),
                "session"
            ),
            items.len()
        ))
        .into());
    }
    Ok(())
}
