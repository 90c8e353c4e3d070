//! `git session context hook | status | wrapped-up | install`.

use crate::context::{agent::Scope, hook, install, status};
use crate::error::UserError;
use crate::git::Repo;
use crate::output;
use crate::store::Store;
use anyhow::Result;
use std::io::Read;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The context-threshold hook and its companions
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(Debug, clap::Subcommand)]
pub enum Sub {
    /// The Claude Code / Codex hook: reads the hook JSON on stdin (PostToolUse, PreToolUse,
    /// PreCompact, SessionStart); always exits 0
    Hook,
    /// Context fill, window and its source, thresholds fired, wrap-up, compactions
    Status(StatusArgs),
    /// Record that the wrap-up is done: the 90 % and 95 % alerts stay silent until a compaction
    WrappedUp(WrappedUpArgs),
    /// Merge the hook configuration into .claude/settings.json (or the user's settings)
    Install(InstallArgs),
}

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Print one JSON object (stable keys; see README)
    #[arg(long)]
    pub json: bool,
    /// The agent session to show [default: the most recently active one linked to the current
    /// session]
    #[arg(long, value_name = "ID", conflicts_with_all = ["transcript", "stdin"])]
    pub agent_session: Option<String>,
    /// Any transcript file (Claude Code .jsonl or Codex rollout)
    #[arg(long, value_name = "PATH", conflicts_with = "stdin")]
    pub transcript: Option<PathBuf>,
    /// Read a hook or statusline JSON payload (session_id, transcript_path) from stdin
    #[arg(long)]
    pub stdin: bool,
}

#[derive(Debug, clap::Args)]
pub struct WrappedUpArgs {
    /// How much of the wrap-up was done
    #[arg(long, value_enum, default_value = "full")]
    pub scope: Scope,
    /// The agent session [default: the most recently active one linked to the current session]
    #[arg(long, value_name = "ID")]
    pub agent_session: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// Install into the user's ~/.claude/settings.json instead of the project's
    #[arg(long)]
    pub user: bool,
    /// Print the resulting settings file and change nothing
    #[arg(long)]
    pub dry_run: bool,
}

pub fn run(args: Args) -> Result<()> {
    match args.command {
        Sub::Hook => run_hook(),
        Sub::Status(a) => run_status(a),
        Sub::WrappedUp(a) => run_wrapped_up(a),
        Sub::Install(a) => run_install(a),
    }
}

/// The whole hook call, stdin included, finishes within this or exits 0 silently.
const HOOK_BUDGET: Duration = Duration::from_millis(900);

/// Largest payload read (a Write of a huge file carries its content).
const MAX_INPUT: u64 = 64 * 1024 * 1024;

/// Held while the answer is written, so the watchdog never cuts a JSON answer in half.
static OUTPUT: Mutex<()> = Mutex::new(());
static HOOK_STORE: OnceLock<Store> = OnceLock::new();

fn run_hook() -> Result<()> {
    std::thread::spawn(|| {
        std::thread::sleep(HOOK_BUDGET);
        let _held = OUTPUT.lock();
        if let Some(store) = HOOK_STORE.get() {
            store.audit(
                "context-hook-failed",
                serde_json::json!({"error": format!(
                    "did not finish within {} ms; gave up", HOOK_BUDGET.as_millis())}),
            );
        }
        std::process::exit(0);
    });
    let mut input = Vec::new();
    let _ = std::io::stdin().take(MAX_INPUT).read_to_end(&mut input);
    let answer = crate::failsafe::fail_open(
        "context-hook",
        || HOOK_STORE.get().cloned(),
        || {
            hook::run(&input, &|store| {
                let _ = HOOK_STORE.set(store.clone());
            })
        },
    )
    .flatten();
    if let Some(text) = answer {
        let _held = OUTPUT.lock();
        // A closed stdout is the agent's business; the hook still exits 0.
        let _ = output::line(text);
    }
    Ok(())
}

fn run_status(args: StatusArgs) -> Result<()> {
    let which = if let Some(id) = args.agent_session {
        status::Which::Agent(id)
    } else if let Some(path) = args.transcript {
        status::Which::Transcript(path)
    } else if args.stdin {
        let mut input = Vec::new();
        std::io::stdin().take(MAX_INPUT).read_to_end(&mut input)?;
        let payload = hook::Payload::parse(&input).map_err(|e| {
            UserError::usage(format!("--stdin: {e:#}"))
                .hinted("pipe the JSON a hook or statusline command receives")
        })?;
        status::Which::Payload(Box::new(payload))
    } else {
        status::Which::Current
    };
    let report = status::report(which)?;
    if args.json {
        Ok(output::json(&report.to_json())?)
    } else {
        Ok(output::line(report.line())?)
    }
}

fn run_wrapped_up(args: WrappedUpArgs) -> Result<()> {
    let state = status::wrapped_up(args.agent_session.as_deref(), args.scope)?;
    output::note(format!(
        "recorded the {} wrap-up of agent session {}{}; the higher thresholds stay silent until \
         the next compaction",
        args.scope.as_str(),
        state.agent_session,
        state
            .label
            .as_deref()
            .map(|l| format!(" (session {l})"))
            .unwrap_or_default()
    ));
    Ok(())
}

fn run_install(args: InstallArgs) -> Result<()> {
    let path = if args.user {
        install::user_settings()?
    } else {
        let repo = Repo::require()?;
        let root = repo.current_worktree.clone().ok_or_else(|| {
            UserError::refused("this repository has no working tree")
                .hinted("install into the user's settings with --user")
        })?;
        root.join(".claude").join("settings.json")
    };
    let outcome = install::install(&path, args.dry_run)?;
    if args.dry_run {
        output::line(outcome.text.trim_end())?;
        if !outcome.added.is_empty() {
            output::note(format!(
                "dry run: would add the hook for {} to {}",
                outcome.added.join(", "),
                outcome.path.display()
            ));
        }
        return Ok(());
    }
    if outcome.added.is_empty() {
        output::note(format!(
            "the context hook is already installed in {}",
            outcome.path.display()
        ));
    } else {
        output::note(format!(
            "installed the context hook for {} into {}",
            outcome.added.join(", "),
            outcome.path.display()
        ));
    }
    Ok(())
}
