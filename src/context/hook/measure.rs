//! Measuring at the right moment: the transcript read once the call a payload is about has
//! reached it (within [`catch_up`]), and the compactions whose events and records arrive in any
//! order (see the parent module).
//!
//! Invariant: the wait is bounded by a share of the hook's [`budget`], and a compaction is
//! settled only by what the transcript says (its record, or a model call after it).

use super::state::update_agent;
use super::{agent_id, audit_failure, Ctx};
use crate::context::agent::AgentState;
use crate::context::agents::{self, Agent, Role};
use crate::context::budget;
use crate::context::payload::Payload;
use crate::context::transcript::{self, Reading};
use anyhow::{anyhow, Context, Result};
use std::path::Path;
use std::time::Duration;

/// Reads the transcript, if the payload names one. A missing or unreadable one is an error (the
/// caller audits it); an undecided reading is `tokens: None`.
pub(super) fn measure(p: &Payload) -> Result<Option<Reading>> {
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

/// Reads the transcript once the call the payload is about is in it (for an agent whose
/// records land late: [`Facts::records_late`](crate::context::agents::Facts::records_late)): the
/// newest usage on disk is then that call's. Waits at most [`catch_up`]; after
/// that the reading is what is there.
///
/// Claude Code creates a new agent session's transcript with its first records, a moment
/// before the first tool's PostToolUse (about 20 ms here) and on a fast machine after it: a
/// transcript that does not exist yet, or says nothing yet, is waited for like any late record,
/// the agent then known from the payload; unless `missing_stays` says it was still missing
/// after a whole wait before (an agent that writes none), when a missing one is not waited for.
/// `missing_stays` is asked only when the transcript is missing, so the usual call reads no
/// more than the transcript.
pub(super) fn measure_current(
    p: &Payload,
    missing_stays: &dyn Fn() -> bool,
) -> Result<Option<Reading>> {
    let first = measure(p);
    let (Some(path), Some(quoted)) = (&p.transcript_path, &p.record_key) else {
        return first;
    };
    // A subagent's tool calls are recorded in its own transcript, never in this one.
    if agents::role(&p.event) != Role::AfterTool || p.agent_id.is_some() {
        return first;
    }
    let said = first.as_ref().ok().and_then(Option::as_ref);
    let late = Agent::detect(p, said).facts().records_late;
    if !late || is_missing(&first) && missing_stays() {
        return first;
    }
    let started = std::time::Instant::now();
    let limit = catch_up();
    loop {
        match recorded(path, quoted) {
            // The record was whole before the first reading ended: that reading has it.
            Recorded::Until(end) if covers(&first, end) => return first,
            Recorded::Until(_) | Recorded::Never => return measure(p),
            Recorded::NotYet if started.elapsed() >= limit => return measure(p),
            Recorded::NotYet => std::thread::sleep(CATCH_UP_STEP),
        }
    }
}

/// Whether `reading` was taken of the file at least `end` bytes long.
fn covers(reading: &Result<Option<Reading>>, end: u64) -> bool {
    matches!(reading, Ok(Some(r)) if r.len >= end)
}

/// Where the call's record stands in the transcript.
enum Recorded {
    /// In a whole line; the file's whole lines end at this offset.
    Until(u64),
    /// Not yet (or the transcript is not created yet).
    NotYet,
    /// The transcript cannot be read; the reading says why.
    Never,
}

/// Whether a measuring failed because the transcript does not exist.
pub(super) fn is_missing<T>(measured: &Result<T>) -> bool {
    measured.as_ref().err().is_some_and(not_found)
}

fn not_found(err: &anyhow::Error) -> bool {
    err.downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::NotFound)
}

/// Whether the call's record has reached the transcript whole (its id in a line whose newline
/// has landed: a record read half-written would give the call before's fill).
fn recorded(path: &Path, quoted: &str) -> Recorded {
    match transcript::tail_has_line_with(path, quoted, CATCH_UP_TAIL) {
        Ok(Some(end)) => Recorded::Until(end),
        Ok(None) => Recorded::NotYet,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Recorded::NotYet,
        Err(_) => Recorded::Never,
    }
}

/// Whether a measuring failure is only a transcript that does not exist yet: the agent writes
/// it at its first model call, and a prompt event (UserPromptSubmit, BeforeAgent) of a new
/// agent session comes before that (`claude -p` sends one). Only when this agent session has
/// never recorded that transcript: one that existed and is gone is a failure.
pub(super) fn not_written_yet(p: &Payload, err: &anyhow::Error, state: &AgentState) -> bool {
    let prompt = matches!(p.event.as_str(), "UserPromptSubmit" | "BeforeAgent");
    let missing = not_found(err);
    let known = match (&p.transcript_path, &state.transcript) {
        (Some(path), Some(seen)) => Path::new(seen) == path.as_path(),
        _ => false,
    };
    prompt && missing && !known
}

/// The transcript's length now: a compaction's record is written after its hooks run.
pub(super) fn transcript_len(p: &Payload) -> Option<u64> {
    let path = p.transcript_path.as_ref()?;
    std::fs::metadata(path).ok().map(|m| m.len())
}

/// One event of a compaction (PreCompact: `happened` false; PostCompact and
/// SessionStart(compact): true), in any order: counted once, see
/// [`AgentState::compaction_event`]. A subagent's compaction is its own context's. When the
/// compaction's record is already readable (agents that write it before these hooks), its
/// point is learned now.
pub(super) fn compaction_event(ctx: &Ctx, p: &Payload, happened: bool) -> Result<()> {
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
pub(super) fn settle_compaction(
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
pub(super) fn stale(state: &AgentState, reading: Option<&Reading>) -> bool {
    let Some(c) = state.compacting.as_ref().filter(|c| c.counted) else {
        return false;
    };
    match (reading, c.offset) {
        (Some(r), Some(offset)) => r.tokens.is_some() && r.at < offset,
        _ => false,
    }
}

/// Remembers where this agent compacted on its own, for this model.
pub(super) fn remember_point(ctx: &Ctx, state: &AgentState, pre: u64, p: &Payload) {
    let Some(model) = state.model.as_deref() else {
        return;
    };
    if let Err(e) = budget::remember_observed(&ctx.store, model, pre) {
        audit_failure(&ctx.store, p, &e);
    }
}

/// How many earlier agent sessions of a worktree a SessionStart looks at.
const EARLIER: usize = 4;

/// SessionStart: a compaction of an earlier agent session of the same git session that no
/// later call of that agent settled (it ended first, or this one started before its next call)
/// is read from that agent's transcript now, so its point is known before this agent session's
/// first budget, however fast it starts. That earlier state is marked learned under its lock,
/// so the point is remembered once (its own next call, if any, does not learn it again).
/// Returns whether a point was learned.
pub(super) fn learn_from_earlier(
    ctx: &Ctx,
    p: &Payload,
    record: &crate::session::SessionRecord,
    id: &str,
) -> bool {
    let mut learned = false;
    let earlier = record.agent_sessions.iter().rev().filter(|a| *a != id);
    for other in earlier.take(EARLIER) {
        let Some(rel) = crate::context::agent::store_path(other) else {
            continue;
        };
        let Ok(Some(state)) = ctx.store.read::<AgentState>(&rel) else {
            continue;
        };
        let (Some(c), Some(path)) = (&state.compacting, &state.transcript) else {
            continue;
        };
        if c.learned || state.model.is_none() {
            continue;
        }
        let offset = c.offset.unwrap_or(0);
        let Ok(Some(boundary)) = transcript::compaction_since(Path::new(path), offset) else {
            continue;
        };
        let Some(pre) = boundary.auto_compact_at else {
            continue;
        };
        let mut first = false;
        let marked = ctx.store.update::<AgentState, _>(&rel, |cur| {
            first = false;
            Ok(cur.map(|mut s| {
                if let Some(c) = s.compacting.as_mut().filter(|c| !c.learned) {
                    c.learned = true;
                    first = true;
                }
                s
            }))
        });
        match marked {
            Ok(_) if first => {
                remember_point(ctx, &state, pre, p);
                learned = true;
            }
            Ok(_) => {}
            Err(e) => audit_failure(&ctx.store, p, &e),
        }
    }
    learned
}
