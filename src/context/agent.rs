//! Per-agent-session state: `agents/<agent-session-id>.toml` in the store.
//!
//! Invariants a reader must not break:
//! - The file name comes from [`file_name`], never from the raw id: an id is whatever the agent
//!   sent on stdin, so anything outside `A-Z a-z 0-9 . _ -` is replaced and a hash of the raw id
//!   keeps two different ids apart.
//! - Every change goes through `Store::update` on that file, so concurrent hooks of one agent
//!   (parallel tool calls) lose no fired threshold and fire none twice. The one exception is what
//!   the agent does ([`AgentState::doing`]): a change of it alone is the mark
//!   `agents/<name>.doing` ([`crate::store::Store::set_mark`]), which wins over the file's copy,
//!   so the start and the end of every turn cost the hook no locked, flushed write. Whoever
//!   shows what an agent does reads the state with [`load`], which takes the mark in.
//! - Each threshold fires at most once between resets; a reset (compaction, `/clear`) clears the
//!   fired set and the wrap-up record together.

use crate::base::clock::Time;
use crate::base::hash;
use crate::config::Threshold;
use serde::{Deserialize, Serialize};

pub const AGENT_VERSION: u32 = 1;

/// How much of the wrap-up was done (the command line's `--scope` maps onto it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Tier 1 only: commit, memory and status, kickoff note; the rest deferred.
    Essential,
    /// The whole wrap-up.
    Full,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Essential => "essential",
            Scope::Full => "full",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WrapUp {
    pub scope: Scope,
    pub at: Time,
}

/// One threshold this agent session has passed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fired {
    pub threshold: f64,
    pub tokens: u64,
    pub percent: f64,
    pub at: Time,
    /// False when a higher threshold crossed in the same call spoke instead of this one.
    #[serde(default = "yes")]
    pub alerted: bool,
}

/// A compaction whose events have begun to arrive and that no later call has settled yet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compacting {
    /// Counted already (an event said it happened).
    pub counted: bool,
    /// Its compaction point was already learned from the transcript.
    #[serde(default)]
    pub learned: bool,
    /// The transcript's length at the first event: the compaction's record lies after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    pub at: Time,
}

fn yes() -> bool {
    true
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentState {
    pub version: u32,
    pub agent_session: String,
    /// The git session this agent works for, once linked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<crate::session::Label>,
    /// The directories outside its session's worktree this agent was told it runs in (each
    /// once: at SessionStart or its first tool call from there).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub told_outside: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub window: u64,
    pub window_source: String,
    /// Where the agent compacts (what thresholds are shares of), and where that came from.
    #[serde(default)]
    pub budget: u64,
    #[serde(default)]
    pub budget_source: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_percent: Option<f64>,
    /// The window Claude Code reported for this agent session in a statusline payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statusline_window: Option<u64>,
    /// Claude Code's `--autocompact` as its command line gave it, once read; read again at each SessionStart ([`super::ancestry::remembered`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_line: Option<super::ancestry::Remembered>,
    /// Tokens above the fallback window were seen once: the window is 1M for good.
    #[serde(default)]
    pub observed_large: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
    /// The transcript the last tool event named was still missing after the whole wait for
    /// it: the agent does not write one (`claude -p --no-session-persistence`), so the next
    /// tool event does not wait again.
    #[serde(default, skip_serializing_if = "is_false")]
    pub transcript_unwritten: bool,
    /// The cwd a link to a git session was last looked for from (to look again only on change).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_cwd: Option<String>,
    pub first_seen: Time,
    pub last_seen: Time,
    #[serde(default)]
    pub compactions: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_compaction: Option<Time>,
    /// A compaction under way: its events (PreCompact, SessionStart(compact), PostCompact, in
    /// any order, any of them) are one compaction until the next main-agent call settles it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compacting: Option<Compacting>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrapped_up: Option<WrapUp>,
    #[serde(default)]
    pub fired: Vec<Fired>,
    /// What its last events said it does ([`super::attention`]): kept as the state's mark
    /// ([`load`]), read here only from a file an earlier version wrote.
    #[serde(default, skip_serializing)]
    pub doing: Option<super::attention::Doing>,
    /// The agent's process, read from the hook's ancestry ([`super::ancestry::agent_process`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<crate::base::process::ProcessId>,
}

impl AgentState {
    pub fn new(id: &str, now: Time) -> AgentState {
        AgentState {
            told_outside: Vec::new(),
            version: AGENT_VERSION,
            agent_session: id.to_string(),
            label: None,
            model: None,
            window: crate::config::DEFAULT_WINDOW,
            window_source: "default".to_string(),
            budget: crate::config::DEFAULT_WINDOW - super::budget::DEFAULT_RESERVE,
            budget_source: "default".to_string(),
            budget_percent: None,
            statusline_window: None,
            command_line: None,
            observed_large: false,
            tokens: None,
            percent: None,
            transcript: None,
            transcript_unwritten: false,
            link_cwd: None,
            first_seen: now,
            last_seen: now,
            compactions: 0,
            last_compaction: None,
            compacting: None,
            wrapped_up: None,
            fired: Vec::new(),
            doing: None,
            process: None,
        }
    }

    pub fn has_fired(&self, threshold: f64) -> bool {
        self.fired.iter().any(|f| f.threshold == threshold)
    }

    /// Forgets fired thresholds and the wrap-up: the context starts over.
    pub fn reset(&mut self) {
        self.fired.clear();
        self.wrapped_up = None;
    }

    /// Counts one compaction that is known to have happened, and starts the context over.
    pub fn count_compaction(&mut self, now: Time) {
        self.reset();
        self.compactions = self.compactions.saturating_add(1);
        self.last_compaction = Some(now);
    }

    /// One event of a compaction arrived. `happened`: the event says the compaction took place
    /// (PostCompact, SessionStart(compact)); PreCompact does not (another hook may still block
    /// it). Every event until the compaction is settled ([`AgentState::settle_compaction`]) is
    /// the same compaction, whatever their order: it is counted once, at the first event that
    /// says it happened. `offset`: the transcript's length now (the compaction's record is
    /// written after it); the first event's is kept.
    pub fn compaction_event(&mut self, happened: bool, offset: Option<u64>, now: Time) {
        let c = self.compacting.get_or_insert(Compacting {
            counted: false,
            learned: false,
            offset,
            at: now,
        });
        if c.offset.is_none() {
            c.offset = offset;
        }
        if happened && !c.counted {
            c.counted = true;
            self.count_compaction(now);
        }
    }

    /// The first main-agent call after a compaction's events ends it. `recorded`: the
    /// transcript now holds the compaction's record, so a compaction announced only by
    /// PreCompact did happen and is counted here; without it, a PreCompact alone was blocked.
    /// Returns the ended compaction.
    pub fn settle_compaction(&mut self, recorded: bool, now: Time) -> Option<Compacting> {
        let c = self.compacting.take()?;
        if recorded && !c.counted {
            self.count_compaction(now);
        }
        Some(c)
    }

    /// Records the thresholds `percent` crosses and returns the one to announce, if any.
    ///
    /// One alert per call: when several unfired thresholds are crossed at once (a jump from 60 %
    /// to 96 %), only the highest speaks and the lower ones are recorded as passed. After a
    /// wrap-up, every threshold above the lowest (the awareness one) is suppressed: the agent has
    /// already done what they would ask.
    pub fn evaluate<'t>(
        &mut self,
        thresholds: &'t [Threshold],
        tokens: u64,
        percent: f64,
        now: Time,
    ) -> Option<&'t Threshold> {
        let lowest = thresholds
            .iter()
            .map(|t| t.percent)
            .fold(f64::INFINITY, f64::min);
        let wrapped = self.wrapped_up.is_some();
        let mut crossed: Vec<&Threshold> = thresholds
            .iter()
            .filter(|t| percent >= t.percent && !self.has_fired(t.percent))
            .filter(|t| !(wrapped && t.percent > lowest))
            .collect();
        crossed.sort_by(|a, b| a.percent.total_cmp(&b.percent));
        let speaker = crossed.last().copied()?;
        for t in &crossed {
            self.fired.push(Fired {
                threshold: t.percent,
                tokens,
                percent: round1(percent),
                at: now,
                alerted: t.percent == speaker.percent,
            });
        }
        Some(speaker)
    }

    /// Thresholds passed, ascending.
    pub fn fired_thresholds(&self) -> Vec<f64> {
        let mut v: Vec<f64> = self.fired.iter().map(|f| f.threshold).collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    }
}

pub fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// `agents/<safe name>.toml` for an agent session id; `None` for an empty id.
pub fn store_path(id: &str) -> Option<String> {
    file_name(id).map(|n| format!("agents/{n}.toml"))
}

/// `agents/<safe name>.doing`: the mark of what the agent does (module doc).
pub fn doing_path(id: &str) -> Option<String> {
    file_name(id).map(|n| format!("agents/{n}.doing"))
}

/// What the agent's mark says it does; `None` without a readable mark.
pub fn marked_doing(store: &crate::store::Store, id: &str) -> Option<super::attention::Doing> {
    super::attention::Doing::from_mark(&store.mark(&doing_path(id)?)?)
}

/// Writes what the agent does as its mark.
pub fn mark_doing(
    store: &crate::store::Store,
    id: &str,
    doing: &super::attention::Doing,
) -> anyhow::Result<()> {
    let rel = doing_path(id).ok_or_else(|| anyhow::anyhow!("empty session_id"))?;
    store.set_mark(&rel, &doing.to_mark())
}

/// The agent state of `id` with what its mark says it does.
pub fn load(store: &crate::store::Store, id: &str) -> anyhow::Result<Option<AgentState>> {
    let Some(rel) = store_path(id) else {
        return Ok(None);
    };
    let Some(mut state) = store.read::<AgentState>(&rel)? else {
        return Ok(None);
    };
    if let Some(doing) = marked_doing(store, id) {
        state.doing = Some(doing);
    }
    Ok(Some(state))
}

/// A file name that is safe for any id: the id itself when it is already plain (UUIDs are), else
/// its plain characters plus a hash of the raw id.
pub fn file_name(id: &str) -> Option<String> {
    if id.is_empty() {
        return None;
    }
    let plain = id.len() <= 128
        && !id.starts_with('.')
        && !id.starts_with('-')
        && !id.ends_with(".lock")
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if plain {
        return Some(id.to_string());
    }
    let kept: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    Some(format!("x{kept}-{:016x}", hash::fnv1a_64(id.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::default_thresholds;

    fn now() -> Time {
        chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc)
    }

    #[test]
    fn once_each_highest_speaks() {
        let ts = default_thresholds();
        let mut s = AgentState::new("a", now());
        assert!(s.evaluate(&ts, 1, 50.0, now()).is_none());
        assert_eq!(s.evaluate(&ts, 1, 96.0, now()).unwrap().percent, 95.0);
        assert_eq!(s.fired_thresholds(), vec![70.0, 90.0, 95.0]);
        assert!(s.evaluate(&ts, 1, 99.0, now()).is_none());
        s.compaction_event(true, Some(10), now());
        s.compaction_event(false, Some(20), now());
        assert_eq!(s.compactions, 1);
        assert!(s.fired.is_empty());
    }

    #[test]
    fn one_compaction_whatever_the_order_of_its_events() {
        // (event says it happened?) in the orders agents send them; a PreCompact alone is
        // counted only when the transcript records the compaction.
        let orders: [&[bool]; 6] = [
            &[false, true, true],
            &[false, true],
            &[true, true],
            &[true],
            &[true, false, true],
            &[false],
        ];
        for events in orders {
            for recorded in [true, false] {
                let mut s = AgentState::new("a", now());
                s.compacting = None;
                for happened in events {
                    s.compaction_event(*happened, Some(5), now());
                }
                let ended = s.settle_compaction(recorded, now()).unwrap();
                assert_eq!(ended.offset, Some(5));
                let want = u32::from(recorded || events.contains(&true));
                assert_eq!(s.compactions, want, "{events:?} recorded {recorded}");
                assert!(s.compacting.is_none());
                // The next compaction is another one.
                s.compaction_event(true, None, now());
                assert_eq!(s.compactions, want + 1);
            }
        }
    }

    #[test]
    fn wrap_up_silences_the_high_ones() {
        let ts = default_thresholds();
        let mut s = AgentState::new("a", now());
        assert_eq!(s.evaluate(&ts, 1, 71.0, now()).unwrap().percent, 70.0);
        s.wrapped_up = Some(WrapUp {
            scope: Scope::Full,
            at: now(),
        });
        assert!(s.evaluate(&ts, 1, 97.0, now()).is_none());
    }

    #[test]
    fn file_names() {
        let uuid = "0b1c2d3e-1111-2222-3333-444455556666";
        assert_eq!(file_name(uuid).unwrap(), uuid);
        let odd = file_name("../../etc/passwd").unwrap();
        assert!(!odd.contains('/') && !odd.starts_with('.'), "{odd}");
        assert_ne!(file_name("a/b"), file_name("a_b"));
        assert_eq!(file_name(""), None);
    }
}
