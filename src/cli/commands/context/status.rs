//! `git session context status` and `context wrapped-up`: the domain computes the report or
//! records the wrap-up (`crate::context::agent_status`); these print it, in one line, the
//! statusline form, or JSON (stable keys, `version` first).
//!
//! Invariant: `status --stdin` always exits 0 and prints something (an "unknown" form when
//! nothing is known): a statusline that exits non-zero goes blank.

use super::render::group;
use super::MAX_INPUT;
use crate::base::clock;
use crate::cli::output;
use crate::context::agent::Scope;
use crate::context::{agent_status, payload};
use anyhow::Result;
use serde_json::{json, Value};
use std::io::Read;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Print one JSON object (stable keys; see docs/json.md)
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
    /// One short line for a statusline: label and fill of the compaction point, and how many
    /// other sessions wait for a permission or input
    #[arg(long, conflicts_with = "json")]
    pub short: bool,
}

#[derive(Debug, clap::Args)]
pub struct WrappedUpArgs {
    /// How much of the wrap-up was done
    #[arg(long, value_enum, default_value = "full")]
    pub scope: ScopeArg,
    /// The agent session [default: the most recently active one linked to the current session]
    #[arg(long, value_name = "ID")]
    pub agent_session: Option<String>,
}

/// How much of the wrap-up was done (`--scope`; the domain's [`Scope`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ScopeArg {
    /// Tier 1 only: commit, memory and status, kickoff note; the rest deferred.
    Essential,
    /// The whole wrap-up.
    Full,
}

impl From<ScopeArg> for Scope {
    fn from(s: ScopeArg) -> Scope {
        match s {
            ScopeArg::Essential => Scope::Essential,
            ScopeArg::Full => Scope::Full,
        }
    }
}

pub(super) fn run_status(args: StatusArgs) -> Result<()> {
    if args.stdin {
        // A statusline that exits non-zero goes blank: every failure prints the unknown form.
        let short_form = args.short && !args.json;
        let mut waiting = None;
        let report = (|| -> Result<agent_status::Report> {
            let mut input = Vec::new();
            std::io::stdin().take(MAX_INPUT).read_to_end(&mut input)?;
            let payload = payload::Payload::parse(&input)?;
            let which = agent_status::Which::Payload(Box::new(payload));
            if short_form {
                let (report, others) = agent_status::short_report(which)?;
                waiting = others;
                return Ok(report);
            }
            agent_status::report(which)
        })();
        let text = match (&report, args.json, args.short) {
            (Ok(r), true, _) => serde_json::to_string_pretty(&to_json(r))?,
            (Ok(r), false, true) => short(r, waiting),
            (Ok(r), false, false) => line(r),
            (Err(_), true, _) => serde_json::to_string_pretty(&serde_json::json!({
                "version": output::JSON_VERSION, "tokens": null, "percent": null,
                "budget_percent": null}))?,
            (Err(_), false, true) => unknown_short(),
            (Err(e), false, false) => format!("context unknown ({e:#})"),
        };
        let _ = output::line(text);
        return Ok(());
    }
    let which = if let Some(id) = args.agent_session {
        agent_status::Which::Agent(id)
    } else if let Some(path) = args.transcript {
        agent_status::Which::Transcript(path)
    } else {
        agent_status::Which::Current
    };
    if args.short {
        let (report, waiting) = agent_status::short_report(which)?;
        return Ok(output::line(short(&report, waiting))?);
    }
    let report = agent_status::report(which)?;
    if args.json {
        Ok(output::json(&to_json(&report))?)
    } else {
        Ok(output::line(line(&report))?)
    }
}

pub(super) fn run_wrapped_up(args: WrappedUpArgs) -> Result<()> {
    let scope = Scope::from(args.scope);
    let state = agent_status::wrapped_up(args.agent_session.as_deref(), scope)?;
    output::note(format!(
        "recorded the {} wrap-up of agent session {}{}; the higher thresholds stay silent until \
         the next compaction",
        scope.as_str(),
        state.agent_session,
        state
            .label
            .as_deref()
            .map(|l| format!(" (session {l})"))
            .unwrap_or_default()
    ));
    Ok(())
}

/// The JSON form (stable keys).
fn to_json(this: &agent_status::Report) -> Value {
    json!({
        "version": output::JSON_VERSION,
        "tokens": this.tokens,
        "window": this.window,
        "window_source": this.window_source,
        "percent": this.percent,
        "budget": this.budget,
        "budget_source": this.budget_source,
        "budget_percent": this.budget_percent,
        // Thresholds are whole percentages; a configured fractional one is rounded.
        "fired": this.fired.iter().map(|f| f.round() as i64).collect::<Vec<_>>(),
        "wrapped_up": this.wrapped_up.as_ref().map(|w| json!({
            "scope": w.scope.as_str(), "at": clock::rfc3339(w.at)})),
        "compactions": this.compactions,
        "model": this.model,
        "agent_session": this.agent_session,
        "label": this.label,
        "transcript": this.transcript,
        "last_seen": this.last_seen.map(clock::rfc3339),
    })
}

/// One line for people.
fn line(this: &agent_status::Report) -> String {
    let fill = match (this.tokens, this.percent, this.budget_percent) {
        (Some(t), Some(p), Some(bp)) => format!(
            "context {bp:.1}% of the compaction point ({} of {} tokens, from {}); \
                 {p:.1}% of the {} window (from {})",
            group(t),
            group(this.budget),
            this.budget_source,
            group(this.window),
            this.window_source
        ),
        _ => format!(
            "context unknown (compaction at {} tokens from {}; window {} from {})",
            group(this.budget),
            this.budget_source,
            group(this.window),
            this.window_source
        ),
    };
    let fired = if this.fired.is_empty() {
        "-".to_string()
    } else {
        this.fired
            .iter()
            .map(|f| format!("{}", f.round() as i64))
            .collect::<Vec<_>>()
            .join(",")
    };
    let wrapped = match &this.wrapped_up {
        Some(w) => format!("{} at {}", w.scope.as_str(), clock::rfc3339(w.at)),
        None => "-".to_string(),
    };
    let mut parts = vec![
        fill,
        format!("fired: {fired}"),
        format!("wrapped up: {wrapped}"),
        format!("compactions: {}", this.compactions),
    ];
    if let Some(m) = &this.model {
        parts.push(format!("model: {m}"));
    }
    if let Some(l) = &this.label {
        parts.push(format!("session: {l}"));
    }
    parts.join(" | ")
}

/// The statusline form: label and fill of the compaction point, under 40 characters; then how
/// many other sessions wait for the person (` · 2 waiting`), nothing when none does.
fn short(this: &agent_status::Report, waiting: Option<usize>) -> String {
    let others = match waiting {
        Some(n) if n > 0 => format!(" \u{b7} {n} waiting"),
        _ => String::new(),
    };
    format!("{}{others}", fill_short(this))
}

fn fill_short(this: &agent_status::Report) -> String {
    let label: String = match &this.label {
        Some(l) if l.chars().count() > 16 => {
            l.chars().take(15).chain(std::iter::once('~')).collect()
        }
        Some(l) => l.clone(),
        None => "ctx".to_string(),
    };
    match (this.budget_percent, this.percent) {
        (Some(bp), Some(p)) => {
            format!("{label} {:.0}% (window {:.0}%)", bp.floor(), p.floor())
        }
        _ => format!("{label} context unknown"),
    }
}

/// The shown form when nothing at all could be learned (a statusline must not go blank).
fn unknown_short() -> String {
    "ctx unknown".to_string()
}
