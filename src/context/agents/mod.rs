//! The agents the context hook serves: one [`Agent`] type and one table of each agent's facts
//! ([`Facts`]): its name, the events it sends, the `(event, matcher)` pairs installed for it,
//! its file-writing tools, its hook files, the files where it is told when to compact, and the
//! shape of its refusals.
//!
//! The concern modules keep their algorithms and read the facts from here: the payload
//! ([`super::payload`]: who sent a call, which files a tool writes), the transcript
//! ([`super::transcript`]: each line's format is an [`Agent`]), the budget
//! ([`super::budget`]: each agent's compaction rule), its settings ([`super::settings`]: the
//! keys read from [`Facts::compaction_files`]), installing ([`super::hook_config`]), whether
//! the hooks load ([`super::loading`]) and the command line's answers.
//!
//! This is the seam: a fact about one agent is a field of [`Facts`], set in its row of [`TABLE`]
//! (`agents/table.rs`); code outside the seam reads facts and never names an agent. The seam's
//! other files hold what cannot be a value: each agent's transcript reader
//! (`transcript/formats.rs`), its budget rule (`budget.rs`, with the keys of its settings in
//! `settings.rs`) and the shapes of its answers (`cli/commands/context/render.rs`).
//! `tests/it/architecture_agents.rs` keeps it so.
//!
//! Invariants: every agent is in [`TABLE`] once, in the order of [`Agent::ALL`] (derived from
//! it); exactly one agent is [`Facts::default`]; an event name two agents send has one
//! [`Role`] (the hook dispatches on the name alone); every tool an agent's installed
//! `PreToolUse`/`BeforeTool` matcher names is one of its file tools, and back. Paths come from the environment each agent itself reads (`CLAUDE_CONFIG_DIR`,
//! `CODEX_HOME`, `GEMINI_CLI_HOME`, ...), never from configuration of ours.

use std::path::{Path, PathBuf};

mod table;
pub use table::TABLE;

/// One agent CLI whose hooks call `git session context hook`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Agent {
    /// Anthropic's Claude Code.
    Claude,
    /// OpenAI's Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    Gemini,
    /// GitHub Copilot CLI.
    Copilot,
}

/// What the hook does with an event (each agent has its own name for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// An agent session starts, resumes, or starts over after a compaction or a clear.
    SessionStart,
    /// A tool ran: measure, claim what it wrote, alert.
    AfterTool,
    /// A prompt arrived (a turn without tool calls is warned too): measure and alert.
    Prompt,
    /// A tool is about to run: refuse a write of another session's path.
    BeforeTool,
    /// A compaction is about to happen (it may still be blocked).
    BeforeCompact,
    /// A compaction happened.
    AfterCompact,
    /// Says what the agent does (for `list`); never answered.
    Activity,
    /// Sent, but not ours to answer.
    Ignored,
}

/// Where a file-writing tool names the file it writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// One file, under this `tool_input` key.
    Key(&'static str),
    /// A patch (Codex's `apply_patch`: `tool_input.command`, or the input itself), naming
    /// every file it writes.
    Patch,
}

/// How an agent reads a refusal of a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenyShape {
    /// `hookSpecificOutput {hookEventName: "PreToolUse", permissionDecision: "deny",
    /// permissionDecisionReason}` (Claude Code, Codex).
    PermissionDecision,
    /// Top-level `{decision: "deny", reason}` (Gemini CLI's BeforeTool).
    Decision,
    /// Top-level `{permissionDecision: "deny", permissionDecisionReason}` (GitHub Copilot CLI's
    /// camelCase `preToolUse`; the reason reaches the model as the tool's result).
    TopLevelPermission,
}

/// Where an agent reads text for the model (identity, alerts) in a hook's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextShape {
    /// `hookSpecificOutput {hookEventName, additionalContext}` (Claude Code, Codex, Gemini CLI).
    HookSpecific,
    /// Top-level `additionalContext` (GitHub Copilot CLI; it ignores `hookSpecificOutput`).
    TopLevel,
}

/// How an agent's hook file lists the handlers of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookShape {
    /// event > matcher group `{matcher, hooks: [{type, command, timeout}]}`.
    Grouped,
    /// event > handler `{type, bash, matcher, timeoutSec, env}` under a `version: 1` root
    /// (GitHub Copilot CLI). Its payloads carry no event name, so each handler names its event
    /// in [`EVENT_ENV`].
    Flat,
}

/// The variable a [`HookShape::Flat`] handler sets to the event it is installed for.
pub const EVENT_ENV: &str = "GIT_SESSION_HOOK_EVENT";

/// The unit of a hook handler's `timeout` in the agent's hook file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutUnit {
    Seconds,
    Millis,
}

/// How an agent's own command line may say where it compacts. Neither the hook's environment
/// nor its payload carries the agent's arguments: they are read from the hook's process
/// ancestry ([`super::ancestry`]), from the nearest ancestor that is this agent.
#[derive(Debug)]
pub struct CommandLine {
    /// The names of the executables that start it.
    pub programs: &'static [&'static str],
    /// Or a script among the first three arguments that starts it: a path that contains the
    /// first text and ends with the second (a node package's entry point).
    pub script: (&'static str, &'static str),
    /// The option whose value is the window it compacts at (`--option N`, `--option=N`; the
    /// last one wins).
    pub option: &'static str,
}

/// One agent's facts.
#[derive(Debug)]
pub struct Facts {
    pub agent: Agent,
    /// What `context install --agent` takes.
    pub id: &'static str,
    /// How people call it.
    pub name: &'static str,
    /// The events it sends, each with what the hook does with it.
    pub events: &'static [(&'static str, Role)],
    /// The events installed for it, with their matcher (`None`: the event takes none).
    pub install: &'static [(&'static str, Option<&'static str>)],
    /// Its file-writing tools and where each names its file.
    pub file_tools: &'static [(&'static str, Input)],
    pub timeout_unit: TimeoutUnit,
    /// The handler's `name` (Gemini CLI: `/hooks disable <name>` finds it).
    pub handler_name: Option<&'static str>,
    /// Claude Code's extras: its `WorktreeCreate`/`WorktreeRemove` hooks and a statusline.
    pub worktree_hooks: bool,
    pub statusline: bool,
    /// The user's hook file (`None` without a home).
    pub user_hooks: fn() -> Option<PathBuf>,
    /// Its project hook files, relative to a worktree's root; `context install` writes the
    /// first.
    pub project_hooks: &'static [&'static str],
    /// The project file that stays on this machine (`--local`), when it has one.
    pub local_hooks: Option<&'static str>,
    /// For a linked worktree it reads the main worktree's project hooks, and only when the
    /// linked one has this directory of its own (Codex: `.codex`).
    pub linked_needs_dir: Option<&'static str>,
    /// Its project hooks run only once the user trusted them, with this command of its own
    /// (Codex: `/hooks`; a changed hook needs trusting again).
    pub needs_trust: Option<&'static str>,
    /// What `context install` tells the user the agent needs before project hooks run (a
    /// review, a trusted folder), when it needs anything.
    pub install_note: Option<&'static str>,
    /// An environment variable it sets for its hooks and no other agent does.
    pub env_marker: Option<&'static str>,
    /// The files that may say where it compacts, highest precedence first, each with the name
    /// a budget source is given.
    pub compaction_files: fn(Option<&Path>) -> Vec<(PathBuf, &'static str)>,
    pub deny: DenyShape,
    /// Where its record of an agent session is, from the session id, when its payloads do not
    /// say (GitHub Copilot CLI's tool events carry no transcript path).
    pub transcript: fn(&str) -> Option<PathBuf>,
    pub context: ContextShape,
    pub hook_shape: HookShape,
    /// The agent assumed when nothing names one: `context install` without `--agent`, a hook
    /// call nothing else identifies, a transcript in no format we know. Its event names are the
    /// ones others borrow (Codex sends a subset of Claude Code's), so an event only it sends
    /// does not decide against a transcript or payload that names another agent. Exactly one
    /// agent is the default.
    pub default: bool,
    /// Every event name it sends is its own (Gemini CLI): a transcript in its format does not
    /// make an event name it never sends its call. Others also send names they do not list
    /// (GitHub Copilot CLI answers to Claude Code's PascalCase names too).
    pub own_events_only: bool,
    /// A payload key only this agent sends, on every tool event (Codex's `turn_id`): a payload
    /// that has it is this agent's.
    pub payload_marker: Option<&'static str>,
    /// Its record of a tool call may land in the transcript after the hook for that call ran
    /// (Claude Code writes it around PostToolUse; GitHub Copilot CLI flushes its events 100 ms
    /// late), so an AfterTool hook waits, briefly, for the call's record
    /// ([`super::payload::Payload::record_key`]) before it measures.
    pub records_late: bool,
    /// It sends no event when it compacts (Gemini CLI's PreCompress fires on every attempt,
    /// compressing or not), so a compaction is inferred from the tokens falling below half of
    /// the lowest alert's.
    pub compaction_inferred: bool,
    /// Its command line can say where it compacts (Claude Code's `--autocompact`).
    pub command_line: Option<CommandLine>,
    /// `context install --user` writes its user hook file ([`Facts::user_hooks`]); for the
    /// others that flag is refused (their user files are written by hand).
    pub user_install: bool,
}

impl Agent {
    /// Every agent, in the table's order (derived from [`TABLE`]).
    pub const ALL: [Agent; TABLE.len()] = {
        let mut all = [TABLE[0].agent; TABLE.len()];
        let mut i = 0;
        while i < TABLE.len() {
            all[i] = TABLE[i].agent;
            i += 1;
        }
        all
    };

    /// The agent assumed when nothing names one ([`Facts::default`]).
    pub fn default_agent() -> Agent {
        TABLE
            .iter()
            .find(|f| f.default)
            .map_or(TABLE[0].agent, |f| f.agent)
    }

    /// This agent's row of [`TABLE`].
    pub fn facts(self) -> &'static Facts {
        &TABLE[self as usize]
    }

    /// Its name as people write it (`Claude Code`).
    pub fn name(self) -> &'static str {
        self.facts().name
    }

    /// Its name on the command line (`claude`).
    pub fn id(self) -> &'static str {
        self.facts().id
    }

    /// The agent `context install --agent` names.
    pub fn from_id(id: &str) -> Option<Agent> {
        TABLE.iter().find(|f| f.id == id).map(|f| f.agent)
    }

    /// The ids `context install --agent` takes.
    pub fn ids() -> impl Iterator<Item = &'static str> {
        TABLE.iter().map(|f| f.id)
    }

    /// Whether this agent sends `event`.
    pub fn sends(self, event: &str) -> bool {
        self.facts().events.iter().any(|(e, _)| *e == event)
    }

    /// The agent that alone sends `event`, when exactly one does.
    pub fn only_sender(event: &str) -> Option<Agent> {
        let mut senders = Agent::ALL.into_iter().filter(|a| a.sends(event));
        let first = senders.next()?;
        senders.next().is_none().then_some(first)
    }

    /// The agent a file-writing tool belongs to, and where it names its file.
    pub fn file_tool(tool: &str) -> Option<(Agent, Input)> {
        TABLE.iter().find_map(|f| {
            f.file_tools
                .iter()
                .find(|(t, _)| *t == tool)
                .map(|(_, input)| (f.agent, *input))
        })
    }
}

/// What the hook does with `event`, whoever sent it (`Ignored` for a name no agent sends).
pub fn role(event: &str) -> Role {
    TABLE
        .iter()
        .flat_map(|f| f.events.iter())
        .find(|(e, _)| *e == event)
        .map_or(Role::Ignored, |(_, r)| *r)
}

#[cfg(test)]
mod tests;
