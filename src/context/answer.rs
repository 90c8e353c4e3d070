//! What the hook answers, as typed values: who the agent is (SessionStart), a newly crossed
//! threshold (the tool and prompt events), a refused write (PreToolUse, BeforeTool).
//!
//! Invariant: the domain decides whether and what to answer; the words and each agent's answer
//! shape are the command line's (`cli::commands::context::render`), which renders an [`Answer`]
//! once, as the hook's only output. Nothing here is worded, so the hook names no command.

use super::agents::Agent;
use super::budget::Budget;
use crate::config::Threshold;
use crate::ownership::{Owner, RepoPath};
use crate::session::{Claim, SessionRecord};

/// One hook call's answer.
#[derive(Debug, Clone)]
pub enum Answer {
    /// SessionStart: the git session this agent works in.
    Identity(Box<Identity>),
    /// A threshold crossed in this call, recorded as fired before it is answered.
    Alert(Alert),
    /// A write of a path another live session owns.
    Deny(Deny),
    /// A write outside the agent's own worktree, inside the repository: refused, or (with
    /// `[guard] escape = "warn"`) let through with a word to the model.
    Escape(EscapeAnswer),
    /// What a tool event (PostToolUse, AfterTool) has to tell beyond an alert: a write that
    /// went through but lost the race for its path (another session's claim was recorded
    /// first), an agent running outside its session's worktree. Any alert of the same call
    /// rides along.
    Told(Told),
}

#[derive(Debug, Clone)]
pub struct EscapeAnswer {
    /// Whose answer shape it takes, and which event it answers.
    pub kind: Agent,
    pub event: String,
    pub escape: super::escape::Escape,
    /// The session the agent belongs to.
    pub label: crate::session::Label,
    /// Refused (deny), or only told (warn).
    pub refused: bool,
}

#[derive(Debug, Clone)]
pub struct Told {
    /// The event answered (the answer names it).
    pub event: String,
    /// The path whose claim race this agent's write lost, and its owner.
    pub lost: Option<(RepoPath, Owner)>,
    pub outside: Option<Outside>,
    pub alert: Option<Alert>,
}

/// An agent that runs outside the worktree of the session it belongs to.
#[derive(Debug, Clone)]
pub struct Outside {
    pub label: crate::session::Label,
    /// Where it runs (the payload's cwd), and the session's worktree.
    pub cwd: std::path::PathBuf,
    pub own: std::path::PathBuf,
}

#[derive(Debug, Clone)]
pub struct Identity {
    /// The event answered (its name says whose shape the answer takes).
    pub event: String,
    pub record: SessionRecord,
    /// The session's claims, from its claims file.
    pub claims: Vec<Claim>,
    pub agent_session: String,
    /// The session's latest handoff note, when it has one.
    pub handoff: Option<Handoff>,
    /// Why a commit in the session's worktree, made in this agent's environment, would not run
    /// the pre-commit guard; `None` when it would.
    pub guard_off: Option<crate::hooks::force::Off>,
    /// The agent starts outside the session's worktree.
    pub outside: Option<Outside>,
}

#[derive(Debug, Clone)]
pub struct Handoff {
    /// Its number among the session's notes.
    pub number: u32,
    pub note: String,
}

#[derive(Debug, Clone)]
pub struct Alert {
    /// The event answered (the answer names it).
    pub event: String,
    /// The threshold that speaks (the highest crossed in this call).
    pub threshold: Threshold,
    pub tokens: u64,
    pub budget: Budget,
    /// `tokens` as a percentage of the compaction point.
    pub share: f64,
}

#[derive(Debug, Clone)]
pub struct Deny {
    /// Whose answer shape the refusal takes.
    pub kind: Agent,
    /// The refused path, relative to the repository.
    pub rel: RepoPath,
    pub owner: Owner,
}
