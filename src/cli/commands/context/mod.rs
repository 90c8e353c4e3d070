//! `git session context hook | status | wrapped-up | install`: the command line of the
//! context-threshold hook and its companions.
//!
//! The domain (`crate::context`) decides: the hook's answer, the status report, the merged
//! settings file. These commands read stdin and arguments, call it, and print: [`render`]
//! words what the hook answers, [`status`] prints reports, [`install`] says what it installed.
//! Their refusals are worded in `cli::words::context_status` and `cli::words::context_install`.

mod hook;
mod install;
pub mod render;
mod status;

pub use install::InstallArgs;
pub use status::{StatusArgs, WrappedUpArgs};

use anyhow::Result;

/// The context-threshold hook and its companions
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(Debug, clap::Subcommand)]
pub enum Sub {
    /// The Claude Code / Codex / Gemini CLI hook: reads the hook JSON on stdin (PostToolUse,
    /// PreToolUse, UserPromptSubmit, PostCompact, SessionStart, PreCompact; Gemini's AfterTool,
    /// BeforeTool, BeforeAgent); always exits 0
    Hook,
    /// Context fill, window and its source, thresholds fired, wrap-up, compactions
    Status(StatusArgs),
    /// Record that the wrap-up is done: the 90 % and 95 % alerts stay silent until a compaction
    WrappedUp(WrappedUpArgs),
    /// Merge the hook configuration into .claude/settings.json (or the user's settings)
    Install(InstallArgs),
}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        Sub::Hook => hook::run(),
        Sub::Status(a) => status::run_status(a),
        Sub::WrappedUp(a) => status::run_wrapped_up(a),
        Sub::Install(a) => install::run(a),
    }
}

/// Largest payload read from stdin (a Write of a huge file carries its content).
const MAX_INPUT: u64 = 64 * 1024 * 1024;
