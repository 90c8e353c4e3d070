//! `git session merge [LABEL] [--keep]`: integrate a session into its base branch, then clean
//! it up as `cleanup` would.
//!
//! How it integrates is the team's `[merge] strategy` (`rebase`, the default: the session's
//! commits replayed onto the base, then the base fast-forwarded; `merge`: a merge commit;
//! `squash`: one commit). It refuses, changing nothing, when the session holds uncommitted work
//! (or anything else `cleanup` would not remove), when the base's worktree has uncommitted
//! changes, and when the integration conflicts (naming the paths). The transaction is
//! [`crate::lifecycle::merge`], the integration itself [`crate::lifecycle::integrate`]: computed as new objects first, then carried out with
//! compare-and-swap ref moves that are undone on failure, Ctrl-C or the `[merge] timeout`. Then
//! [`crate::cli::cleaning::cleanup`] removes the session (unless `--keep`, which releases its
//! claims instead: they end with the merge either way).

use crate::cli::helper::CommandHelper;
use crate::cli::output;
use crate::cli::words::merging as words;
use crate::lifecycle::merge;
use anyhow::Result;

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
    let merged = merge::merge(repo, &cx.store, config, &label, args.keep)?;
    output::note(words::merged(&label, &merged));
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
