//! `git session merge [LABEL] [--keep] [--no-check]`: integrate a session into its base branch,
//! then clean it up as `cleanup` would.
//!
//! How it integrates is the team's `[merge] strategy` (`rebase`, the default: the session's
//! commits replayed onto the base, then the base fast-forwarded; `merge`: a merge commit;
//! `squash`: one commit). It refuses, changing nothing, when the session holds uncommitted work
//! (or anything else `cleanup` would not remove), when the base's worktree has uncommitted
//! changes, when the integration conflicts (naming the paths), and when a `[merge] check`
//! command fails on the integrated result (run in a scratch worktree before the base moves). The
//! transaction is [`crate::lifecycle::merge`], the integration itself
//! [`crate::lifecycle::integrate`], the check [`crate::lifecycle::merge_check`]: computed as new
//! objects first, then carried out with compare-and-swap ref moves that are undone on failure,
//! Ctrl-C or the `[merge] timeout`; a merge that another merge beat to the base makes its result
//! again once. Then [`crate::cli::cleaning::cleanup`] removes the session (unless `--keep`, which
//! releases its claims instead: they end with the merge either way).

use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::cli::words::merging as words;
use crate::lifecycle::merge::{self, MergeOptions};
use anyhow::Result;

/// Integrate a session into its base branch, then remove it (as cleanup does)
#[derive(Debug, clap::Args)]
#[command(after_help = "The team chooses how in .git-session.toml:\n  \
                        [merge]\n  \
                        strategy = \"rebase\"   # default: replay onto the base, fast-forward\n  \
                        # strategy = \"merge\"  # a merge commit\n  \
                        # strategy = \"squash\" # one commit\n  \
                        # check = [\"cargo test --locked\"]  # run on the result first\n  \
                        # check_timeout = \"30m\"")]
pub struct Args {
    /// Session label [default: the session of the current worktree, or GIT_SESSION]
    pub label: Option<String>,
    /// Keep the session (worktree and branch) after merging; its claims still end
    #[arg(long)]
    pub keep: bool,
    /// Skip the `[merge] check` commands (recorded in the audit log)
    #[arg(long)]
    pub no_check: bool,
    /// Approve the `[merge] check` commands of the repository's .git-session.toml
    #[arg(long)]
    pub approve_check: bool,
}

pub fn run(args: Args) -> Result<()> {
    let cx = CommandHelper::open()?;
    let config = cx.config()?;
    cx.recover()?;
    let label = cx.given_or_acting(args.label, "git session merge LABEL")?;
    let repo = &cx.repo;
    let options = MergeOptions {
        keep: args.keep,
        no_check: args.no_check,
        approve_check: args.approve_check,
    };
    let merged = merge::merge(repo, &cx.store, config, &label, options)?;
    for line in words::checked_and_recomputed(&merged) {
        output::note(line);
    }
    output::note(words::merged(&label, &merged));
    let occupied = match &merged {
        merge::Merged::Done { occupied, .. } => occupied.as_slice(),
        merge::Merged::AlreadyIn { .. } => &[],
    };
    if args.keep || !occupied.is_empty() {
        let released = crate::ownership::release(repo, &label, None)?;
        if !released.is_empty() {
            output::note(format!(
                "released the {} of \"{label}\"",
                output::count(released.len(), "claim")
            ));
        }
        if args.keep {
            output::note(format!("kept session \"{label}\" (--keep)"));
        } else {
            let (lines, hint) = words::kept_occupied(&label, occupied);
            for line in lines {
                output::note(line);
            }
            output::hint(hint);
        }
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
