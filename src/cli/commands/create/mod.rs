//! `git session create`: a new worktree on a new branch, as one transaction.
//!
//! This file reads the arguments; the transaction (the `creating` record, git's worktree lock,
//! `git worktree add`, the setup, the rollback of a failed or interrupted creation) is
//! [`crate::lifecycle::create`], and [`crate::cli::creating`] calls it and reports (the path
//! printed, warnings), for this command and Claude Code's `worktree-hook create` alike.

use crate::cli::creating::{self, Creation};
use crate::cli::helper::CommandHelper;
use anyhow::Result;
use std::path::PathBuf;

/// Create a session: a worktree on a new branch session/<LABEL>; prints its path
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  cd \"$(git session create fix-login)\"\n  \
                      git session create fix-login -- claude")]
pub struct Args {
    /// Session label (A-Z a-z 0-9 . _ - /); generated when omitted
    pub label: Option<String>,
    /// Revision to start from [default: the repository's main branch, or `base` in config]
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// Worktree directory [default: <worktrees_dir>/<LABEL>]
    #[arg(long, value_name = "DIR")]
    pub path: Option<PathBuf>,
    /// Register a session in the current worktree instead of creating one
    #[arg(long, conflicts_with_all = ["path", "base"])]
    pub attach: bool,
    /// Deadline for `git worktree add`, such as 30s or 5m [default: create_timeout, 300s]
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Approve the repository's `[create] run` commands (asked once on a terminal otherwise)
    #[arg(long)]
    pub approve_run: bool,
    /// After `--`: a command to run inside the new worktree with GIT_SESSION=<LABEL> set (it
    /// replaces this process, so its signals and exit status are the command's own). With no
    /// LABEL before `--`, a label is generated. A command that cannot start leaves no session.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<std::ffi::OsString>,
}

pub fn run(args: Args) -> Result<()> {
    let cx = CommandHelper::open()?;
    // Everything after `--` is the command, its first word too: a label goes before `--`.
    creating::create(
        &cx,
        Creation {
            label: args.label,
            base: args.base,
            path: args.path,
            attach: args.attach,
            timeout: args.timeout,
            approve_run: args.approve_run,
            command: args.command,
        },
    )
}
