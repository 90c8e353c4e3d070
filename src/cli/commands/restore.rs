//! `git session restore LABEL [ARCHIVE]`: a session given back from the archive a forced
//! `cleanup` or `prune` wrote: its worktree, its branch at the archived tip, its files as they
//! were (uncommitted and untracked ones included) and its record with the base it had. The
//! transaction is [`crate::lifecycle::restore`]; [`crate::cli::creating::restore`] reports it.

use crate::cli::creating;
use crate::cli::helper::CommandHelper;
use crate::session::Label;
use anyhow::Result;

/// Give a removed session back from its archive (worktree, branch, files and record)
#[derive(Debug, clap::Args)]
#[command(after_help = "Example: git session restore fix-login")]
pub struct Args {
    /// Session label
    pub label: String,
    /// Which archive: its stamp (as `cleanup --force` printed it) or full ref [default: the
    /// newest]
    pub archive: Option<String>,
    /// Deadline for `git worktree add`, such as 30s or 5m [default: create_timeout, 300s]
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Approve the repository's `[create] run` commands (asked once on a terminal otherwise)
    #[arg(long)]
    pub approve_run: bool,
}

pub fn run(args: Args) -> Result<()> {
    let label = Label::new(&args.label)?;
    let cx = CommandHelper::open()?;
    creating::restore(
        &cx,
        &label,
        args.archive.as_deref(),
        args.timeout.as_deref(),
        args.approve_run,
    )
}
