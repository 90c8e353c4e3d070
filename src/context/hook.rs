//! `git session context hook`: one hook call of Claude Code, Codex or Gemini CLI, JSON on stdin.
//!
//! Events and what they do (each agent's own names; [`super::payload`] says who sent what):
//! - SessionStart (all three): link the agent session to the git session of its cwd and answer
//!   with its identity; source `compact`/`clear` resets the thresholds.
//! - PostToolUse (Claude Code, Codex) / AfterTool (Gemini CLI): measure the fill, claim the
//!   files a file-writing tool wrote, answer with the alert of a newly crossed threshold.
//! - UserPromptSubmit / BeforeAgent: measure and alert, so a turn without tool calls is warned.
//! - PreToolUse / BeforeTool on a file-writing tool: refuse a write of a path another live
//!   session owns.
//! - PreCompact, PostCompact, SessionStart(compact): one compaction, whatever their order and
//!   whichever arrive; counted (and the thresholds reset) at the first that says it happened,
//!   or, for a PreCompact alone, at the next call if the transcript records it. That next
//!   main-agent call settles the compaction and learns its point from the record Claude Code
//!   writes after these hooks. PreCompact gets no output at all (exit 2 there would block the
//!   compaction, and another hook may still block it). Gemini CLI has no
//!   event after a compression (its PreCompress fires on every attempt, compressing or not), so
//!   a Gemini fill that falls below half of where the lowest fired alert was is counted as one.
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
use super::agent_claims;
use super::answer::{self, MAX_CONTEXT_CHARS};
use super::budget;
use super::payload::AgentKind;
// Re-exported: the payload type was defined here before it had its own module.
pub use super::payload::Payload;
use super::transcript::{self, Reading};
use super::window::{self, Inputs};
use crate::base::clock::{self, Time};
use crate::config::Config;
use crate::git::Repo;
use crate::session::{ContextFill, SessionRecord};
use crate::store::Store;
use anyhow::{anyhow, Context, Result};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long the hook waits for a store lock before failing open.
pub const LOCK_WAIT: Duration = Duration::from_millis(250);

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
    let gitdir = crate::git::discover_gitdir(dir, &ceilings)?;
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
        // Another hook may still block the compaction: nothing is counted or reset here (the
        // next call counts it if the transcript records it), and the answer is always exit 0
        // with no output.
        "PreCompact" => compaction_event(ctx, p, false).map(|_| None),
        "PostCompact" => compaction_event(ctx, p, true).map(|_| None),
        "PostToolUse" | "AfterTool" => measure_and_alert(ctx, p, true),
        // A turn without tool calls is warned too.
        "UserPromptSubmit" | "BeforeAgent" => measure_and_alert(ctx, p, false),
        "PreToolUse" | "BeforeTool" => pre_tool_use(ctx, p),
        // Other events (Stop, SubagentStop, PreCompress, ...) are not ours to answer.
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

/// The hook's whole budget: 900 ms, or `GIT_SESSION_HOOK_BUDGET` (a duration such as `2s`,
/// at most a minute) on a slow or loaded machine.
pub fn budget() -> Duration {
    std::env::var("GIT_SESSION_HOOK_BUDGET")
        .ok()
        .and_then(|v| humantime::parse_duration(v.trim()).ok())
        .filter(|d| !d.is_zero() && *d <= Duration::from_secs(60))
        .unwrap_or(Duration::from_millis(900))
}

/// How long a PostToolUse waits for Claude Code's record of the call it is about to reach the
/// transcript. Claude Code writes its records a little after it makes them, and a fast tool
/// finishes first; without the wait the fill is that of the call before. Four ninths of the
/// hook's budget (400 ms of the usual 900), so a budget raised for a loaded machine raises the
/// wait with it, and the answer still has the rest to be written in.
pub fn catch_up() -> Duration {
    budget() * 4 / 9
}
const CATCH_UP_STEP: Duration = Duration::from_millis(20);
/// How far from the end the call's id is looked for.
const CATCH_UP_TAIL: u64 = 256 * 1024;

/// Reads the transcript once the call the payload is about is in it (Claude Code's tool
/// events): the newest usage on disk is then that call's. Waits at most [`catch_up`]; after
/// that the reading is what is there.
fn measure_current(p: &Payload) -> Result<Option<Reading>> {
    let first = measure(p)?;
    let (Some(path), Some(id), Some(r)) = (&p.transcript_path, &p.tool_use_id, &first) else {
        return Ok(first);
    };
    // A subagent's tool calls are recorded in its own transcript, never in this one.
    if r.format != Some(transcript::Format::Claude)
        || p.event != "PostToolUse"
        || p.agent_id.is_some()
    {
        return Ok(first);
    }
    let quoted = format!("\"{id}\"");
    let started = std::time::Instant::now();
    let limit = catch_up();
    let mut waited = false;
    while !transcript::tail_contains(path, &quoted, CATCH_UP_TAIL).unwrap_or(true) {
        if started.elapsed() >= limit {
            return Ok(first);
        }
        std::thread::sleep(CATCH_UP_STEP);
        waited = true;
    }
    if waited {
        measure(p)
    } else {
        Ok(first)
    }
}

/// Whether a measuring failure is only a transcript that does not exist yet: the agent writes
/// it at its first model call, and a prompt event (UserPromptSubmit, BeforeAgent) of a new
/// agent session comes before that (`claude -p` sends one). Only when this agent session has
/// never recorded that transcript: one that existed and is gone is a failure.
fn not_written_yet(p: &Payload, err: &anyhow::Error, state: &AgentState) -> bool {
    let prompt = matches!(p.event.as_str(), "UserPromptSubmit" | "BeforeAgent");
    let missing = err
        .downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound);
    let known = match (&p.transcript_path, &state.transcript) {
        (Some(path), Some(seen)) => Path::new(seen) == path.as_path(),
        _ => false,
    };
    prompt && missing && !known
}

/// The transcript's length now: a compaction's record is written after its hooks run.
fn transcript_len(p: &Payload) -> Option<u64> {
    let path = p.transcript_path.as_ref()?;
    std::fs::metadata(path).ok().map(|m| m.len())
}

/// One event of a compaction (PreCompact: `happened` false; PostCompact and
/// SessionStart(compact): true), in any order: counted once, see
/// [`AgentState::compaction_event`]. A subagent's compaction is its own context's. When the
/// compaction's record is already readable (agents that write it before these hooks), its
/// point is learned now.
fn compaction_event(ctx: &Ctx, p: &Payload, happened: bool) -> Result<()> {
    if p.agent_id.is_some() {
        return Ok(());
    }
    let id = agent_id(p)?;
    let offset = transcript_len(p);
    let reading = if happened {
        measure(p).unwrap_or(None)
    } else {
        None
    };
    let learn = reading.as_ref().and_then(|r| r.auto_compact_at);
    let state = update_agent(ctx, id, |state| {
        state.compaction_event(happened, offset, ctx.now);
        if let (Some(c), Some(_)) = (state.compacting.as_mut(), learn) {
            c.learned = true;
        }
        if state.model.is_none() {
            state.model = reading.as_ref().and_then(|r| r.model.clone());
        }
        Ok(())
    })?;
    if let Some(pre) = learn {
        remember_point(ctx, &state, pre, p);
    }
    Ok(())
}

/// A main-agent call after a compaction's events ends the compaction once the transcript says
/// how it went: its record (Claude Code writes it after its compaction hooks, and its writes
/// reach the file a little later still) confirms a compaction only PreCompact announced and
/// gives its point (`preTokens`); a model call recorded after it with no record means none
/// happened. Until then the compaction stays open. `scan` caches the transcript's answer
/// across the reruns of an update. Returns the point to remember.
fn settle_compaction(
    ctx: &Ctx,
    p: &Payload,
    state: &mut AgentState,
    scan: &mut Option<transcript::Since>,
) -> Option<u64> {
    let offset = state.compacting.as_ref()?.offset;
    let since = scan
        .get_or_insert_with(|| {
            let (Some(path), Some(offset)) = (&p.transcript_path, offset) else {
                // Nothing to wait for: settled as not recorded.
                return transcript::Since {
                    boundary: None,
                    went_on: true,
                };
            };
            transcript::since(path, offset).unwrap_or_else(|e| {
                audit_failure(&ctx.store, p, &anyhow!(e).context("reading the compaction"));
                transcript::Since {
                    boundary: None,
                    went_on: true,
                }
            })
        })
        .clone();
    if since.boundary.is_none() && !since.went_on {
        return None;
    }
    let ended = state.settle_compaction(since.boundary.is_some(), ctx.now)?;
    since
        .boundary
        .and_then(|b| b.auto_compact_at)
        .filter(|_| !ended.learned)
}

/// A reading taken while a counted compaction is still open comes from before it (the agent
/// has not yet written what follows): its fill is no longer the context's.
fn stale(state: &AgentState, reading: Option<&Reading>) -> bool {
    let Some(c) = state.compacting.as_ref().filter(|c| c.counted) else {
        return false;
    };
    match (reading, c.offset) {
        (Some(r), Some(offset)) => r.tokens.is_some() && r.at < offset,
        _ => false,
    }
}

/// Applies a reading to the state: window chain, tokens, percent.
fn apply_reading(ctx: &Ctx, p: &Payload, state: &mut AgentState, reading: Option<&Reading>) {
    let kind = AgentKind::detect(p, reading);
    let tokens = reading.and_then(|r| r.tokens);
    if kind == AgentKind::Gemini {
        infer_compression(state, tokens, ctx.now);
    }
    // SessionStart's model (which may carry the `[1m]` suffix) wins over the transcript's.
    if state.model.is_none() {
        // Codex names its model in every tool payload; its rollout's records do not.
        state.model = reading
            .and_then(|r| r.model.clone())
            .or_else(|| p.model.clone());
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
    let mut sources = budget::Sources::gather(
        kind,
        Some(&ctx.store),
        Some(&project_dir(ctx)),
        model.as_deref(),
    )
    .with_config(&ctx.config);
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
    // Recorded once read: a transcript this agent session never had may not exist yet.
    if let (Some(path), Some(_)) = (&p.transcript_path, reading) {
        state.transcript = Some(path.display().to_string());
    }
}

/// Gemini CLI writes nothing when it compresses: a fill that falls below half of where the
/// lowest fired threshold was is a compression (the context only shrinks that far when it was
/// summarised, or rewound), so the thresholds start over and it is counted.
fn infer_compression(state: &mut AgentState, tokens: Option<u64>, now: Time) {
    let (Some(t), Some(lowest)) = (tokens, state.fired.iter().map(|f| f.tokens).min()) else {
        return;
    };
    if t < lowest / 2 {
        state.count_compaction(now);
    }
}

/// The project whose settings apply: the agent's own project directory (`CLAUDE_PROJECT_DIR`,
/// which Gemini CLI also sets, or `GEMINI_PROJECT_DIR`), else the worktree of the payload's cwd,
/// else that cwd.
fn project_dir(ctx: &Ctx) -> PathBuf {
    std::env::var_os("CLAUDE_PROJECT_DIR")
        .or_else(|| std::env::var_os("GEMINI_PROJECT_DIR"))
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| ctx.repo.as_ref().and_then(|r| r.current_worktree.clone()))
        .unwrap_or_else(|| ctx.cwd.clone())
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
    let offset = transcript_len(p);
    let mut scan = None;
    let mut learn = None;
    let state = update_agent(ctx, id, |state| {
        learn = None;
        match p.source.as_deref() {
            Some("compact") => state.compaction_event(true, offset, ctx.now),
            // A cleared conversation starts over, but clearing after a wrap-up is the
            // discipline working, not failing: not counted as a compaction.
            Some("clear") => state.reset(),
            // A new or resumed session: a compaction before it is over.
            _ => learn = settle_compaction(ctx, p, state, &mut scan),
        }
        if let Some(model) = &p.model {
            state.model = Some(model.clone());
        }
        agent_claims::maybe_link(ctx, state, true)?;
        apply_reading(ctx, p, state, reading.as_ref());
        Ok(())
    })?;
    let now_readable = if p.source.as_deref() == Some("compact") {
        reading.as_ref().and_then(|r| r.auto_compact_at)
    } else {
        None
    };
    if let Some(pre) = learn.or(now_readable) {
        remember_point(ctx, &state, pre, p);
    }
    let Some(label) = state.label.clone() else {
        return Ok(None);
    };
    let record = agent_claims::link_session(ctx, &label, id)?;
    if reading.is_some() {
        if let Err(e) = record_fill(ctx, &state) {
            audit_failure(&ctx.store, p, &e);
        }
    }
    let Some(record) = record else {
        return Ok(None);
    };
    let claims = crate::ownership::claims_of(&ctx.store, &record)?;
    let mut text = answer::identity(&record, &claims, id);
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
    Ok(Some(answer::additional_context("SessionStart", &text)))
}

/// Reads the fill, records it, claims the written file (`claim`), and answers with the alert of
/// a newly crossed threshold. A subagent's call (`agent_id`) never spends an alert: the
/// transcript it names is the main agent's, and the main agent hears it at its next call.
fn measure_and_alert(ctx: &Ctx, p: &Payload, claim: bool) -> Result<Option<Value>> {
    let id = agent_id(p)?;
    // The claim first: it stands even when the transcript cannot be read.
    let mut failure: Option<anyhow::Error> = None;
    let reading = match measure_current(p) {
        Ok(r) => r,
        Err(e) => {
            failure = Some(e);
            None
        }
    };
    let subagent = p.agent_id.is_some();
    let mut alert: Option<(String, String)> = None;
    let mut scan = None;
    let mut learn = None;
    let mut not_yet = false;
    let state = update_agent(ctx, id, |state| {
        alert = None;
        learn = None;
        not_yet = failure
            .as_ref()
            .is_some_and(|e| not_written_yet(p, e, state));
        agent_claims::maybe_link(ctx, state, false)?;
        if !subagent {
            learn = settle_compaction(ctx, p, state, &mut scan);
        }
        if stale(state, reading.as_ref()) {
            let unknown = reading.as_ref().map(|r| Reading {
                tokens: None,
                ..r.clone()
            });
            apply_reading(ctx, p, state, unknown.as_ref());
            return Ok(());
        }
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
                    answer::alert_text(t, tokens, &b, share),
                    answer::system_message(t, &b, share),
                ));
            }
        }
        Ok(())
    })?;
    if claim {
        for file in p.file_paths() {
            if let Err(e) = agent_claims::record_claim(ctx, &state, &file) {
                audit_failure(&ctx.store, p, &e);
            }
        }
    }
    if let Some(pre) = learn {
        remember_point(ctx, &state, pre, p);
    }
    if let Err(e) = record_fill(ctx, &state) {
        audit_failure(&ctx.store, p, &e);
    }
    if let Some(e) = failure.filter(|_| !not_yet) {
        return Err(e);
    }
    Ok(alert.map(|(text, message)| answer::alert(&p.event, &text, message)))
}

/// Remembers where this agent compacted on its own, for this model.
fn remember_point(ctx: &Ctx, state: &AgentState, pre: u64, p: &Payload) {
    let Some(model) = state.model.as_deref() else {
        return;
    };
    if let Err(e) = budget::remember_observed(&ctx.store, model, pre) {
        audit_failure(&ctx.store, p, &e);
    }
}

/// A write of a path another live session owns is refused, in the calling agent's shape.
fn pre_tool_use(ctx: &Ctx, p: &Payload) -> Result<Option<Value>> {
    let Some((rel, owner, me)) = agent_claims::refusal(ctx, p)? else {
        return Ok(None);
    };
    ctx.store.audit(
        "context-deny",
        json!({"path": rel, "owner": owner.label, "session": me, "agent_session": p.session_id}),
    );
    let kind = AgentKind::detect(p, None);
    Ok(Some(answer::deny(kind, answer::deny_reason(&rel, &owner))))
}
