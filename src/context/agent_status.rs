//! `context status` and `context wrapped-up`: which agent session, and what its state says.
//!
//! Which agent session a command means, in order: `--agent-session ID`; `--transcript PATH` (its
//! state, when the file name is a known agent session id); a hook or statusline payload on stdin
//! (`--stdin`: `session_id`, `transcript_path`); else the most recently active agent session
//! linked to the acting git session (`GIT_SESSION`, or the session of the current worktree).
//!
//! Invariant: these commands only read the repository (no lifecycle recovery, no porcelain);
//! `wrapped-up` writes only the agent's state file, through `Store::update`.
//!
//! This module computes; the command line (`cli::commands::context::agent_status`) prints a
//! [`Report`] (one line, the statusline form, or JSON) and words a [`StatusError`].

use super::agent::{self, AgentState, Scope, WrapUp};
use super::agents::Agent;
use super::budget;
use super::payload::Payload;
use super::transcript;
use super::window::{self, Inputs};
use crate::base::clock::{self, Time};
use crate::config::Config;
use crate::git::Repo;
use crate::session;
use crate::store::Store;
use anyhow::Result;
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
    pub budget: u64,
    pub budget_source: String,
    pub budget_percent: Option<f64>,
    pub fired: Vec<f64>,
    pub wrapped_up: Option<WrapUp>,
    pub compactions: u32,
    pub model: Option<String>,
    pub transcript: Option<String>,
    pub last_seen: Option<Time>,
}

impl Report {
    /// Nothing known but what a payload is about to fill in.
    fn empty() -> Report {
        let window = crate::config::DEFAULT_WINDOW;
        Report {
            agent_session: None,
            label: None,
            tokens: None,
            window,
            window_source: "default".to_string(),
            percent: None,
            budget: window - budget::DEFAULT_RESERVE,
            budget_source: "default".to_string(),
            budget_percent: None,
            fired: Vec::new(),
            wrapped_up: None,
            compactions: 0,
            model: None,
            transcript: None,
            last_seen: None,
        }
    }
}

/// Why `status` or `wrapped-up` cannot answer. Each line is the technical fact (the user's words
/// and hints are the command line's, `cli::words::context_status`); the statusline form of
/// `status --stdin` shows this line as it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatusError {
    /// Outside a repository, and no agent session was named.
    NoRepository,
    /// No acting git session here, and no agent session was named.
    NoSessionHere,
    /// The acting git session has no agent session linked to it yet.
    NoAgentLinked { label: String },
    /// The transcript named cannot be read (`why`: the reader's error).
    UnreadableTranscript { path: PathBuf, why: String },
    /// `status` named an agent session no store holds.
    UnknownAgent { id: String },
    /// `wrapped-up` named an agent session no store holds.
    UnknownAgentToWrapUp { id: String },
    /// A payload on stdin that names no known agent session and no transcript.
    PayloadNamesNothing,
    /// The agent's state went away between reading it and recording the wrap-up.
    AgentDisappeared { id: String },
}

impl std::fmt::Display for StatusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StatusError::NoRepository => {
                f.write_str("not inside a git repository, and no agent session named")
            }
            StatusError::NoSessionHere => {
                f.write_str("no session here, and no agent session named")
            }
            StatusError::NoAgentLinked { label } => {
                write!(f, "no agent session is linked to session \"{label}\" yet")
            }
            StatusError::UnreadableTranscript { path, why } => {
                write!(f, "cannot read the transcript {}: {why}", path.display())
            }
            StatusError::UnknownAgent { id } | StatusError::UnknownAgentToWrapUp { id } => {
                write!(f, "no agent session \"{}\" in the store", id.escape_debug())
            }
            StatusError::PayloadNamesNothing => {
                f.write_str("the payload on stdin names no known agent session and no transcript")
            }
            StatusError::AgentDisappeared { id } => {
                write!(f, "the agent session \"{id}\" disappeared from the store")
            }
        }
    }
}

impl std::error::Error for StatusError {}

/// The stores an agent's state may be in: the repository's here, then the one outside.
pub fn stores() -> Result<(Option<Repo>, Vec<Store>)> {
    let repo = Repo::discover()?;
    let mut v = Vec::new();
    if let Some(r) = &repo {
        v.push(crate::store::Store::of(r));
    }
    v.push(Store::outside_repository());
    Ok((repo, v))
}

fn find_agent(stores: &[Store], id: &str) -> Result<Option<(Store, AgentState)>> {
    for s in stores {
        if let Some(state) = agent::load(s, id)? {
            return Ok(Some((s.clone(), state)));
        }
    }
    Ok(None)
}

/// The most recently active agent session linked to the acting git session.
pub fn current_agent(repo: Option<&Repo>) -> Result<(Store, AgentState)> {
    let repo = repo.ok_or(StatusError::NoRepository)?;
    let store = crate::store::Store::of(repo);
    let records = session::load_all(&store)?;
    let label = session::acting_label(repo, &records).ok_or(StatusError::NoSessionHere)?;
    let record = records
        .iter()
        .find(|r| r.label == label)
        .ok_or_else(|| session::no_such_session(&label))?;
    // The agent that reported a fill last; else the one seen last.
    let mut best: Option<AgentState> = None;
    for id in &record.agent_sessions {
        {
            if let Some(state) = agent::load(&store, id)? {
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
    let state = best.ok_or_else(|| StatusError::NoAgentLinked {
        label: label.to_string(),
    })?;
    Ok((store, state))
}

fn from_state(state: &AgentState) -> Report {
    Report {
        agent_session: Some(state.agent_session.clone()),
        label: state.label.as_ref().map(|l| l.to_string()),
        tokens: state.tokens,
        window: state.window,
        window_source: state.window_source.clone(),
        percent: state.percent,
        budget: if state.budget == 0 {
            state
                .window
                .saturating_sub(super::budget::DEFAULT_RESERVE)
                .max(state.window / 2)
        } else {
            state.budget
        },
        budget_source: if state.budget_source.is_empty() {
            state.window_source.clone()
        } else {
            state.budget_source.clone()
        },
        budget_percent: state.budget_percent,
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
            report.budget_percent = reading
                .tokens
                .map(|t| agent::round1(t as f64 * 100.0 / report.budget.max(1) as f64));
            report.transcript = Some(path.display().to_string());
        }
    }
    report
}

/// A transcript no hook has seen: the window chain from what this process knows.
fn from_transcript(path: &Path, config: &Config, store: Option<&Store>) -> Result<Report> {
    let reading = transcript::read(path).map_err(|e| StatusError::UnreadableTranscript {
        path: path.to_path_buf(),
        why: e.to_string(),
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
    let kind = Agent::of_reading(&reading);
    let mut sources = budget::Sources::gather(
        kind,
        store,
        std::env::current_dir().ok().as_deref(),
        reading.model.as_deref(),
    )
    .with_config(config);
    // A one-shot command: its own ancestry, read once.
    sources.command_line = super::ancestry::budget_from(kind, None);
    let b = budget::resolve(&w, &sources);
    Ok(Report {
        agent_session: None,
        label: None,
        tokens: reading.tokens,
        window: b.window,
        window_source: b.window_source.clone(),
        percent: reading
            .tokens
            .map(|t| agent::round1(t as f64 * 100.0 / b.window as f64)),
        budget: b.budget,
        budget_source: b.budget_source.clone(),
        budget_percent: reading.tokens.map(|t| agent::round1(b.share(t))),
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
    report_in(which, repo.as_ref(), &stores)
}

/// The report for a statusline (`status --short`), and how many git sessions other than the
/// report's own have an agent waiting for the person ([`super::attention::others_waiting`];
/// `None` outside a repository or where the store cannot be listed).
pub fn short_report(which: Which) -> Result<(Report, Option<usize>)> {
    let (repo, stores) = stores()?;
    let report = report_in(which, repo.as_ref(), &stores)?;
    let waiting = match (&repo, stores.first()) {
        (Some(_), Some(store)) => {
            super::attention::others_waiting(store, report.label.as_deref(), clock::now()).ok()
        }
        _ => None,
    };
    Ok((report, waiting))
}

fn report_in(which: Which, repo: Option<&Repo>, stores: &[Store]) -> Result<Report> {
    let config = Config::load(repo.and_then(|r| r.config_root()))?;
    match which {
        Which::Agent(id) => {
            let (_, state) = find_agent(stores, &id)?
                .ok_or_else(|| StatusError::UnknownAgent { id: id.clone() })?;
            let path = state.transcript.clone().map(PathBuf::from);
            Ok(refresh(from_state(&state), path.as_deref()))
        }
        Which::Transcript(path) => {
            // Claude Code names a transcript after its session id.
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            match find_agent(stores, stem)? {
                Some((_, state)) if path.is_file() => Ok(refresh(from_state(&state), Some(&path))),
                _ => from_transcript(&path, &config, stores.first()),
            }
        }
        Which::Payload(p) => from_payload(&p, stores, &config),
        Which::Current => {
            let (_, state) = current_agent(repo)?;
            let path = state.transcript.clone().map(PathBuf::from);
            Ok(refresh(from_state(&state), path.as_deref()))
        }
    }
}

/// A hook or statusline payload. A statusline's own numbers (`context_window`) win over the
/// transcript, and its window is remembered for the agent session so the hook measures against
/// it too.
fn from_payload(p: &Payload, stores: &[Store], config: &Config) -> Result<Report> {
    let known = match &p.session_id {
        Some(id) => find_agent(stores, id)?,
        None => None,
    };
    if let (Some(window), Some(id)) = (p.window.filter(|w| *w >= 1000), &p.session_id) {
        remember_statusline_window(stores, known.as_ref().map(|(s, _)| s), id, window);
    }
    let mut report = match (&known, &p.transcript_path) {
        (Some((_, state)), t) => {
            let path = t
                .clone()
                .or_else(|| state.transcript.clone().map(PathBuf::from));
            refresh(from_state(state), path.as_deref())
        }
        (None, Some(t)) => from_transcript(t, config, stores.first())?,
        (None, None) if p.window.is_some() => Report::empty(),
        (None, None) => return Err(StatusError::PayloadNamesNothing.into()),
    };
    if let Some(window) = p.window.filter(|w| *w >= 1000) {
        let w = window::Window {
            size: window,
            source: "statusline",
        };
        let mut sources = budget::Sources::gather(
            Agent::detect(p, None),
            stores.first(),
            p.cwd.as_deref(),
            p.model.as_deref().or(report.model.as_deref()),
        )
        .with_config(config);
        sources.statusline = Some(window);
        if sources.agent.facts().command_line.is_some() {
            // What the hook remembered of the agent's command line; read here only when the
            // hook has not yet (a statusline runs often: never a `ps` run each time after that).
            sources.command_line = match known.as_ref().map(|(_, s)| &s.command_line) {
                Some(Some(kept)) => kept.budget.zip(kept.source.clone()),
                _ => super::ancestry::budget_from(sources.agent, None),
            };
        }
        let b = budget::resolve(&w, &sources);
        // Claude Code's numbers, as it showed them; null before the first answer.
        report.tokens = p.used_tokens;
        report.window = b.window;
        report.window_source = b.window_source;
        report.budget = b.budget;
        report.budget_source = b.budget_source;
        report.percent = p
            .used_percentage
            .or_else(|| p.used_tokens.map(|t| t as f64 * 100.0 / window as f64))
            .map(agent::round1);
        report.budget_percent = p
            .used_tokens
            .map(|t| agent::round1(t as f64 * 100.0 / report.budget.max(1) as f64));
    }
    if report.model.is_none() {
        report.model = p.model.clone();
    }
    if report.agent_session.is_none() {
        report.agent_session = p.session_id.clone();
    }
    Ok(report)
}

/// Best effort: a statusline that cannot write (locked store) still shows its line.
fn remember_statusline_window(stores: &[Store], known: Option<&Store>, id: &str, window: u64) {
    let Some(store) = known.or(stores.first()) else {
        return;
    };
    let Some(rel) = agent::store_path(id) else {
        return;
    };
    if let Ok(Some(state)) = store.read::<AgentState>(&rel) {
        if state.statusline_window == Some(window) {
            return;
        }
    }
    let store = store.clone().with_lock_wait(super::hook::LOCK_WAIT);
    let now = clock::now();
    let _ = store.update::<AgentState, _>(&rel, |cur| {
        let mut state = cur.unwrap_or_else(|| AgentState::new(id, now));
        state.statusline_window = Some(window);
        Ok(Some(state))
    });
}

/// Records a wrap-up for an agent session; returns its state after.
pub fn wrapped_up(agent_session: Option<&str>, scope: Scope) -> Result<AgentState> {
    let (repo, stores) = stores()?;
    let (store, state) = match agent_session {
        Some(id) => find_agent(&stores, id)?
            .ok_or_else(|| StatusError::UnknownAgentToWrapUp { id: id.to_string() })?,
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
        StatusError::AgentDisappeared {
            id: state.agent_session.clone(),
        }
        .into()
    })
}
