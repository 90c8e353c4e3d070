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
//! Invariants: every agent is in [`TABLE`] once, in the order of [`Agent::ALL`]; an event name
//! two agents send has one [`Role`] (the hook dispatches on the name alone); every tool an
//! agent's installed `PreToolUse`/`BeforeTool` matcher names is one of its file tools, and
//! back. Paths come from the environment each agent itself reads (`CLAUDE_CONFIG_DIR`,
//! `CODEX_HOME`, `GEMINI_CLI_HOME`, ...), never from configuration of ours.

use std::path::{Path, PathBuf};

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
    /// Its project hooks run only once the user trusted them (Codex).
    pub needs_trust: bool,
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
}

/// Every agent's facts, in the order of [`Agent::ALL`].
pub const TABLE: &[Facts] = &[
    Facts {
        agent: Agent::Claude,
        id: "claude",
        name: "Claude Code",
        events: &[
            ("SessionStart", Role::SessionStart),
            ("PostToolUse", Role::AfterTool),
            ("UserPromptSubmit", Role::Prompt),
            ("PreToolUse", Role::BeforeTool),
            ("PreCompact", Role::BeforeCompact),
            ("PostCompact", Role::AfterCompact),
            ("Stop", Role::Activity),
            ("StopFailure", Role::Activity),
            ("SessionEnd", Role::Activity),
            ("Notification", Role::Activity),
            ("PermissionRequest", Role::Activity),
            ("PermissionDenied", Role::Activity),
            ("PostToolUseFailure", Role::Activity),
            ("SubagentStart", Role::Ignored),
            ("SubagentStop", Role::Ignored),
        ],
        // PreCompact is not among them: the compaction is counted where it happened
        // (PostCompact, SessionStart `compact`), and a PreCompact that another hook blocks
        // never compacts. From Stop on, what the agent does (`list`, `context::attention`).
        install: &[
            ("PostToolUse", Some("*")),
            ("PreToolUse", Some("Write|Edit|MultiEdit|NotebookEdit")),
            ("UserPromptSubmit", None),
            ("PostCompact", None),
            ("SessionStart", None),
            ("Stop", None),
            ("StopFailure", None),
            ("PermissionRequest", Some("*")),
            ("PermissionDenied", Some("*")),
            ("PostToolUseFailure", Some("*")),
            ("Notification", Some("permission_prompt|idle_prompt")),
            ("SessionEnd", None),
        ],
        file_tools: &[
            ("Write", Input::Key("file_path")),
            ("Edit", Input::Key("file_path")),
            ("MultiEdit", Input::Key("file_path")),
            ("NotebookEdit", Input::Key("notebook_path")),
        ],
        timeout_unit: TimeoutUnit::Seconds,
        handler_name: None,
        worktree_hooks: true,
        statusline: true,
        user_hooks: claude_user_settings,
        project_hooks: &[".claude/settings.json", ".claude/settings.local.json"],
        local_hooks: Some(".claude/settings.local.json"),
        linked_needs_dir: None,
        needs_trust: false,
        install_note: None,
        env_marker: None,
        compaction_files: claude_settings_files,
        deny: DenyShape::PermissionDecision,
        transcript: |_| None,
        context: ContextShape::HookSpecific,
        hook_shape: HookShape::Grouped,
    },
    Facts {
        agent: Agent::Codex,
        id: "codex",
        name: "Codex",
        // Its hooks docs: the same names as Claude Code's, a subset of them.
        events: &[
            ("SessionStart", Role::SessionStart),
            ("PostToolUse", Role::AfterTool),
            ("UserPromptSubmit", Role::Prompt),
            ("PreToolUse", Role::BeforeTool),
            ("PostCompact", Role::AfterCompact),
            ("Stop", Role::Activity),
            ("PermissionRequest", Role::Activity),
            ("SessionEnd", Role::Activity),
        ],
        // `<repo>/.codex/hooks.json`: the same event > matcher group > handler shape; the root
        // holds only `description` and `hooks`.
        install: &[
            ("PostToolUse", Some("*")),
            ("PreToolUse", Some("apply_patch")),
            ("UserPromptSubmit", None),
            ("PostCompact", None),
            ("SessionStart", None),
            ("Stop", None),
            ("PermissionRequest", Some("*")),
            ("SessionEnd", None),
        ],
        file_tools: &[("apply_patch", Input::Patch)],
        timeout_unit: TimeoutUnit::Seconds,
        handler_name: None,
        worktree_hooks: false,
        statusline: false,
        user_hooks: codex_user_hooks,
        project_hooks: &[".codex/hooks.json"],
        local_hooks: None,
        linked_needs_dir: Some(".codex"),
        needs_trust: true,
        install_note: Some(
            "Codex runs project hooks only once trusted: review and trust them with /hooks in \
             Codex (a changed hook needs trusting again)",
        ),
        env_marker: None,
        compaction_files: codex_config_files,
        deny: DenyShape::PermissionDecision,
        transcript: |_| None,
        context: ContextShape::HookSpecific,
        hook_shape: HookShape::Grouped,
    },
    Facts {
        agent: Agent::Gemini,
        id: "gemini",
        name: "Gemini CLI",
        // Its hooks reference; SessionStart, SessionEnd and Notification are also Claude
        // Code's names, the rest its own.
        events: &[
            ("SessionStart", Role::SessionStart),
            ("AfterTool", Role::AfterTool),
            ("BeforeAgent", Role::Prompt),
            ("BeforeTool", Role::BeforeTool),
            ("AfterAgent", Role::Activity),
            ("SessionEnd", Role::Activity),
            ("Notification", Role::Activity),
            ("BeforeModel", Role::Ignored),
            ("AfterModel", Role::Ignored),
            ("BeforeToolSelection", Role::Ignored),
            // Fires on every attempt, compressing or not: no compaction event.
            ("PreCompress", Role::Ignored),
        ],
        // Tool matchers are regular expressions tested unanchored, so the file-writing tools
        // are anchored; `*` matches every tool.
        install: &[
            ("AfterTool", Some("*")),
            ("BeforeTool", Some("^(write_file|replace)$")),
            ("BeforeAgent", None),
            ("SessionStart", None),
            ("AfterAgent", None),
            ("Notification", None),
            ("SessionEnd", None),
        ],
        file_tools: &[
            ("write_file", Input::Key("file_path")),
            ("replace", Input::Key("file_path")),
        ],
        timeout_unit: TimeoutUnit::Millis,
        handler_name: Some("git-session-context"),
        worktree_hooks: false,
        statusline: false,
        user_hooks: gemini_user_settings,
        project_hooks: &[".gemini/settings.json"],
        local_hooks: None,
        linked_needs_dir: None,
        needs_trust: false,
        install_note: Some(
            "Gemini CLI warns before it first runs a new or changed project hook; `/hooks panel` \
             in Gemini CLI lists them",
        ),
        env_marker: Some("GEMINI_SESSION_ID"),
        compaction_files: gemini_settings_files,
        deny: DenyShape::Decision,
        transcript: |_| None,
        context: ContextShape::HookSpecific,
        hook_shape: HookShape::Grouped,
    },
    Facts {
        agent: Agent::Copilot,
        id: "copilot",
        name: "GitHub Copilot CLI",
        // Its hooks reference's camelCase names (camelCase payloads; the PascalCase names get
        // Claude Code's tool names, `Write`, with Copilot's argument keys: docs/agents.md).
        events: &[
            ("sessionStart", Role::SessionStart),
            ("postToolUse", Role::AfterTool),
            ("userPromptSubmitted", Role::Prompt),
            ("preToolUse", Role::BeforeTool),
            ("agentStop", Role::Activity),
            ("sessionEnd", Role::Activity),
            ("subagentStop", Role::Ignored),
            ("errorOccurred", Role::Ignored),
            ("postToolUseFailure", Role::Ignored),
            ("preCompact", Role::Ignored),
            ("permissionRequest", Role::Ignored),
            ("notification", Role::Ignored),
        ],
        // Matchers are regular expressions anchored as `^(?:pattern)$` on its tool names.
        install: &[
            ("postToolUse", None),
            ("preToolUse", Some("create|edit")),
            ("userPromptSubmitted", None),
            ("sessionStart", None),
            ("agentStop", None),
            ("sessionEnd", None),
        ],
        file_tools: &[("create", Input::Key("path")), ("edit", Input::Key("path"))],
        timeout_unit: TimeoutUnit::Seconds,
        handler_name: None,
        worktree_hooks: false,
        statusline: false,
        user_hooks: copilot_user_hooks,
        project_hooks: &[".github/hooks/git-session.json"],
        local_hooks: None,
        linked_needs_dir: None,
        needs_trust: false,
        install_note: Some(
            "GitHub Copilot CLI runs a repository's hooks only in a folder you trusted: answer \
             its trust question when it starts in a session's worktree (trusted for future \
             sessions, the folder is kept in ~/.copilot/config.json)",
        ),
        env_marker: Some("COPILOT_CLI"),
        compaction_files: no_compaction_files,
        deny: DenyShape::TopLevelPermission,
        transcript: copilot_transcript,
        context: ContextShape::TopLevel,
        hook_shape: HookShape::Flat,
    },
];

impl Agent {
    /// Every agent, in the table's order.
    pub const ALL: [Agent; 4] = [Agent::Claude, Agent::Codex, Agent::Gemini, Agent::Copilot];

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

fn env_dir(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// `HOME`, when set and not empty.
pub fn home() -> Option<PathBuf> {
    env_dir("HOME")
}

/// Claude Code's configuration directory: `CLAUDE_CONFIG_DIR`, else `~/.claude`.
fn claude_dir() -> Option<PathBuf> {
    env_dir("CLAUDE_CONFIG_DIR").or_else(|| home().map(|h| h.join(".claude")))
}

/// `~/.claude/settings.json` (or under `CLAUDE_CONFIG_DIR`).
pub fn claude_user_settings() -> Option<PathBuf> {
    claude_dir().map(|d| d.join("settings.json"))
}

/// Codex's home: `CODEX_HOME`, else `~/.codex`.
fn codex_home() -> Option<PathBuf> {
    env_dir("CODEX_HOME").or_else(|| home().map(|h| h.join(".codex")))
}

fn codex_user_hooks() -> Option<PathBuf> {
    codex_home().map(|d| d.join("hooks.json"))
}

/// Gemini CLI's `~/.gemini/settings.json` (`GEMINI_CLI_HOME` moves `~`).
fn gemini_user_settings() -> Option<PathBuf> {
    env_dir("GEMINI_CLI_HOME")
        .or_else(home)
        .map(|h| h.join(".gemini").join("settings.json"))
}

/// GitHub Copilot CLI's home: `COPILOT_HOME`, else `~/.copilot`.
fn copilot_home() -> Option<PathBuf> {
    env_dir("COPILOT_HOME").or_else(|| home().map(|h| h.join(".copilot")))
}

/// `$COPILOT_HOME/hooks/git-session.json` (it loads every `*.json` there).
fn copilot_user_hooks() -> Option<PathBuf> {
    copilot_home().map(|d| d.join("hooks").join("git-session.json"))
}

/// `$COPILOT_HOME/session-state/<id>/events.jsonl`, for an id that names one directory.
fn copilot_transcript(id: &str) -> Option<PathBuf> {
    let plain = id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let dir = copilot_home().filter(|_| plain && !id.is_empty())?;
    Some(dir.join("session-state").join(id).join("events.jsonl"))
}

/// An agent whose compaction point no settings file of ours says.
fn no_compaction_files(_: Option<&Path>) -> Vec<(PathBuf, &'static str)> {
    Vec::new()
}

/// Claude Code's settings files, highest precedence first: managed, project-local, project,
/// user.
pub fn claude_settings_files(project: Option<&Path>) -> Vec<(PathBuf, &'static str)> {
    let managed = if cfg!(target_os = "macos") {
        "/Library/Application Support/ClaudeCode/managed-settings.json"
    } else {
        "/etc/claude-code/managed-settings.json"
    };
    let mut v = vec![(PathBuf::from(managed), "managed settings")];
    if let Some(p) = project {
        v.push((p.join(".claude/settings.local.json"), "settings.local.json"));
        v.push((p.join(".claude/settings.json"), "project settings.json"));
    }
    if let Some(user) = claude_user_settings() {
        v.push((user, "user settings.json"));
    }
    v
}

/// Codex's configuration files, highest precedence first: the project's
/// `.codex/config.toml`, then `$CODEX_HOME/config.toml`.
pub fn codex_config_files(project: Option<&Path>) -> Vec<(PathBuf, &'static str)> {
    let mut v = Vec::new();
    if let Some(p) = project {
        v.push((p.join(".codex/config.toml"), "project .codex/config.toml"));
    }
    if let Some(dir) = codex_home() {
        v.push((dir.join("config.toml"), "~/.codex/config.toml"));
    }
    v
}

/// Gemini CLI's settings files, highest precedence first: system settings (which override all
/// others), the project's, the user's, system defaults.
pub fn gemini_settings_files(project: Option<&Path>) -> Vec<(PathBuf, &'static str)> {
    let (system, defaults) = if cfg!(target_os = "macos") {
        (
            "/Library/Application Support/GeminiCli/settings.json",
            "/Library/Application Support/GeminiCli/system-defaults.json",
        )
    } else {
        (
            "/etc/gemini-cli/settings.json",
            "/etc/gemini-cli/system-defaults.json",
        )
    };
    let env_path =
        |var: &str, fallback: &str| env_dir(var).unwrap_or_else(|| PathBuf::from(fallback));
    let mut v = vec![(
        env_path("GEMINI_CLI_SYSTEM_SETTINGS_PATH", system),
        "Gemini system settings",
    )];
    if let Some(p) = project {
        v.push((
            p.join(".gemini/settings.json"),
            "project .gemini/settings.json",
        ));
    }
    if let Some(user) = gemini_user_settings() {
        v.push((user, "~/.gemini/settings.json"));
    }
    v.push((
        env_path("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", defaults),
        "Gemini system defaults",
    ));
    v
}

#[cfg(test)]
#[path = "agents_tests.rs"]
mod tests;
