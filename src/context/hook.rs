//! `git session context hook`: one Claude Code (or Codex) hook call, JSON on stdin.
//!
//! Protocol (Claude Code hooks): the payload carries `session_id`, `transcript_path`, `cwd`,
//! `hook_event_name` and, per event, `tool_name`/`tool_input` (PreToolUse, PostToolUse), `source`
//! and `model` (SessionStart), `trigger` (PreCompact). An answer is JSON on stdout with exit 0:
//! `hookSpecificOutput.additionalContext` for SessionStart and PostToolUse, and for PreToolUse
//! `hookSpecificOutput.permissionDecision: "deny"` with `permissionDecisionReason` (shown to the
//! model). PreCompact gets no output at all: exit 2 there would block the compaction.
//!
//! Invariants a reader must not break:
//! - The hook never breaks the agent. Every failure (malformed input, missing or unreadable
//!   transcript, a locked or unwritable store, a bad config file) ends in exit 0 with no output and
//!   one line in the audit log. Store locks are waited on for [`LOCK_WAIT`] only, and the caller
//!   runs the whole call under a watchdog (`commands::context`).
//! - The repository is the one containing the payload's `cwd`, never the process's cwd.
//! - No lifecycle recovery and no git porcelain run here: this is the hot path of every tool call.
//!   The cost is a repository open, a few small TOML files and the end of the transcript.
//! - An alert is only printed after the agent state recording it as fired was written, so a
//!   threshold that cannot be recorded (locked store) is not announced, and none is announced
//!   twice.

use super::agent::{self, AgentState};
use super::budget;
use super::transcript::{self, Reading};
use super::window::{self, Inputs};
use crate::clock::{self, Time};
use crate::config::{Config, Threshold};
use crate::git::Repo;
use crate::session::{self, ContextFill, SessionRecord};
use crate::store::Store;
use anyhow::{anyhow, Context, Result};
use serde_json::{json, Value};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

/// How long the hook waits for a store lock before failing open.
pub const LOCK_WAIT: Duration = Duration::from_millis(250);

/// additionalContext stays under Claude Code's 10 000-character cap.
pub const MAX_CONTEXT_CHARS: usize = 9_500;

/// Tools that write one file, and the `tool_input` key naming it.
pub const FILE_TOOLS: &[(&str, &str)] = &[
    ("Write", "file_path"),
    ("Edit", "file_path"),
    ("MultiEdit", "file_path"),
    ("NotebookEdit", "notebook_path"),
];

/// The fields of a hook payload this tool reads; everything else is ignored.
#[derive(Debug, Clone, Default)]
pub struct Payload {
    pub session_id: Option<String>,
    pub transcript_path: Option<PathBuf>,
    pub cwd: Option<PathBuf>,
    pub event: String,
    pub tool_name: Option<String>,
    pub tool_input: Value,
    pub source: Option<String>,
    pub trigger: Option<String>,
    pub model: Option<String>,
    pub window: Option<u64>,
    /// Set when a subagent made the call (Claude Code's `agent_id`).
    pub agent_id: Option<String>,
    /// A statusline payload's `context_window.current_usage` input-side tokens (null before the
    /// first API answer) and `used_percentage`.
    pub used_tokens: Option<u64>,
    pub used_percentage: Option<f64>,
}

fn string(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .filter(|s| !s.is_empty())
}

impl Payload {
    pub fn parse(bytes: &[u8]) -> Result<Payload> {
        let v: Value = serde_json::from_slice(bytes).context("the hook input is not JSON")?;
        if !v.is_object() {
            return Err(anyhow!("the hook input is not a JSON object"));
        }
        let model = match v.get("model") {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(Value::Object(m)) => string(&Value::Object(m.clone()), "id"),
            _ => None,
        };
        let window = v
            .get("context_window")
            .and_then(|w| {
                w.as_u64()
                    .or_else(|| w.get("context_window_size").and_then(Value::as_u64))
            })
            .or_else(|| v.get("model_context_window").and_then(Value::as_u64))
            .or_else(|| v.get("context_window_size").and_then(Value::as_u64));
        Ok(Payload {
            session_id: string(&v, "session_id"),
            transcript_path: string(&v, "transcript_path").map(PathBuf::from),
            cwd: string(&v, "cwd").map(PathBuf::from),
            event: string(&v, "hook_event_name").unwrap_or_default(),
            tool_name: string(&v, "tool_name"),
            tool_input: v.get("tool_input").cloned().unwrap_or(Value::Null),
            source: string(&v, "source"),
            trigger: string(&v, "trigger"),
            model,
            window,
            agent_id: string(&v, "agent_id"),
            used_tokens: v
                .get("context_window")
                .and_then(|w| w.get("current_usage"))
                .filter(|u| u.is_object())
                .map(|u| {
                    [
                        "input_tokens",
                        "cache_creation_input_tokens",
                        "cache_read_input_tokens",
                    ]
                    .iter()
                    .filter_map(|k| u.get(*k).and_then(Value::as_u64))
                    .sum()
                }),
            used_percentage: v
                .get("context_window")
                .and_then(|w| w.get("used_percentage"))
                .and_then(Value::as_f64),
        })
    }

    /// The files a file-writing tool call writes: one for Claude Code's tools, every file a
    /// Codex `apply_patch` names.
    pub fn file_paths(&self) -> Vec<String> {
        let Some(tool) = self.tool_name.as_deref() else {
            return Vec::new();
        };
        if tool == "apply_patch" {
            let text = match &self.tool_input {
                Value::String(s) => Some(s.as_str()),
                v => v
                    .get("command")
                    .or_else(|| v.get("input"))
                    .and_then(Value::as_str),
            };
            return text.map(super::patch::files).unwrap_or_default();
        }
        FILE_TOOLS
            .iter()
            .find(|(t, _)| *t == tool)
            .and_then(|(_, key)| string(&self.tool_input, key))
            .into_iter()
            .collect()
    }
}

/// What one hook call works with.
pub struct Ctx {
    pub repo: Option<Repo>,
    pub config: Config,
    pub store: Store,
    pub cwd: PathBuf,
    pub now: Time,
}

/// Opens the repository containing `dir` (searching upwards, as git does).
pub fn open_repo_at(dir: &Path) -> Option<Repo> {
    let ceilings: Vec<PathBuf> = std::env::var_os("GIT_CEILING_DIRECTORIES")
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default();
    let gitdir = git2::Repository::discover_path(dir, ceilings).ok()?;
    Repo::open(&gitdir).ok()
}

impl Ctx {
    pub fn open(payload: &Payload) -> Result<Ctx> {
        let cwd = match &payload.cwd {
            Some(c) => c.clone(),
            None => std::env::current_dir().context("no cwd in the payload")?,
        };
        let repo = open_repo_at(&cwd);
        let (config, store) = match &repo {
            Some(r) => (Config::load(r.config_root())?, r.store()),
            None => (Config::load(None)?, Store::outside_repository()),
        };
        Ok(Ctx {
            repo,
            config,
            store: store.with_lock_wait(LOCK_WAIT),
            cwd,
            now: clock::now(),
        })
    }
}

/// The store a failure is reported to when the payload gave nothing better.
pub fn fallback_store() -> Store {
    let repo = Repo::discover().ok().flatten();
    repo.map(|r| r.store())
        .unwrap_or_else(Store::outside_repository)
        .with_lock_wait(LOCK_WAIT)
}

/// Runs one hook call. Returns what to print on stdout (nothing in most calls); never fails.
/// `on_store` learns the store as soon as it is known (the watchdog reports to it).
pub fn run(input: &[u8], on_store: &dyn Fn(&Store)) -> Option<String> {
    let payload = match Payload::parse(input) {
        Ok(p) => p,
        Err(e) => {
            let store = fallback_store();
            on_store(&store);
            store.audit(
                "context-hook-failed",
                json!({"error": format!("{e:#}"), "input_bytes": input.len()}),
            );
            return None;
        }
    };
    let ctx = match Ctx::open(&payload) {
        Ok(c) => c,
        Err(e) => {
            let store = fallback_store();
            on_store(&store);
            audit_failure(&store, &payload, &e);
            return None;
        }
    };
    on_store(&ctx.store);
    match handle(&ctx, &payload) {
        Ok(out) => out.map(|v| v.to_string()),
        Err(e) => {
            audit_failure(&ctx.store, &payload, &e);
            None
        }
    }
}

fn audit_failure(store: &Store, payload: &Payload, err: &anyhow::Error) {
    store.audit(
        "context-hook-failed",
        json!({
            "hook_event": payload.event,
            "agent_session": payload.session_id,
            "error": format!("{err:#}"),
        }),
    );
}

fn handle(ctx: &Ctx, p: &Payload) -> Result<Option<Value>> {
    match p.event.as_str() {
        "SessionStart" => session_start(ctx, p),
        // Another hook may still block the compaction: nothing is counted or reset here, and
        // the answer is always exit 0 with no output.
        "PreCompact" => Ok(None),
        "PostCompact" => post_compact(ctx, p),
        "PostToolUse" => post_tool_use(ctx, p),
        "UserPromptSubmit" => user_prompt_submit(ctx, p),
        "PreToolUse" => pre_tool_use(ctx, p),
        // Other events (Stop, SubagentStop, ...) are not ours to answer.
        _ => Ok(None),
    }
}

fn agent_id(p: &Payload) -> Result<&str> {
    p.session_id
        .as_deref()
        .ok_or_else(|| anyhow!("no session_id in the {} payload", p.event))
}

/// Activity and token counts alone are rewritten at most this often (each write is fsync'd; the
/// freshest fill is always in the session record and the transcript).
pub const REFRESH: i64 = 60;

fn fresh(state: &mut AgentState, id: &str, now: Time) {
    state.version = agent::AGENT_VERSION;
    state.agent_session = id.to_string();
    if state.last_seen < now {
        state.last_seen = now;
    }
}

/// Whether `next` differs from `old` in anything but the token count and activity, or `old` is
/// older than [`REFRESH`].
fn worth_writing(old: &AgentState, next: &AgentState, now: Time) -> bool {
    if (now - old.last_seen).num_seconds() >= REFRESH {
        return true;
    }
    let mut a = old.clone();
    let mut b = next.clone();
    for s in [&mut a, &mut b] {
        s.tokens = None;
        s.percent = None;
        s.last_seen = now;
    }
    a != b
}

/// Read-modify-write of the agent's state under its lock; creates it on first sight. `f` runs
/// first on an unlocked copy: when that changes nothing worth writing, no lock is taken and
/// nothing is written; otherwise it runs again on the locked current state, whose result wins.
fn update_agent(
    ctx: &Ctx,
    id: &str,
    mut f: impl FnMut(&mut AgentState) -> Result<()>,
) -> Result<AgentState> {
    let rel = agent::store_path(id).ok_or_else(|| anyhow!("empty session_id"))?;
    if let Some(old) = ctx.store.read::<AgentState>(&rel)? {
        let mut next = old.clone();
        fresh(&mut next, id, ctx.now);
        f(&mut next)?;
        if !worth_writing(&old, &next, ctx.now) {
            return Ok(next);
        }
    }
    let written = ctx.store.update::<AgentState, _>(&rel, |cur| {
        let mut state = cur.unwrap_or_else(|| AgentState::new(id, ctx.now));
        fresh(&mut state, id, ctx.now);
        f(&mut state)?;
        Ok(Some(state))
    })?;
    written.ok_or_else(|| anyhow!("agent state not written"))
}

/// The session whose worktree contains `cwd`: `GIT_SESSION` when it names one, else the one
/// active session with the deepest worktree containing `cwd` (none when two share it).
pub fn session_for_cwd(store: &Store, cwd: &Path) -> Result<Option<SessionRecord>> {
    let records = session::load_all(store)?;
    if let Some(label) = session::env_label() {
        if let Some(r) = records.iter().find(|r| r.label == label) {
            return Ok(Some(r.clone()));
        }
    }
    let here = session::normalize(cwd);
    let mut best: Vec<(usize, &SessionRecord)> = records
        .iter()
        .filter(|r| r.state == session::RecordState::Active)
        .filter_map(|r| {
            let root = session::normalize(&r.path);
            here.starts_with(&root)
                .then(|| (root.components().count(), r))
        })
        .collect();
    best.sort_by_key(|(depth, _)| std::cmp::Reverse(*depth));
    match best.as_slice() {
        [] => Ok(None),
        [(_, r)] => Ok(Some((*r).clone())),
        [(d0, r), (d1, _), ..] if d0 > d1 => Ok(Some((*r).clone())),
        _ => Ok(None),
    }
}

/// Adds the agent to the session's record and refreshes its activity; returns the record.
fn link_session(ctx: &Ctx, label: &str, id: &str) -> Result<Option<SessionRecord>> {
    let now = ctx.now;
    ctx.store
        .update::<SessionRecord, _>(&SessionRecord::store_path(label), |r| {
            Ok(r.map(|mut r| {
                if !r.agent_sessions.iter().any(|a| a == id) {
                    r.agent_sessions.push(id.to_string());
                }
                if r.last_seen < now {
                    r.last_seen = now;
                }
                r
            }))
        })
}

/// Reads the transcript, if the payload names one. A missing or unreadable one is an error (the
/// caller audits it); an undecided reading is `tokens: None`.
fn measure(p: &Payload) -> Result<Option<Reading>> {
    match &p.transcript_path {
        None => Ok(None),
        Some(path) => transcript::read(path)
            .map(Some)
            .with_context(|| format!("reading the transcript {}", path.display())),
    }
}

/// Applies a reading to the state: window chain, tokens, percent.
fn apply_reading(ctx: &Ctx, p: &Payload, state: &mut AgentState, reading: Option<&Reading>) {
    let tokens = reading.and_then(|r| r.tokens);
    // SessionStart's model (which may carry the `[1m]` suffix) wins over the transcript's.
    if state.model.is_none() {
        state.model = reading.and_then(|r| r.model.clone());
    }
    let model = state.model.clone();
    let fallback = ctx
        .config
        .context_window
        .unwrap_or(crate::config::DEFAULT_WINDOW);
    if tokens.is_some_and(|t| t > fallback) {
        state.observed_large = true;
    }
    let w = window::choose(
        &Inputs {
            payload: p.window,
            transcript: reading.and_then(|r| r.window),
            model: model.as_deref(),
            tokens,
            observed_large: state.observed_large,
            config: ctx.config.context_window,
            ..Inputs::default()
        }
        .with_env(),
    );
    let mut sources =
        budget::Sources::gather(Some(&ctx.store), Some(&project_dir(ctx)), model.as_deref());
    sources.statusline = state.statusline_window;
    let b = budget::resolve(&w, &sources);
    state.window = b.window;
    state.window_source = b.window_source.clone();
    state.budget = b.budget;
    state.budget_source = b.budget_source.clone();
    if reading.is_some() {
        state.tokens = tokens;
        state.percent = tokens.map(|t| agent::round1(t as f64 * 100.0 / b.window as f64));
        state.budget_percent = tokens.map(|t| agent::round1(b.share(t)));
    }
    if let Some(path) = &p.transcript_path {
        state.transcript = Some(path.display().to_string());
    }
}

/// The project whose `.claude/` settings apply: Claude Code's `CLAUDE_PROJECT_DIR`, else the
/// worktree of the payload's cwd, else that cwd.
fn project_dir(ctx: &Ctx) -> PathBuf {
    std::env::var_os("CLAUDE_PROJECT_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| ctx.repo.as_ref().and_then(|r| r.current_worktree.clone()))
        .unwrap_or_else(|| ctx.cwd.clone())
}

/// Links the agent to a git session when it has none yet and its cwd changed since the last try.
fn maybe_link(ctx: &Ctx, state: &mut AgentState, force: bool) -> Result<()> {
    let cwd = ctx.cwd.display().to_string();
    if ctx.repo.is_none()
        || (!force && (state.label.is_some() || state.link_cwd.as_deref() == Some(&cwd)))
    {
        return Ok(());
    }
    state.link_cwd = Some(cwd);
    if let Some(record) = session_for_cwd(&ctx.store, &ctx.cwd)? {
        state.label = Some(record.label);
    }
    Ok(())
}

/// Records the fill in the linked session's record (what `list` and `info` show). Skipped when
/// the record already says the same and its activity is fresher than [`REFRESH`].
fn record_fill(ctx: &Ctx, state: &AgentState) -> Result<()> {
    let Some(label) = &state.label else {
        return Ok(());
    };
    let same = |c: &ContextFill| {
        c.agent_session == state.agent_session
            && c.tokens == state.tokens
            && c.window == state.window
    };
    let rel = SessionRecord::store_path(label);
    if let Some(r) = ctx.store.read::<SessionRecord>(&rel)? {
        if r.context.as_ref().is_some_and(same) && (ctx.now - r.last_seen).num_seconds() < REFRESH {
            return Ok(());
        }
    }
    let fill = ContextFill {
        agent_session: state.agent_session.clone(),
        tokens: state.tokens,
        window: state.window,
        percent: state.percent,
        at: ctx.now,
    };
    let now = ctx.now;
    ctx.store.update::<SessionRecord, _>(&rel, |r| {
        Ok(r.map(|mut r| {
            r.context = Some(fill);
            if r.last_seen < now {
                r.last_seen = now;
            }
            r
        }))
    })?;
    Ok(())
}

fn session_start(ctx: &Ctx, p: &Payload) -> Result<Option<Value>> {
    let id = agent_id(p)?;
    // Resume after a crash, or a new session: the transcript may say where the fill stands.
    // A new agent session's transcript is written after SessionStart: its absence is normal.
    let fresh_start = p.transcript_path.as_deref().is_some_and(|t| !t.exists());
    let reading = if fresh_start { Ok(None) } else { measure(p) };
    let reading = reading.unwrap_or_else(|e| {
        ctx.store.audit(
            "context-hook-failed",
            json!({"hook_event": p.event, "agent_session": id, "error": format!("{e:#}")}),
        );
        None
    });
    let state = update_agent(ctx, id, |state| {
        match p.source.as_deref() {
            Some("compact") => state.count_compaction(false, ctx.now),
            // A cleared conversation starts over, but clearing after a wrap-up is the
            // discipline working, not failing: not counted as a compaction.
            Some("clear") => state.reset(),
            _ => {}
        }
        if let Some(model) = &p.model {
            state.model = Some(model.clone());
        }
        maybe_link(ctx, state, true)?;
        apply_reading(ctx, p, state, reading.as_ref());
        Ok(())
    })?;
    if p.source.as_deref() == Some("compact") {
        remember_compaction(ctx, &state, reading.as_ref(), p);
    }
    let Some(label) = state.label.clone() else {
        return Ok(None);
    };
    let record = link_session(ctx, &label, id)?;
    if reading.is_some() {
        if let Err(e) = record_fill(ctx, &state) {
            audit_failure(&ctx.store, p, &e);
        }
    }
    let Some(record) = record else {
        return Ok(None);
    };
    let claims = crate::ownership::claims_of(&ctx.store, &record)?;
    let mut text = identity(&record, &claims, id);
    match crate::handoff::latest(&ctx.store, &label) {
        Ok(Some((n, note))) => {
            let head = format!(
                "\n\nLatest handoff note for this session (#{n}, `git session handoff show`):\n"
            );
            text.push_str(&head);
            let room = MAX_CONTEXT_CHARS.saturating_sub(text.chars().count() + 80);
            if note.chars().count() > room {
                text.extend(note.chars().take(room));
                text.push_str("\n[... truncated; read it whole with `git session handoff show`]");
            } else {
                text.push_str(note.trim_end());
            }
        }
        Ok(None) => {}
        Err(e) => audit_failure(&ctx.store, p, &e),
    }
    Ok(Some(additional_context("SessionStart", &text)))
}

/// Who the agent is, as facts.
pub fn identity(record: &SessionRecord, claims: &[session::Claim], agent_session: &str) -> String {
    let mut lines = vec![
        format!(
            "git-session: this agent works in the git session \"{}\".",
            record.label
        ),
        format!("- label: {}", record.label),
        format!(
            "- branch: {}",
            if record.branch.is_empty() {
                "(detached HEAD)"
            } else {
                &record.branch
            }
        ),
        format!("- worktree: {}", record.path.display()),
        format!("- base: {}", record.base),
        format!("- your agent session id: {agent_session}"),
    ];
    if claims.is_empty() {
        lines.push("- claims: none".to_string());
    } else {
        let shown: Vec<String> = claims
            .iter()
            .take(50)
            .map(|c| format!("{} ({})", c.path, c.how.as_str()))
            .collect();
        let more = claims.len().saturating_sub(50);
        let mut claims = format!("- claims: {}", shown.join(", "));
        if more > 0 {
            claims.push_str(&format!(" and {more} more (`git session claims`)"));
        }
        lines.push(claims);
    }
    if record.attached {
        lines.push(format!(
            "- attached: this worktree is shared; commits count for this session only with \
             GIT_SESSION={} set",
            record.label
        ));
    }
    lines.push(
        "Work and commit in this worktree. Files you write are claimed for this session; \
         paths other live sessions own are refused."
            .to_string(),
    );
    lines.join("\n")
}

pub fn additional_context(event: &str, text: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})
}

/// `182,000`.
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The alert text for a threshold: its configured message with the placeholders filled in,
/// then the numbers as facts.
pub fn alert_text(t: &Threshold, tokens: u64, b: &budget::Budget, share: f64) -> String {
    let message = t
        .message
        .replace("{percent}", &format!("{}", share.floor() as u64))
        .replace("{tokens}", &group(tokens))
        .replace("{window}", &group(b.window))
        .replace("{budget}", &group(b.budget));
    let mut text = format!(
        "{message}\n(git-session context hook: {} tokens are in context, {}% of the {} at which \
         this agent compacts (from {}); the window is {} tokens (from {}). This alert fires once \
         per agent session.)",
        group(tokens),
        share.floor() as u64,
        group(b.budget),
        b.budget_source,
        group(b.window),
        b.window_source,
    );
    if text.chars().count() > MAX_CONTEXT_CHARS {
        text = text.chars().take(MAX_CONTEXT_CHARS).collect();
    }
    text
}

/// One short line for the person watching.
pub fn system_message(t: &Threshold, b: &budget::Budget, share: f64) -> String {
    format!(
        "git-session: context at {}% of the compaction point ({} tokens); the {}% alert went \
         to the agent.",
        share.floor() as u64,
        group(b.budget),
        t.percent
    )
}

fn post_tool_use(ctx: &Ctx, p: &Payload) -> Result<Option<Value>> {
    measure_and_alert(ctx, p, "PostToolUse", true)
}

/// A turn without tool calls is warned too.
fn user_prompt_submit(ctx: &Ctx, p: &Payload) -> Result<Option<Value>> {
    measure_and_alert(ctx, p, "UserPromptSubmit", false)
}

/// Reads the fill, records it, claims the written file (`claim`), and answers with the alert of
/// a newly crossed threshold. A subagent's call (`agent_id`) never spends an alert: the
/// transcript it names is the main agent's, and the main agent hears it at its next call.
fn measure_and_alert(ctx: &Ctx, p: &Payload, event: &str, claim: bool) -> Result<Option<Value>> {
    let id = agent_id(p)?;
    // The claim first: it stands even when the transcript cannot be read.
    let mut failure: Option<anyhow::Error> = None;
    let reading = match measure(p) {
        Ok(r) => r,
        Err(e) => {
            failure = Some(e);
            None
        }
    };
    let subagent = p.agent_id.is_some();
    let mut alert: Option<(String, String)> = None;
    let state = update_agent(ctx, id, |state| {
        alert = None;
        maybe_link(ctx, state, false)?;
        apply_reading(ctx, p, state, reading.as_ref());
        if subagent {
            return Ok(());
        }
        if let Some(tokens) = state.tokens {
            let b = budget::Budget {
                window: state.window,
                window_source: state.window_source.clone(),
                budget: state.budget,
                budget_source: state.budget_source.clone(),
            };
            let share = b.share(tokens);
            if let Some(t) = state.evaluate(&ctx.config.thresholds, tokens, share, ctx.now) {
                alert = Some((
                    alert_text(t, tokens, &b, share),
                    system_message(t, &b, share),
                ));
            }
        }
        Ok(())
    })?;
    if claim {
        for file in p.file_paths() {
            if let Err(e) = record_claim(ctx, &state, &file) {
                audit_failure(&ctx.store, p, &e);
            }
        }
    }
    if let Err(e) = record_fill(ctx, &state) {
        audit_failure(&ctx.store, p, &e);
    }
    if let Some(e) = failure {
        return Err(e);
    }
    Ok(alert.map(|(text, message)| {
        let mut v = additional_context(event, &text);
        v["systemMessage"] = Value::String(message);
        v
    }))
}

/// The compaction really happened: count it, reset the thresholds, and remember where an
/// automatic one happened for this model. A subagent's compaction is its own context's.
fn post_compact(ctx: &Ctx, p: &Payload) -> Result<Option<Value>> {
    if p.agent_id.is_some() {
        return Ok(None);
    }
    let id = agent_id(p)?;
    let reading = measure(p).unwrap_or(None);
    let state = update_agent(ctx, id, |state| {
        state.count_compaction(true, ctx.now);
        if state.model.is_none() {
            state.model = reading.as_ref().and_then(|r| r.model.clone());
        }
        Ok(())
    })?;
    remember_compaction(ctx, &state, reading.as_ref(), p);
    Ok(None)
}

fn remember_compaction(ctx: &Ctx, state: &AgentState, reading: Option<&Reading>, p: &Payload) {
    let (Some(model), Some(pre)) = (
        state.model.as_deref(),
        reading.and_then(|r| r.auto_compact_at),
    ) else {
        return;
    };
    if let Err(e) = budget::remember_observed(&ctx.store, model, pre) {
        audit_failure(&ctx.store, p, &e);
    }
}

/// `file` (absolute, or relative to the payload's cwd) relative to the worktree `root`, with
/// `/` separators; `None` when it lies outside, or inside `.git`.
pub fn repo_relative(file: &str, cwd: &Path, root: &Path) -> Option<String> {
    let p = Path::new(file);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    let abs = session::normalize(&abs);
    let root = session::normalize(root);
    let rel = abs.strip_prefix(&root).ok()?;
    let mut parts = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(s) => parts.push(s.to_str()?.to_string()),
            _ => return None,
        }
    }
    if parts.is_empty() || parts[0] == ".git" {
        return None;
    }
    Some(parts.join("/"))
}

/// The worktree a session works in: its record's path when linked, else the cwd's worktree.
fn worktree_root(ctx: &Ctx, label: Option<&str>) -> Result<Option<PathBuf>> {
    if let Some(label) = label {
        if let Some(r) = session::load(&ctx.store, label)? {
            return Ok(Some(r.path));
        }
    }
    Ok(ctx.repo.as_ref().and_then(|r| r.current_worktree.clone()))
}

fn record_claim(ctx: &Ctx, state: &AgentState, file: &str) -> Result<()> {
    let (Some(repo), Some(label)) = (&ctx.repo, &state.label) else {
        return Ok(());
    };
    let Some(record) = session::load(&ctx.store, label)? else {
        return Ok(());
    };
    let Some(rel) = repo_relative(file, &ctx.cwd, &record.path) else {
        return Ok(());
    };
    // Editing a file it already holds changes nothing: no write on this hot path.
    if crate::ownership::holds(&ctx.store, label, &rel)? {
        return Ok(());
    }
    let refused = crate::ownership::claim(
        repo,
        &ctx.config,
        label,
        std::slice::from_ref(&rel),
        session::ClaimHow::Edit,
    )?;
    for owner in refused {
        ctx.store.audit(
            "context-claim-refused",
            json!({"path": rel, "session": label, "owner": owner.label}),
        );
    }
    Ok(())
}

fn pre_tool_use(ctx: &Ctx, p: &Payload) -> Result<Option<Value>> {
    let files = p.file_paths();
    let (false, Some(repo)) = (files.is_empty(), &ctx.repo) else {
        return Ok(None);
    };
    // Read-only: who this agent is comes from its state, else from where it stands.
    let known = match p.session_id.as_deref().and_then(agent::store_path) {
        Some(rel) => ctx.store.read::<AgentState>(&rel)?.and_then(|s| s.label),
        None => None,
    };
    let me = match known {
        Some(l) => Some(l),
        None => session_for_cwd(&ctx.store, &ctx.cwd)?.map(|r| r.label),
    };
    let Some(root) = worktree_root(ctx, me.as_deref())? else {
        return Ok(None);
    };
    // The first owned file decides: one refused file refuses the whole call (a patch applies
    // all or nothing).
    let mut found = None;
    for file in &files {
        let Some(rel) = repo_relative(file, &ctx.cwd, &root) else {
            continue;
        };
        if let Some(owner) = crate::ownership::owner_of(repo, &ctx.config, &rel, me.as_deref())? {
            found = Some((rel, owner));
            break;
        }
    }
    let Some((rel, owner)) = found else {
        return Ok(None);
    };
    let reason = format!(
        "git-session: \"{rel}\" is owned by the live session \"{}\" (branch {}, {} claim \
         since {}, last activity {}), so this session's write of it was refused. What works: \
         files no other session owns; asking that session to run `git session release {rel}`; \
         or, if this agent is that session, running with GIT_SESSION={}.",
        owner.label,
        if owner.branch.is_empty() {
            "(detached)"
        } else {
            &owner.branch
        },
        owner.how.as_str(),
        clock::rfc3339(owner.since),
        clock::rfc3339(owner.last_activity),
        owner.label,
    );
    ctx.store.audit(
        "context-deny",
        json!({"path": rel, "owner": owner.label, "session": me, "agent_session": p.session_id}),
    );
    Ok(Some(json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }})))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grouping() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(182_000), "182,000");
        assert_eq!(group(1_000_000), "1,000,000");
    }

    #[test]
    fn payload_tolerates_shapes() {
        let p = Payload::parse(
            br#"{"session_id":"s","hook_event_name":"SessionStart","model":{"id":"m[1m]"},"extra":1}"#,
        )
        .unwrap();
        assert_eq!(p.model.as_deref(), Some("m[1m]"));
        assert!(Payload::parse(b"[1,2]").is_err());
        assert!(Payload::parse(b"{\"tool_name\":").is_err());
        let w = Payload::parse(
            br#"{"hook_event_name":"PreToolUse","tool_name":"NotebookEdit","tool_input":{"notebook_path":"/a/b.ipynb"}}"#,
        )
        .unwrap();
        assert_eq!(w.file_paths(), ["/a/b.ipynb"]);
        let codex = Payload::parse(
            br#"{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Update File: x.rs\n*** End Patch\n"}}"#,
        )
        .unwrap();
        assert_eq!(codex.file_paths(), ["x.rs"]);
    }
}
