//! What an agent session is doing, for the person running it: working, waiting for a
//! permission or for input, ended, or gone.
//!
//! The hook records what the agent's own events say ([`Doing`], as the agent state's mark, see
//! [`super::agent`]) and which process the agent is ([`AgentState::process`], read from the hook's
//! ancestry once per agent process). What is shown ([`shown`]) is a pure function of that
//! record, whether the process still runs, and the time now, so nothing shown can be stuck:
//!
//! - `working` (a prompt or tool call in progress) becomes `quiet` after [`QUIET_AFTER`] without
//!   an event (an interrupted turn sends none), and `gone` when the process no longer runs;
//! - `waiting` (for a permission, or for input after a turn ended) lasts while the process runs;
//!   where the process cannot be judged (none recorded, another host, no start time), it becomes
//!   `quiet` after [`UNJUDGED_AFTER`] without an event;
//! - `gone` (the process ended without an end event: crashed, killed) and `ended` (its end event
//!   came) last until a later event of that agent session (a resume sends SessionStart, which
//!   records the new process).
//!
//! Invariants: the hook reads one symbolic link more for this per call and writes it only when
//! the activity changes (a mark: no lock, no flush), never the state for it; the
//! process is read at SessionStart and when none is recorded; a process is judged gone only by
//! [`crate::base::process::Liveness::Dead`], never by a missing fact.

use super::agent::{self, AgentState};
use super::payload::Payload;
use crate::base::clock::Time;
use crate::base::process::{Liveness, ProcessId};
use crate::session::SessionRecord;
use crate::store::Store;
use serde::{Deserialize, Serialize};

/// Seconds without an event after which a working agent is shown as `quiet`. The hook rewrites
/// an unchanged state at most every [`super::hook::REFRESH`] seconds, so the last event is known
/// to that precision.
pub const QUIET_AFTER: i64 = 5 * 60;

/// Seconds without an event after which a waiting agent whose process cannot be judged is shown
/// as `quiet`.
pub const UNJUDGED_AFTER: i64 = 24 * 60 * 60;

/// What the agent's last event said it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Activity {
    /// A prompt or a tool call is in progress.
    Working,
    /// It asks for a permission (a tool call to approve).
    Permission,
    /// Its turn ended: it waits for the next prompt.
    Input,
    /// Its session ended (SessionEnd).
    Ended,
}

/// The activity recorded in the agent state, and since when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Doing {
    pub activity: Activity,
    /// When the agent entered this activity (a repeat of it keeps the first time).
    pub since: Time,
    /// The event that said so (its agent's own name).
    pub event: String,
}

impl Activity {
    fn as_str(self) -> &'static str {
        match self {
            Activity::Working => "working",
            Activity::Permission => "permission",
            Activity::Input => "input",
            Activity::Ended => "ended",
        }
    }

    fn parse(text: &str) -> Option<Activity> {
        [
            Activity::Working,
            Activity::Permission,
            Activity::Input,
            Activity::Ended,
        ]
        .into_iter()
        .find(|a| a.as_str() == text)
    }
}

/// The longest event name a mark keeps: the event is the agent's own text, shown in `info`.
const MARK_EVENT_MAX: usize = 40;

impl Doing {
    /// The mark's text (see [`crate::store::Store::set_mark`]): `<activity> <since as
    /// seconds.nanoseconds> <event>`, under 60 bytes for every event an agent sends. The event
    /// is the agent's text: its control characters are dropped and it is cut to a bound.
    pub fn to_mark(&self) -> String {
        let event: String = self
            .event
            .chars()
            .filter(|c| !c.is_control())
            .take(MARK_EVENT_MAX)
            .collect();
        format!(
            "{} {}.{:09} {event}",
            self.activity.as_str(),
            self.since.timestamp(),
            self.since.timestamp_subsec_nanos()
        )
    }

    /// [`Self::to_mark`] read back; `None` for anything else.
    pub fn from_mark(text: &str) -> Option<Doing> {
        let (activity, rest) = text.split_once(' ')?;
        let (since, event) = rest.split_once(' ').unwrap_or((rest, ""));
        let (secs, nanos) = since.split_once('.')?;
        let nanos: u32 = nanos.parse().ok().filter(|_| nanos.len() == 9)?;
        let since = chrono::DateTime::from_timestamp(secs.parse().ok()?, nanos)?;
        Some(Doing {
            activity: Activity::parse(activity)?,
            since,
            event: event.to_string(),
        })
    }
}

/// What an event says the agent does now; `None` for an event that says nothing about it (a
/// subagent's stop, a compaction's start, a notification of another kind).
pub fn activity_of(p: &Payload) -> Option<Activity> {
    use crate::context::agents::{role, Role};
    // What the agents table says an event is decides first, for every agent alike; only the
    // events kept for what they say of the agent (`Role::Activity`) are told apart by name.
    match role(&p.event) {
        Role::AfterTool | Role::Prompt | Role::BeforeTool | Role::AfterCompact => {
            return Some(Activity::Working)
        }
        // Startup, resume, clear: the agent waits for its first prompt (in `-p` mode the prompt
        // follows at once). A compaction's SessionStart comes in the middle of a turn.
        Role::SessionStart => {
            return Some(match p.source.as_deref() {
                Some("compact") => Activity::Working,
                _ => Activity::Input,
            })
        }
        Role::BeforeCompact | Role::Ignored => return None,
        Role::Activity => {}
    }
    match p.event.as_str() {
        "PostToolUseFailure" | "PermissionDenied" => Some(Activity::Working),
        "PermissionRequest" => Some(Activity::Permission),
        // Claude Code's `StopFailure`: the turn ended on an API error; the agent waits all the
        // same. Gemini CLI's AfterAgent and Copilot CLI's agentStop end its turn.
        "Stop" | "StopFailure" | "AfterAgent" | "agentStop" => Some(Activity::Input),
        "SessionEnd" | "sessionEnd" => Some(Activity::Ended),
        "Notification" => notification(p),
        _ => None,
    }
}

/// Claude Code's `permission_prompt` and `idle_prompt`, Gemini CLI's `ToolPermission`; an older
/// Claude Code without a type says "permission" in its message.
fn notification(p: &Payload) -> Option<Activity> {
    let kind = p.notification_type.as_deref().unwrap_or("").to_lowercase();
    if kind.contains("permission") {
        return Some(Activity::Permission);
    }
    if kind.contains("idle") {
        return Some(Activity::Input);
    }
    let message = p.message.as_deref().unwrap_or("").to_lowercase();
    (kind.is_empty() && message.contains("permission")).then_some(Activity::Permission)
}

/// The reason of a wait `note` just began (`permission` or `input`), for `[notify]`.
pub fn began_waiting(before: Option<Activity>, state: &AgentState) -> Option<&'static str> {
    let now = state.doing.as_ref()?.activity;
    if before == Some(now) {
        return None;
    }
    match now {
        Activity::Permission => Some("permission"),
        Activity::Input => Some("input"),
        Activity::Working | Activity::Ended => None,
    }
}

/// Records the activity an event says in the state (the first time of a repeated activity
/// stays). At a SessionStart the agent's process may be a new one, so it is read again; at a
/// change of activity it is also read when none is recorded or the recorded one no longer runs.
pub fn note(state: &mut AgentState, p: &Payload, now: Time) {
    let Some(activity) = activity_of(p) else {
        return;
    };
    if state.doing.as_ref().map(|d| d.activity) != Some(activity) {
        state.doing = Some(Doing {
            activity,
            since: now,
            event: p.event.clone(),
        });
    }
    // Besides SessionStart, only on a change of activity (which is written anyway), never per
    // tool call: where no agent process can be found, looking again on every call would cost a
    // `ps` run each time on a platform without /proc.
    let changed = state.doing.as_ref().is_some_and(|d| d.since == now);
    let reread = p.event == "SessionStart"
        || (changed
            && state
                .process
                .as_ref()
                .is_none_or(|known| known.liveness() == Liveness::Dead));
    if reread {
        state.process = super::ancestry::agent_process();
    }
}

/// Whether the agent's process runs, as far as can be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alive {
    Yes,
    No,
    /// No process recorded, recorded on another host, or its start time cannot be read.
    Unknown,
}

impl Alive {
    pub fn of(process: Option<&ProcessId>) -> Alive {
        match process.map(ProcessId::liveness) {
            Some(Liveness::Alive) => Alive::Yes,
            Some(Liveness::Dead) => Alive::No,
            Some(Liveness::OtherHost | Liveness::Unknown) | None => Alive::Unknown,
        }
    }
}

/// What is shown for an agent session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Working,
    /// Working, but no event for longer than its bound.
    Quiet,
    Waiting(Reason),
    /// The process ended without an end event.
    Gone,
    Ended,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Permission,
    Input,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Working => "working",
            State::Quiet => "quiet",
            State::Waiting(_) => "waiting",
            State::Gone => "gone",
            State::Ended => "ended",
        }
    }

    pub fn reason(self) -> Option<&'static str> {
        match self {
            State::Waiting(Reason::Permission) => Some("permission"),
            State::Waiting(Reason::Input) => Some("input"),
            _ => None,
        }
    }

    /// Lower first: who needs the person most (`list --sort attention`).
    pub fn rank(self) -> u8 {
        match self {
            State::Waiting(Reason::Permission) => 0,
            State::Waiting(Reason::Input) => 1,
            State::Gone => 2,
            State::Quiet => 3,
            State::Working => 4,
            State::Ended => 5,
        }
    }

    /// Whether the agent may still act (not gone, not ended).
    pub fn is_live(self) -> bool {
        !matches!(self, State::Gone | State::Ended)
    }
}

/// A shown state and since when it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    pub state: State,
    pub since: Time,
}

/// The state shown for a recorded activity whose last event was at `last_event`, given whether
/// its process runs, at `now`. `None` when no activity was ever recorded.
pub fn shown(doing: Option<&Doing>, last_event: Time, alive: Alive, now: Time) -> Option<Shown> {
    let doing = doing?;
    let silent = (now - last_event).num_seconds();
    let at = |state, since| Some(Shown { state, since });
    match doing.activity {
        Activity::Ended => at(State::Ended, doing.since),
        _ if alive == Alive::No => at(State::Gone, last_event),
        Activity::Working if silent > QUIET_AFTER => at(State::Quiet, last_event),
        Activity::Working => at(State::Working, doing.since),
        Activity::Permission | Activity::Input
            if alive == Alive::Unknown && silent > UNJUDGED_AFTER =>
        {
            at(State::Quiet, last_event)
        }
        Activity::Permission => at(State::Waiting(Reason::Permission), doing.since),
        Activity::Input => at(State::Waiting(Reason::Input), doing.since),
    }
}

/// One agent session's state as shown now.
#[derive(Debug, Clone)]
pub struct AgentView {
    pub agent_session: String,
    pub shown: Shown,
    /// The agent's event that began its recorded activity (`Stop`, `PermissionRequest`, ...).
    pub event: String,
    pub last_event: Time,
    pub pid: Option<u32>,
}

/// When the agent's last event came: the state's `last_seen`, or the start of what it does when
/// that is later (a change of activity alone is written as its mark, not into the state).
fn last_event(state: &AgentState) -> Time {
    state
        .doing
        .as_ref()
        .map_or(state.last_seen, |d| d.since.max(state.last_seen))
}

/// The agent state's view at `now` (its process judged now).
pub fn view(state: &AgentState, now: Time) -> Option<AgentView> {
    let alive = Alive::of(state.process.as_ref());
    let last_event = last_event(state);
    let shown = shown(state.doing.as_ref(), last_event, alive, now)?;
    Some(AgentView {
        agent_session: state.agent_session.clone(),
        shown,
        event: state
            .doing
            .as_ref()
            .map(|d| d.event.clone())
            .unwrap_or_default(),
        last_event,
        pid: state.process.as_ref().map(|p| p.pid),
    })
}

/// Every agent session of a git session that recorded an activity, as shown now, most recent
/// event first. An agent state that cannot be read is left out (the hook's own failures are in
/// the audit log).
pub fn of_session(store: &Store, record: &SessionRecord, now: Time) -> Vec<AgentView> {
    let mut out: Vec<AgentView> = record
        .agent_sessions
        .iter()
        .filter_map(|id| agent::load(store, id).ok().flatten())
        .filter_map(|s| view(&s, now))
        .collect();
    out.sort_by_key(|a| std::cmp::Reverse(a.last_event));
    out
}

/// The one state a git session shows: among its agent sessions that may still act, the one
/// that needs the person most (the longest wait first); else the most recent one.
pub fn summary(agents: &[AgentView]) -> Option<&AgentView> {
    agents
        .iter()
        .filter(|a| a.shown.state.is_live())
        .min_by(|a, b| {
            (a.shown.state.rank(), a.shown.since).cmp(&(b.shown.state.rank(), b.shown.since))
        })
        .or_else(|| agents.first())
}

/// How many git sessions other than `own` have an agent waiting for the person (for a
/// permission or for input), as `list` would show them now: for the statusline, which runs on
/// every refresh. It reads the session records and their agents' states, and judges the
/// process only of an agent whose last activity was a wait (one `/proc` read on Linux); nothing
/// of git, no worktree. A record or agent state that cannot be read counts as not waiting.
pub fn others_waiting(store: &Store, own: Option<&str>, now: Time) -> anyhow::Result<usize> {
    let records = crate::session::load_all(store)?;
    Ok(records
        .iter()
        .filter(|r| own.is_none_or(|own| r.label != own))
        .filter(|r| waits(store, r, now))
        .count())
}

/// Whether any agent of `record` is shown waiting: then [`summary`] shows a wait too (a wait
/// ranks before every other state an agent that may still act can be in).
fn waits(store: &Store, record: &SessionRecord, now: Time) -> bool {
    record
        .agent_sessions
        .iter()
        .filter_map(|id| agent::load(store, id).ok().flatten())
        .filter(|s| {
            matches!(
                s.doing.as_ref().map(|d| d.activity),
                Some(Activity::Permission | Activity::Input)
            )
        })
        .any(|s| view(&s, now).is_some_and(|v| matches!(v.shown.state, State::Waiting(_))))
}

pub mod notify;

#[cfg(test)]
mod tests;
