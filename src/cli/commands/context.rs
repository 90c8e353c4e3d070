//! `git session context hook | status | wrapped-up | install`.

use crate::cli::error::UserError;
use crate::cli::output;
use crate::context::{agent::Scope, hook, install, payload, status};
use crate::store::Store;
use anyhow::{Context, Result};
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
    /// Read a hook or statusline JSON payload from stdin (its context_window numbers win and
    /// are remembered); always exits 0, printing an "unknown" form when nothing is known
    #[arg(long)]
    pub stdin: bool,
    /// One short line for a statusline: label and fill of the compaction point
    #[arg(long, conflicts_with = "json")]
    pub short: bool,
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
    #[arg(long, conflicts_with = "local")]
    pub user: bool,
    /// Install into the project's git-ignored .claude/settings.local.json (this machine only)
    #[arg(long)]
    pub local: bool,
    /// Install Codex's hooks into the repository's .codex/hooks.json instead
    #[arg(long, conflicts_with_all = ["local", "user"])]
    pub codex: bool,
    /// Install Gemini CLI's hooks into the repository's .gemini/settings.json instead
    #[arg(long, conflicts_with_all = ["local", "user", "codex"])]
    pub gemini: bool,
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

/// The whole hook call, stdin included, finishes within this or exits 0 silently (see
/// [`crate::context::hook::budget`]).
fn hook_budget() -> Duration {
    crate::context::hook::budget()
}

/// Largest payload read (a Write of a huge file carries its content).
const MAX_INPUT: u64 = 64 * 1024 * 1024;

/// Held while the answer is written, so the watchdog never cuts a JSON answer in half.
static OUTPUT: Mutex<()> = Mutex::new(());
static HOOK_STORE: OnceLock<Store> = OnceLock::new();

fn run_hook() -> Result<()> {
    let budget = hook_budget();
    std::thread::spawn(move || {
        std::thread::sleep(budget);
        let _held = OUTPUT.lock();
        if let Some(store) = HOOK_STORE.get() {
            store.audit(
                "context-hook-failed",
                serde_json::json!({"error": format!(
                    "did not finish within {} ms; gave up", budget.as_millis())}),
            );
        }
        std::process::exit(0);
    });
    let mut input = Vec::new();
    let _ = std::io::stdin().take(MAX_INPUT).read_to_end(&mut input);
    let answer = crate::cli::failsafe::fail_open(
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
    if args.stdin {
        // A statusline that exits non-zero goes blank: every failure prints the unknown form.
        let report = (|| -> Result<status::Report> {
            let mut input = Vec::new();
            std::io::stdin().take(MAX_INPUT).read_to_end(&mut input)?;
            let payload = payload::Payload::parse(&input)?;
            status::report(status::Which::Payload(Box::new(payload)))
        })();
        let text = match (&report, args.json, args.short) {
            (Ok(r), true, _) => serde_json::to_string_pretty(&r.to_json())?,
            (Ok(r), false, true) => r.short(),
            (Ok(r), false, false) => r.line(),
            (Err(_), true, _) => serde_json::to_string_pretty(&serde_json::json!({
                "version": output::JSON_VERSION, "tokens": null, "percent": null,
                "budget_percent": null}))?,
            (Err(_), false, true) => status::unknown_short(),
            (Err(e), false, false) => format!("context unknown ({e:#})"),
        };
        let _ = output::line(text);
        return Ok(());
    }
    let which = if let Some(id) = args.agent_session {
        status::Which::Agent(id)
    } else if let Some(path) = args.transcript {
        status::Which::Transcript(path)
    } else {
        status::Which::Current
    };
    let report = status::report(which)?;
    if args.json {
        Ok(output::json(&report.to_json())?)
    } else if args.short {
        Ok(output::line(report.short())?)
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
    let mut project: Option<(crate::git::Repo, std::path::PathBuf)> = None;
    let path = if args.user {
        install::user_settings()?
    } else {
        let repo = crate::cli::helper::CommandHelper::open()?.repo;
        // The main worktree's file, also when run inside a session's worktree: installing must
        // not make that session dirty, and sessions created later branch from what is
        // committed there.
        let root = repo
            .main_worktree
            .clone()
            .or_else(|| repo.current_worktree.clone())
            .ok_or_else(|| {
                UserError::refused("this repository has no working tree")
                    .hinted("install into the user's settings with --user")
            })?;
        let path = if args.codex {
            root.join(".codex").join("hooks.json")
        } else if args.gemini {
            root.join(".gemini").join("settings.json")
        } else if args.local {
            root.join(".claude").join("settings.local.json")
        } else {
            root.join(".claude").join("settings.json")
        };
        project = Some((repo, root));
        path
    };
    let agent = if args.codex {
        install::Agent::Codex
    } else if args.gemini {
        install::Agent::Gemini
    } else {
        install::Agent::Claude
    };
    let outcome = install::install_for(agent, &path, args.dry_run)?;
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
        if args.codex {
            output::note(
                "Codex runs project hooks only once trusted: review and trust them with /hooks in \
                 Codex (a changed hook needs trusting again)",
            );
        }
        if args.gemini {
            output::note(
                "Gemini CLI warns before it first runs a new or changed project hook; \
                 `/hooks panel` in Gemini CLI lists them",
            );
        }
    }
    if let Some((repo, root)) = project {
        make_hooks_load(&repo, &root, agent, &outcome.path, args.local)?;
    }
    Ok(())
}

/// After a project install: makes the hooks load in every session worktree where this command
/// can (Codex: the `.codex/` directory it needs), and says plainly what the user must do where
/// it cannot (commit the file; a session created before that needs it merged in).
fn make_hooks_load(
    repo: &crate::git::Repo,
    root: &std::path::Path,
    agent: install::Agent,
    file: &std::path::Path,
    local: bool,
) -> Result<()> {
    use crate::context::loading;
    let rel = file.strip_prefix(root).unwrap_or(file).to_path_buf();
    // A project file Claude Code and Gemini CLI read from the worktree they run in: sessions
    // branch from what is committed, so an uncommitted file reaches none of them.
    if agent != install::Agent::Codex && !local {
        let changed = crate::git::git_ok(
            root,
            [
                std::ffi::OsStr::new("status"),
                "--porcelain".as_ref(),
                "--".as_ref(),
                rel.as_os_str(),
            ],
        )
        .map(|s| !s.trim().is_empty())
        .unwrap_or(true);
        if changed {
            output::note(format!(
                "commit {} in {}: {} reads its hooks from the worktree it runs in, and a \
                 session's worktree has what was committed when it was created",
                rel.display(),
                root.display(),
                agent.name()
            ));
        }
    }
    let store = repo.store();
    let mut made = Vec::new();
    let mut silent = Vec::new();
    for record in crate::session::load_all(&store)? {
        let wt = &record.path;
        if !wt.is_dir() || loading_same(wt, root) {
            continue;
        }
        if agent == install::Agent::Codex && !wt.join(".codex").exists() {
            // An empty directory: git tracks none, so the session stays clean.
            std::fs::create_dir(wt.join(".codex"))
                .with_context(|| format!("creating {}", wt.join(".codex").display()))?;
            made.push(record.label.to_string());
        }
        if let Some(h) = loading::hook_load(agent, Some(root), wt).filter(|h| !h.loads) {
            silent.push(format!("{}: {}", record.label, loading::describe(&h)));
        }
    }
    if !made.is_empty() {
        output::note(format!(
            "made .codex/ in the worktree of {}: Codex reads the main worktree's hooks for a \
             session only when its worktree has one",
            made.join(", ")
        ));
    }
    if agent == install::Agent::Codex {
        output::note(
            "Codex skips project hooks that are not trusted, without a word: trust them once with \
             /hooks in Codex",
        );
    }
    for line in silent {
        output::warn(format!("hooks will not load in session {line}"));
    }
    Ok(())
}

fn loading_same(a: &std::path::Path, b: &std::path::Path) -> bool {
    let c = |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    c(a) == c(b)
}
