//! `git session cleanup`: remove sessions whose work is safe elsewhere. The removal itself is
//! [`crate::cli::cleaning`] (shared with `merge` and `worktree-hook remove`):
//!
//! What would be lost is decided by [`crate::hazards::inspect`] (the branch, the worktree's own
//! HEAD, operations in progress, files, submodules, processes) and nothing is removed while it
//! reports anything. `--force` overrides those, but only after [`crate::lifecycle::archive`] has
//! written an archive ref holding all of it, and only then does `git worktree remove` get
//! `--force`: without it, git's own refusals stand. A worktree that cannot be judged (a broken
//! `.git` link) and a locked worktree are never removed, not even with `--force`.

use crate::cli::cleaning::{self, Cleanup};
use crate::cli::helper::CommandHelper;
use anyhow::Result;
/// Remove sessions: worktree, branch and state (refuses while work would be lost)
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Sessions to remove [default: the session of the current worktree]
    pub labels: Vec<String>,
    /// Remove even with unmerged commits, uncommitted files or processes inside, after writing
    /// an archive ref that holds all of it
    #[arg(long)]
    pub force: bool,
    /// Do not ask for confirmation (with --force on a terminal)
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Say what would be removed, remove nothing
    #[arg(long, short = 'n')]
    pub dry_run: bool,
}

pub fn run(args: Args) -> Result<()> {
    let cx = CommandHelper::open()?;
    let dry_run = args.dry_run;
    cleaning::cleanup(
        &cx,
        Cleanup {
            labels: args.labels,
            force: args.force,
            yes: args.yes,
            dry_run,
        },
    )?;
    if !dry_run {
        cleaning::withdraw_shared_ports(&cx)?;
    }
    Ok(())
}
