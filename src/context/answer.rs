//! What the hook answers, as typed values: who the agent is (SessionStart), a newly crossed
//! threshold (the tool and prompt events), a refused write (PreToolUse, BeforeTool).
//!
//! Invariant: the domain decides whether and what to answer; the words and each agent's answer
//! shape are the command line's (`cli::commands::context::render`), which renders an [`Answer`]
//! once, as the hook's only output. Nothing here is worded, so the hook names no command.

use super::budget::Budget;
use super::payload::AgentKind;
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
    /// A write that went through but lost the race for its path: another session's claim was
    /// recorded first (PostToolUse, AfterTool). Any alert of the same call rides along.
    Lost(Lost),
}

#[derive(Debug, Clone)]
pub struct Lost {
    /// The event answered (the answer names it).
    pub event: String,
    pub rel: RepoPath,
    pub owner: Owner,
    pub alert: Option<Alert>,
}

#[derive(Debug, Clone)]
pub struct Identity {
    pub record: SessionRecord,
    /// The session's claims, from its claims file.
    pub claims: Vec<Claim>,
    pub agent_session: String,
    /// The session's latest handoff note, when it has one.
    pub handoff: Option<Handoff>,
    /// Why a commit in the session's worktree, made in this agent's environment, would not run
    /// the pre-commit guard; `None` when it would.
    pub guard_off: Option<crate::hooks::force::Off>,
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
    pub kind: AgentKind,
    /// The refused path, relative to the repository.
    pub rel: RepoPath,
    pub owner: Owner,
}
