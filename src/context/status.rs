//! `context status` and `context wrapped-up`: which agent session, and what its state says.
//!
//! Which agent session a command means, in order: `--agent-session ID`; `--transcript PATH` (its
//! state, when the file name is a known agent session id); a hook or statusline payload on stdin
//! (`--stdin`: `session_id`, `transcript_path`); else the most recently active agent session
//! linked to the acting git session (`GIT_SESSION`, or the session of the current worktree).
//!
//! Invariant: these commands only read the repository (no lifecycle recovery, no porcelain);
//! `wrapped-up` writes only the agent's state file, through `Store::update`.

use super::agent::{self, AgentState, Scope, WrapUp};
use super::hook::{group, Payload};
use super::transcript;
use super::window::{self, Inputs};
use crate::clock::{self, Time};
use crate::config::Config;
use crate::error::UserError;
use crate::git::Repo;
use crate::session;
use crate::store::Store;
use anyhow::Result;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// What `status` shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub agent_session: Option<String>,
    pub label: Option<String>,
    pub tokens: Option<u64>,
    pub window: u64,
    pub window_source: String,
    pub percent: Option<f64>,
    pub fired: Vec<f64>,
    pub wrapped_up: Option<WrapUp>,
    pub compactions: u32,
    pub model: Option<String>,
    pub transcript: Option<String>,
    pub last_seen: Option<Time>,
}

impl Report {
    pub fn to_json(&self) -> Value {
        json!({
            "tokens": self.tokens,
            "window": self.window,
            "window_source": self.window_source,
            "percent": self.percent,
            "fired": self.fired,
            "wrapped_up": self.wrapped_up.as_ref().map(|w| json!({
                "scope": w.scope.as_str(), "at": clock::rfc3339(w.at)})),
            "compactions": self.compactions,
            "model": self.model,
            "agent_session": self.agent_session,
            "label": self.label,
            "transcript": self.transcript,
            "last_seen": self.last_seen.map(clock::rfc3339),
        })
    }

    /// One line for people and statuslines.
    pub fn line(&self) -> String {
        let fill = match (self.tokens, self.percent) {
            (Some(t), Some(p)) => format!(
                "context {p:.1}% ({} of {} tokens; window from {})",
                group(t),
                group(self.window),
                self.window_source
            ),
            _ => format!(
                "context unknown (window {} tokens from {})",
                group(self.window),
                self.window_source
            ),
        };
        let fired = if self.fired.is_empty() {
            "-".to_string()
        } else {
            self.fired
                .iter()
                .map(|f| format!("{f}"))
                .collect::<Vec<_>>()
                .join(",")
        };
        let wrapped = match &self.wrapped_up {
            Some(w) => format!("{} at {}", w.scope.as_str(), clock::rfc3339(w.at)),
            None => "-".to_string(),
        };
        let mut parts = vec![
            fill,
            format!("fired: {fired}"),
            format!("wrapped up: {wrapped}"),
            format!("compactions: {}", self.compactions),
        ];
        if let Some(m) = &self.model {
            parts.push(format!("model: {m}"));
        }
        if let Some(l) = &self.label {
            parts.push(format!("session: {l}"));
        }
        parts.join(" | ")
    }
}

/// The stores an agent's state may be in: the repository's here, then the one outside.
pub fn stores() -> Result<(Option<Repo>, Vec<Store>)> {
    let repo = Repo::discover()?;
    let mut v = Vec::new();
    if let Some(r) = &repo {
        v.push(r.store());
    }
    v.push(Store::outside_repository());
    Ok((repo, v))
}

fn find_agent(stores: &[Store], id: &str) -> Result<Option<(Store, AgentState)>> {
    let Some(rel) = agent::store_path(id) else {
        return Ok(None);
    };
    for s in stores {
        if let Some(state) = s.read::<AgentState>(&rel)? {
            return Ok(Some((s.clone(), state)));
        }
    }
    Ok(None)
}

/// The most recently active agent session linked to the acting git session.
pub fn current_agent(repo: Option<&Repo>) -> Result<(Store, AgentState)> {
    let repo = repo.ok_or_else(|| {
        UserError::refused("not inside a git repository, and no agent session named")
            .hinted("name one: --agent-session ID (or --transcript PATH for status)")
    })?;
    let store = repo.store();
    let records = session::load_all(&store)?;
    let label = session::acting_label(repo, &records).ok_or_else(|| {
        UserError::refused("no session here, and no agent session named")
            .hinted("name one: --agent-session ID, or run this in a session's worktree")
    })?;
    let record = records
        .iter()
        .find(|r| r.label == label)
        .ok_or_else(|| session::no_such_session(&label))?;
    // The agent that reported a fill last; else the one seen last.
    let mut best: Option<AgentState> = None;
    for id in &record.agent_sessions {
        if let Some(rel) = agent::store_path(id) {
            if let Some(state) = store.read::<AgentState>(&rel)? {
                let reported = record
                    .context
                    .as_ref()
                    .is_some_and(|c| c.agent_session == state.agent_session);
                if reported {
                    best = Some(state);
                    break;
                }
                if best.as_ref().is_none_or(|b| state.last_seen > b.last_seen) {
                    best = Some(state);
                }
            }
        }
    }
    let state = best.ok_or_else(|| {
        UserError::refused(format!(
            "no agent session is linked to session \"{label}\" yet"
        ))
        .hinted(
            "the context hook links one at SessionStart (git session context install); or name \
             one with --agent-session ID",
        )
    })?;
    Ok((store, state))
}

fn from_state(state: &AgentState) -> Report {
    Report {
        agent_session: Some(state.agent_session.clone()),
        label: state.label.clone(),
        tokens: state.tokens,
        window: state.window,
        window_source: state.window_source.clone(),
        percent: state.percent,
        fired: state.fired_thresholds(),
        wrapped_up: state.wrapped_up.clone(),
        compactions: state.compactions,
        model: state.model.clone(),
        transcript: state.transcript.clone(),
        last_seen: Some(state.last_seen),
    }
}

/// The report for an agent with a stored state, refreshed from its transcript when readable
/// (the window and its source stay the ones the hook chose and stored).
fn refresh(mut report: Report, transcript_path: Option<&Path>) -> Report {
    if let Some(path) = transcript_path {
        if let Ok(reading) = transcript::read(path) {
            report.tokens = reading.tokens;
            report.percent = reading
                .tokens
                .map(|t| agent::round1(t as f64 * 100.0 / report.window as f64));
            report.transcript = Some(path.display().to_string());
        }
    }
    report
}

/// A transcript no hook has seen: the window chain from what this process knows.
fn from_transcript(path: &Path, config: &Config) -> Result<Report> {
    let reading = transcript::read(path).map_err(|e| {
        UserError::refused(format!(
            "cannot read the transcript {}: {e}",
            path.display()
        ))
        .hinted("name a Claude Code transcript (.jsonl) or a Codex rollout file")
    })?;
    let w = window::choose(
        &Inputs {
            transcript: reading.window,
            model: reading.model.as_deref(),
            tokens: reading.tokens,
            config: config.context_window,
            ..Inputs::default()
        }
        .with_env(),
    );
    Ok(Report {
        agent_session: None,
        label: None,
        tokens: reading.tokens,
        window: w.size,
        window_source: w.source.to_string(),
        percent: reading
            .tokens
            .map(|t| agent::round1(t as f64 * 100.0 / w.size as f64)),
        fired: Vec::new(),
        wrapped_up: None,
        compactions: 0,
        model: reading.model,
        transcript: Some(path.display().to_string()),
        last_seen: None,
    })
}

pub enum Which {
    Agent(String),
    Transcript(PathBuf),
    Payload(Box<Payload>),
    Current,
}

pub fn report(which: Which) -> Result<Report> {
    let (repo, stores) = stores()?;
    let config = Config::load(repo.as_ref().and_then(|r| r.config_root()))?;
    match which {
        Which::Agent(id) => {
            let (_, state) = find_agent(&stores, &id)?.ok_or_else(|| {
                UserError::refused(format!(
                    "no agent session \"{}\" in the store",
                    id.escape_debug()
                ))
                .hinted(
                    "the context hook records agent sessions it has seen; try --transcript PATH",
                )
            })?;
            let path = state.transcript.clone().map(PathBuf::from);
            Ok(refresh(from_state(&state), path.as_deref()))
        }
        Which::Transcript(path) => {
            // Claude Code names a transcript after its session id.
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            match find_agent(&stores, stem)? {
                Some((_, state)) if path.is_file() => Ok(refresh(from_state(&state), Some(&path))),
                _ => from_transcript(&path, &config),
            }
        }
        Which::Payload(p) => {
            let known = match &p.session_id {
                Some(id) => find_agent(&stores, id)?,
                None => None,
            };
            match (known, &p.transcript_path) {
                (Some((_, state)), t) => {
                    let path = t
                        .clone()
                        .or_else(|| state.transcript.clone().map(PathBuf::from));
                    Ok(refresh(from_state(&state), path.as_deref()))
                }
                (None, Some(t)) => from_transcript(t, &config),
                (None, None) => Err(UserError::refused(
                    "the payload on stdin names no known agent session and no transcript",
                )
                .hinted("pipe a hook or statusline payload with session_id and transcript_path")
                .into()),
            }
        }
        Which::Current => {
            let (_, state) = current_agent(repo.as_ref())?;
            let path = state.transcript.clone().map(PathBuf::from);
            Ok(refresh(from_state(&state), path.as_deref()))
        }
    }
}

/// Records a wrap-up for an agent session; returns its state after.
pub fn wrapped_up(agent_session: Option<&str>, scope: Scope) -> Result<AgentState> {
    let (repo, stores) = stores()?;
    let (store, state) = match agent_session {
        Some(id) => find_agent(&stores, id)?.ok_or_else(|| {
            UserError::refused(format!(
                "no agent session \"{}\" in the store",
                id.escape_debug()
            ))
            .hinted("`git session info` lists the agent sessions linked to a session")
        })?,
        None => current_agent(repo.as_ref())?,
    };
    let rel = agent::store_path(&state.agent_session).expect("a stored id is not empty");
    let now = clock::now();
    let written = store.update::<AgentState, _>(&rel, |cur| {
        Ok(cur.map(|mut s| {
            s.wrapped_up = Some(WrapUp { scope, at: now });
            s
        }))
    })?;
    written.ok_or_else(|| {
        UserError::refused(format!(
            "the agent session \"{}\" disappeared from the store",
            state.agent_session
        ))
        .into()
    })
}
