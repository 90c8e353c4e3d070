//! `git session context hook`: one hook call of Claude Code, Codex or Gemini CLI, JSON on stdin.
//!
//! Events and what they do (each agent's own names; [`super::payload`] says who sent what):
//! - SessionStart (all three): link the agent session to the git session of its cwd and answer
//!   with its identity, and with why its commits would skip the guard when they would (judged
//!   in the agent's own environment); source `compact`/`clear` resets the thresholds.
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
//!   runs the whole call under a watchdog (`cli::commands::context::hook`).
//! - The repository is the one containing the payload's `cwd`, never the process's cwd.
//! - No lifecycle recovery and no git porcelain run here: this is the hot path of every tool call.
//!   The cost is a repository open, a few small TOML files and the end of the transcript; once
//!   per agent session, SessionStart also reads the hook files (and asks `git --version` only
//!   where config-based hooks are set).
//! - The answer is typed ([`Answer`]); the command line words it and prints it, once.
//! - An alert is only printed after the agent state recording it as fired was written, so a
//!   threshold that cannot be recorded (locked store) is not announced, and none is announced
//!   twice.

mod measure;
mod state;

pub use measure::{budget, catch_up};

use super::agent::AgentState;
use super::agent_claims;
use super::agents::Agent;
use super::agents::{self, Role};
use super::answer::{self, Answer};
use super::attention;
use super::budget;
use crate::base::trace::trace;
// Re-exported: the payload type was defined here before it had its own module.
pub use super::payload::Payload;
use super::transcript::Reading;
use crate::base::clock::{self, Time};
use crate::config::Config;
use crate::git::Repo;
use crate::store::Store;
use anyhow::{anyhow, Context, Result};
use measure::{
    compaction_event, is_missing, learn_from_earlier, measure, measure_current, not_written_yet,
    remember_point, settle_compaction, stale, transcript_len,
};
use serde_json::json;
use state::{apply_reading, record_fill, update_agent};
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
        // As the guard reads it: a damaged file never switches off what the hook enforces (an
        // agent kept in its worktree, writes of owned paths refused); what it could not use is
        // audited, and the defaults stand in for it.
        let (config, damage, store) = match &repo {
            Some(r) => {
                let (config, damage) = Config::load_for_guard(r.config_root());
                (config, damage, crate::store::Store::of(r))
            }
            None => {
                let (config, damage) = Config::load_for_guard(None);
                (config, damage, Store::outside_repository())
            }
        };
        if !damage.is_empty() {
            store.audit(
                "context-config-damaged",
                json!({"problems": damage.iter().map(|d| d.error.to_string()).collect::<Vec<_>>()}),
            );
        }
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
    repo.map(|r| crate::store::Store::of(&r))
        .unwrap_or_else(Store::outside_repository)
        .with_lock_wait(LOCK_WAIT)
}

/// Runs one hook call. Returns the answer to print on stdout (nothing in most calls); never
/// fails. `on_store` learns the store as soon as it is known (the watchdog reports to it).
pub fn run(input: &[u8], on_store: &dyn Fn(&Store)) -> Option<Answer> {
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
    trace("hook", || {
        format!(
            "{} of agent session {:?}: {:?}",
            payload.event,
            payload.session_id.as_deref().unwrap_or(""),
            agents::role(&payload.event)
        )
    });
    match handle(&ctx, &payload) {
        Ok(out) => {
            trace("hook", || match &out {
                None => "no answer".to_string(),
                Some(Answer::Identity(i)) => {
                    format!("identity: session {:?}", i.record.label.as_str())
                }
                Some(Answer::Alert(a)) => format!("alert at {:.1}%", a.share),
                Some(Answer::Deny(d)) => format!("deny {}: owned by {:?}", d.rel, d.owner.label),
                Some(Answer::Escape(e)) => format!(
                    "{} a write outside session {:?}'s worktree",
                    if e.refused { "deny" } else { "warn of" },
                    e.label
                ),
                Some(Answer::Told(_)) => "told the agent".to_string(),
            });
            out
        }
        Err(e) => {
            trace("hook", || format!("failed, answering nothing: {e:#}"));
            audit_failure(&ctx.store, &payload, &e);
            None
        }
    }
}

pub(super) fn audit_failure(store: &Store, payload: &Payload, err: &anyhow::Error) {
    store.audit(
        "context-hook-failed",
        json!({
            "hook_event": payload.event,
            "agent_session": payload.session_id,
            "error": format!("{err:#}"),
        }),
    );
}

fn handle(ctx: &Ctx, p: &Payload) -> Result<Option<Answer>> {
    // Each agent's name for an event, and what it is: `super::agents::TABLE`.
    match agents::role(&p.event) {
        Role::SessionStart => session_start(ctx, p),
        // Another hook may still block the compaction: nothing is counted or reset here (the
        // next call counts it if the transcript records it), and the answer is always exit 0
        // with no output.
        Role::BeforeCompact => compaction_event(ctx, p, false).map(|_| None),
        Role::AfterCompact => compaction_event(ctx, p, true).map(|_| None),
        Role::AfterTool => measure_and_alert(ctx, p, true),
        // A turn without tool calls is warned too.
        Role::Prompt => measure_and_alert(ctx, p, false),
        Role::BeforeTool => pre_tool_use(ctx, p),
        // What the agent does, for `list` (super::attention): recorded, never answered.
        Role::Activity => note_activity(ctx, p).map(|_| None),
        // Other events (SubagentStop, PreCompress, ...) are not ours to answer.
        Role::Ignored => Ok(None),
    }
}

/// Records what an event says the agent does; the state is written only when that changed (or
/// its activity is older than [`REFRESH`]).
fn note_activity(ctx: &Ctx, p: &Payload) -> Result<()> {
    let id = agent_id(p)?;
    let mut began = None;
    let state = update_agent(ctx, id, |state| {
        let before = state.doing.as_ref().map(|d| d.activity);
        attention::note(state, p, ctx.now);
        // The last run of this closure is the one written (see `update_agent`).
        began = attention::began_waiting(before, state);
        Ok(())
    })?;
    if let (Some(reason), Some(command), Some(label)) =
        (began, &ctx.config.notify.command, &state.label)
    {
        let record = ctx.store.read::<crate::session::SessionRecord>(
            &crate::session::SessionRecord::store_path(label),
        )?;
        let worktree = record.map_or_else(|| ctx.cwd.clone(), |r| r.path);
        let started = attention::notify::run(command, label.as_ref(), reason, &worktree);
        ctx.store.audit(
            "notify",
            json!({"session": label, "agent_session": id, "reason": reason,
                   "error": started.err().map(|e| e.to_string())}),
        );
    }
    Ok(())
}

pub(super) fn agent_id(p: &Payload) -> Result<&str> {
    p.session_id
        .as_deref()
        .ok_or_else(|| anyhow!("no session_id in the {} payload", p.event))
}

fn session_start(ctx: &Ctx, p: &Payload) -> Result<Option<Answer>> {
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
    let mut outside = None;
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
        outside = agent_claims::outside(ctx, state)?;
        apply_reading(ctx, p, state, reading.as_ref());
        attention::note(state, p, ctx.now);
        Ok(())
    })?;
    if let Some(o) = &outside {
        agent_claims::audit_outside(ctx, p, o);
    }
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
    // An earlier agent session here that compacted and ended before it learned where: learned
    // now, and this one's budget measured against it from its first call.
    let learned_earlier = record
        .as_ref()
        .is_some_and(|r| learn_from_earlier(ctx, p, r, id));
    let state = if learned_earlier {
        update_agent(ctx, id, |state| {
            apply_reading(ctx, p, state, reading.as_ref());
            Ok(())
        })?
    } else {
        state
    };
    if reading.is_some() {
        if let Err(e) = record_fill(ctx, &state) {
            audit_failure(&ctx.store, p, &e);
        }
    }
    let Some(record) = record else {
        return Ok(None);
    };
    let claims = crate::ownership::claims_of(&ctx.store, &record)?;
    let handoff = match crate::handoff::latest(&ctx.store, &label) {
        Ok(Some((number, note))) => Some(answer::Handoff { number, note }),
        Ok(None) => None,
        Err(e) => {
            audit_failure(&ctx.store, p, &e);
            None
        }
    };
    let guard_off = guard_off_for_agent(ctx, &record.path);
    if let Some(off) = &guard_off {
        ctx.store.audit(
            "context-guard-off",
            json!({"session": label, "agent_session": id, "why": off.to_string()}),
        );
    }
    Ok(Some(Answer::Identity(Box::new(answer::Identity {
        event: p.event.clone(),
        record,
        claims,
        agent_session: id.to_string(),
        handoff,
        guard_off,
        outside,
    }))))
}

/// Why the agent's commits in `worktree` would not run the pre-commit guard: judged in the
/// hook's environment, which is the agent's, so a manager's skip switch set there (and not in
/// the shell the user runs `git session` from) is found. At each SessionStart (a start, a
/// resume, after a compaction or a clear), never on the tool events.
fn guard_off_for_agent(ctx: &Ctx, worktree: &Path) -> Option<crate::hooks::force::Off> {
    let repo = ctx.repo.as_ref()?;
    if !worktree.is_dir() {
        return None;
    }
    let e = crate::hooks::check(&repo.common_dir, worktree, &|| {
        crate::hooks::place::git_runs_config_hooks(worktree)
    });
    match e.pre_commit {
        crate::hooks::Check::Off(off) => Some(off),
        crate::hooks::Check::InForce(_) => None,
    }
}

/// Reads the fill, records it, claims the written file (`claim`), and answers with the alert of
/// a newly crossed threshold. A subagent's call (`agent_id`) never spends an alert: the
/// transcript it names is the main agent's, and the main agent hears it at its next call.
fn measure_and_alert(ctx: &Ctx, p: &Payload, claim: bool) -> Result<Option<Answer>> {
    let id = agent_id(p)?;
    // Read only when the transcript is missing: the usual call reads the state once, below.
    let missing_stays = std::cell::OnceCell::new();
    let stays = || {
        *missing_stays.get_or_init(|| {
            super::agent::store_path(id)
                .and_then(|rel| ctx.store.read::<AgentState>(&rel).ok().flatten())
                .is_some_and(|s| s.transcript_unwritten)
        })
    };
    let started = std::time::Instant::now();
    let measured = measure_current(p, &stays);
    if started.elapsed() >= catch_up() {
        // The agent's record of this call did not reach the transcript within the wait: the
        // fill read is the call's before, and a threshold this call crossed speaks one call
        // late. Recorded, so a missed alert can be told from a wrong one.
        ctx.store.audit(
            "context-hook-late",
            json!({"hook_event": p.event, "agent_session": id,
                   "waited_ms": started.elapsed().as_millis() as u64}),
        );
    }
    // Known from an earlier call of this agent session, which audited it: not a new failure.
    let known_absent = is_missing(&measured) && stays();
    // Only the main agent's tool event waits for a missing transcript; what it found stays.
    let unwritten =
        (p.event == "PostToolUse" && p.agent_id.is_none()).then(|| is_missing(&measured));
    // The claim first: it stands even when the transcript cannot be read.
    let mut failure: Option<anyhow::Error> = None;
    let reading = match measured {
        Ok(r) => r,
        Err(e) => {
            failure = Some(e);
            None
        }
    };
    let subagent = p.agent_id.is_some();
    let mut alert: Option<answer::Alert> = None;
    let mut scan = None;
    let mut learn = None;
    let mut not_yet = false;
    let mut outside = None;
    let mut linked = false;
    let state = update_agent(ctx, id, |state| {
        alert = None;
        learn = None;
        not_yet = failure
            .as_ref()
            .is_some_and(|e| not_written_yet(p, e, state));
        let unlinked = state.label.is_none();
        agent_claims::maybe_link(ctx, state, false)?;
        linked = unlinked && state.label.is_some();
        attention::note(state, p, ctx.now);
        outside = agent_claims::outside(ctx, state)?;
        if let Some(unwritten) = unwritten {
            state.transcript_unwritten = unwritten;
        }
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
            trace("hook", || {
                format!(
                    "{tokens} tokens of {} ({}; window {}, {}): {share:.1}%",
                    b.budget, b.budget_source, b.window, b.window_source
                )
            });
            if let Some(t) = state.evaluate(&ctx.config.thresholds, tokens, share, ctx.now) {
                alert = Some(answer::Alert {
                    event: p.event.clone(),
                    threshold: t.clone(),
                    tokens,
                    budget: b,
                    share,
                });
            }
        }
        Ok(())
    })?;
    // Linked here, not at a SessionStart (hooks installed while it ran): its session lists it.
    if let (true, Some(label)) = (linked, &state.label) {
        if let Err(e) = agent_claims::link_session(ctx, label, id) {
            audit_failure(&ctx.store, p, &e);
        }
    }
    let mut lost = None;
    if claim {
        for file in p.file_paths() {
            match agent_claims::record_claim(ctx, &state, &file) {
                Ok(Some(l)) => lost = lost.or(Some(l)),
                Ok(None) => {}
                Err(e) => audit_failure(&ctx.store, p, &e),
            }
        }
    }
    if let Some(pre) = learn {
        remember_point(ctx, &state, pre, p);
    }
    if let Err(e) = record_fill(ctx, &state) {
        audit_failure(&ctx.store, p, &e);
    }
    if let Some(e) = failure.filter(|_| !not_yet && !known_absent) {
        return Err(e);
    }
    if let Some(o) = &outside {
        agent_claims::audit_outside(ctx, p, o);
    }
    if lost.is_some() || outside.is_some() {
        return Ok(Some(Answer::Told(answer::Told {
            event: p.event.clone(),
            lost,
            outside,
            alert,
        })));
    }
    Ok(alert.map(Answer::Alert))
}

/// A write outside the agent's own worktree, or of a path another live session owns, is
/// refused, in the calling agent's shape.
fn pre_tool_use(ctx: &Ctx, p: &Payload) -> Result<Option<Answer>> {
    if let Some((escapes, label)) = agent_claims::escape(ctx, p)? {
        let mode = ctx.config.guard_escape;
        for escape in &escapes {
            ctx.store.audit(
                "context-escape",
                json!({"target": escape.target, "own": escape.own, "session": label,
                       "agent_session": p.session_id, "mode": format!("{mode:?}").to_lowercase()}),
            );
        }
        let refused = match mode {
            crate::config::Escape::Deny => true,
            crate::config::Escape::Warn => false,
            crate::config::Escape::Allow => return Ok(None),
        };
        if !refused {
            // It goes through: recorded, so list, info and the commit that takes it name it.
            for escape in &escapes {
                if let super::escape::Into::Worktree { root, .. } = &escape.into {
                    if let Err(e) =
                        crate::ownership::escapes::record(&ctx.store, &label, root, &escape.target)
                    {
                        audit_failure(&ctx.store, p, &e);
                    }
                }
            }
        }
        let escape = escapes.into_iter().next().expect("never empty");
        return Ok(Some(Answer::Escape(answer::EscapeAnswer {
            kind: Agent::detect(p, None),
            event: p.event.clone(),
            escape,
            label,
            refused,
        })));
    }
    let Some((rel, owner, me)) = agent_claims::refusal(ctx, p)? else {
        return Ok(None);
    };
    ctx.store.audit(
        "context-deny",
        json!({"path": rel, "owner": owner.label, "session": me, "agent_session": p.session_id}),
    );
    let kind = Agent::detect(p, None);
    Ok(Some(Answer::Deny(answer::Deny { kind, rel, owner })))
}
