//! The agent's state through one hook call: read-modify-write under its lock (skipped when
//! nothing worth writing changed), a transcript reading applied to it (window, compaction point,
//! fill), and the fill copied into the linked session's record.
//!
//! Invariants: a change of what the agent does is its mark (`agents/<name>.doing`, see
//! [`crate::context::agent`]), written at once and alone: a turn's start and end change it, twice
//! a turn, and the state's locked, renamed write there cost the hook a third of its time. Token
//! counts alone are rewritten at most every [`REFRESH`] seconds; everything else is written when
//! it changes. A write that changes only what a machine crash voids anyway (its process, its
//! token count, when it was last seen: the agent died with the machine) is not fsync'd
//! ([`crash_voids`]). Everything else (a threshold told, the window learned, the link) is
//! written durably.

use super::Ctx;
use crate::base::clock::Time;
use crate::context::agent::{self, AgentState};
use crate::context::agents::Agent;
use crate::context::attention::Doing;
use crate::context::budget;
use crate::context::payload::Payload;
use crate::context::transcript::Reading;
use crate::context::window::{self, Inputs};
use crate::session::{ContextFill, SessionRecord};
use anyhow::{anyhow, Result};
use std::path::PathBuf;

/// Activity and token counts alone are rewritten at most this often (each write is fsync'd; the
/// freshest fill is always in the session record and the transcript).
pub const REFRESH: i64 = 60;

pub(super) fn fresh(state: &mut AgentState, id: &str, now: Time) {
    state.version = agent::AGENT_VERSION;
    state.agent_session = id.to_string();
    if state.last_seen < now {
        state.last_seen = now;
    }
}

/// Whether `next` differs from `old` in anything but the token count and what the agent does
/// (its mark), or `old` is older than [`REFRESH`].
pub(super) fn worth_writing(old: &AgentState, next: &AgentState, now: Time) -> bool {
    if (now - old.last_seen).num_seconds() >= REFRESH {
        return true;
    }
    let mut a = old.clone();
    let mut b = next.clone();
    for s in [&mut a, &mut b] {
        s.tokens = None;
        s.percent = None;
        s.last_seen = now;
        // Its own mark says what the agent does.
        s.doing = None;
    }
    a != b
}

/// Whether `next` differs from `old` only in what a machine crash voids (module doc).
fn crash_voids(old: &AgentState, next: &AgentState) -> bool {
    let mut a = old.clone();
    let mut b = next.clone();
    for s in [&mut a, &mut b] {
        s.tokens = None;
        s.percent = None;
        s.last_seen = old.last_seen;
        s.doing = None;
        s.process = None;
    }
    a == b
}

/// Read-modify-write of the agent's state under its lock; creates it on first sight. `f` runs
/// first on an unlocked copy: when that changes nothing worth writing, no lock is taken and
/// nothing is written; otherwise it runs again on the locked current state, whose result wins.
pub(super) fn update_agent(
    ctx: &Ctx,
    id: &str,
    mut f: impl FnMut(&mut AgentState) -> Result<()>,
) -> Result<AgentState> {
    let rel = agent::store_path(id).ok_or_else(|| anyhow!("empty session_id"))?;
    // What the agent does: its mark, newer than the state's copy.
    let mut marked = agent::marked_doing(&ctx.store, id);
    let with_mark = |state: &mut AgentState, marked: &Option<Doing>| {
        if let Some(d) = marked {
            state.doing = Some(d.clone());
        }
    };
    let mut unsynced = false;
    if let Some(mut old) = ctx.store.read::<AgentState>(&rel)? {
        with_mark(&mut old, &marked);
        let mut next = old.clone();
        fresh(&mut next, id, ctx.now);
        f(&mut next)?;
        if let Some(doing) = next.doing.as_ref().filter(|d| marked.as_ref() != Some(*d)) {
            agent::mark_doing(&ctx.store, id, doing)?;
            marked = Some(doing.clone());
        }
        if !worth_writing(&old, &next, ctx.now) {
            return Ok(next);
        }
        unsynced = crash_voids(&old, &next);
    }
    // Decided again under the lock: another event may have changed the state since.
    let mut write = |unsynced: bool| {
        let store = if unsynced {
            ctx.store.clone().volatile()
        } else {
            ctx.store.clone()
        };
        store.update::<AgentState, _>(&rel, |cur| {
            let was = cur.clone();
            let mut state = cur.unwrap_or_else(|| AgentState::new(id, ctx.now));
            with_mark(&mut state, &marked);
            fresh(&mut state, id, ctx.now);
            f(&mut state)?;
            if unsynced && !was.is_some_and(|was| crash_voids(&was, &state)) {
                return Err(anyhow::Error::new(NeedsSync));
            }
            Ok(Some(state))
        })
    };
    let written = match write(unsynced) {
        Err(e) if e.downcast_ref::<NeedsSync>().is_some() => write(false),
        other => other,
    }?
    .ok_or_else(|| anyhow!("agent state not written"))?;
    if let Some(doing) = written
        .doing
        .as_ref()
        .filter(|d| marked.as_ref() != Some(*d))
    {
        agent::mark_doing(&ctx.store, id, doing)?;
    }
    Ok(written)
}

/// The state changed under the lock in more than a crash voids: written again, durably.
#[derive(Debug)]
struct NeedsSync;

impl std::fmt::Display for NeedsSync {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the agent state needs a durable write")
    }
}

impl std::error::Error for NeedsSync {}

/// Applies a reading to the state: window chain, tokens, percent.
pub(super) fn apply_reading(
    ctx: &Ctx,
    p: &Payload,
    state: &mut AgentState,
    reading: Option<&Reading>,
) {
    let kind = Agent::detect(p, reading);
    let tokens = reading.and_then(|r| r.tokens);
    if kind.facts().compaction_inferred {
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
    sources.command_line = crate::context::ancestry::remembered(
        kind,
        &mut state.command_line,
        p.event == "SessionStart",
    );
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
pub(super) fn infer_compression(state: &mut AgentState, tokens: Option<u64>, now: Time) {
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
pub(super) fn project_dir(ctx: &Ctx) -> PathBuf {
    std::env::var_os("CLAUDE_PROJECT_DIR")
        .or_else(|| std::env::var_os("GEMINI_PROJECT_DIR"))
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| ctx.repo.as_ref().and_then(|r| r.current_worktree.clone()))
        .unwrap_or_else(|| ctx.cwd.clone())
}

/// Records the fill in the linked session's record (what `list` and `info` show). Skipped when
/// the record already says the same and its activity is fresher than [`REFRESH`].
pub(super) fn record_fill(ctx: &Ctx, state: &AgentState) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::crash_voids;
    use crate::context::agent::{AgentState, Fired};
    use crate::context::attention::{Activity, Doing};

    #[test]
    fn only_what_the_agent_does_and_its_counts_skip_the_fsync() {
        let t0 = crate::base::clock::now();
        let t1 = t0 + chrono::Duration::seconds(5);
        let old = AgentState::new("a", t0);
        let mut turn = old.clone();
        turn.doing = Some(Doing {
            activity: Activity::Input,
            since: t1,
            event: "Stop".into(),
        });
        turn.tokens = Some(120_000);
        turn.percent = Some(71.0);
        turn.last_seen = t1;
        assert!(crash_voids(&old, &turn));
        let mut told = turn.clone();
        told.fired.push(Fired {
            threshold: 70.0,
            tokens: 120_000,
            percent: 71.0,
            at: t1,
            alerted: true,
        });
        assert!(!crash_voids(&old, &told));
        let mut learned = turn.clone();
        learned.window = 1_000_000;
        assert!(!crash_voids(&old, &learned));
        let mut linked = turn;
        linked.label = Some(crate::session::Label::new("x").unwrap());
        assert!(!crash_voids(&old, &linked));
    }
}
