//! What `list` and `info` show of an agent's state ([`crate::context::attention`]): the AGENT
//! column's cell, its colour, and the JSON object. Shared by both commands, so they say it alike.
//!
//! The cell is short enough for a narrow terminal: the state and how long it has held
//! (`waiting 12m`, `permission 3m`, `quiet 7m`, `gone 2h`, `ended 1d`); `working` alone (the
//! time since it began says nothing a person acts on).

use crate::base::clock::{self, Time};
use crate::context::attention::{AgentView, Reason, State};
use serde_json::{json, Value};

/// The AGENT cell: `-` for a session no agent reported to.
pub fn cell(view: Option<&AgentView>, now: Time) -> String {
    let Some(v) = view else {
        return "-".to_string();
    };
    let word = match v.shown.state {
        State::Waiting(Reason::Permission) => "permission",
        s => s.as_str(),
    };
    if v.shown.state == State::Working {
        return word.to_string();
    }
    match clock::age(now - v.shown.since) {
        a if a == "now" => word.to_string(),
        a => format!("{word} {a}"),
    }
}

/// Waiting is what needs the person: bold yellow, a permission bold magenta; gone red; quiet
/// yellow; working green; ended dimmed.
pub fn style(text: &str) -> anstyle::Style {
    use anstyle::{AnsiColor, Style};
    let fg = |c: AnsiColor| Style::new().fg_color(Some(c.into()));
    match text.split(' ').next().unwrap_or("") {
        "permission" => fg(AnsiColor::Magenta).bold(),
        "waiting" => fg(AnsiColor::Yellow).bold(),
        "gone" => fg(AnsiColor::Red),
        "quiet" => fg(AnsiColor::Yellow),
        "working" => fg(AnsiColor::Green),
        "ended" => Style::new().dimmed(),
        _ => Style::new(),
    }
}

/// The `agent` object of `list --json` and `info --json` (null without one), and each element
/// of `info --json`'s `agent_states`.
pub fn json(view: Option<&AgentView>) -> Value {
    let Some(v) = view else {
        return Value::Null;
    };
    json!({
        "agent_session": v.agent_session,
        "state": v.shown.state.as_str(),
        "reason": v.shown.state.reason(),
        "since": clock::rfc3339(v.shown.since),
        "last_event": clock::rfc3339(v.last_event),
        "event": v.event,
        "pid": v.pid,
    })
}

/// `info`'s line for one agent session.
pub fn line(v: &AgentView, now: Time) -> String {
    let state = match v.shown.state.reason() {
        Some(r) => format!("{}: {r}", v.shown.state.as_str()),
        None => v.shown.state.as_str().to_string(),
    };
    let pid = v.pid.map(|p| format!(", pid {p}")).unwrap_or_default();
    format!(
        "{} {state} since {} (last event {}{pid})",
        v.agent_session,
        crate::cli::output::ago(v.shown.since, now),
        crate::cli::output::ago(v.last_event, now),
    )
}
