//! Every agent's row of facts ([`TABLE`]) and where each agent's files are, from the
//! environment the agent itself reads (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`, `GEMINI_CLI_HOME`,
//! `COPILOT_HOME`, ...). The types the rows are made of, and what each fact means, are in the
//! parent module.

use super::{
    Agent, CommandLine, ContextShape, DenyShape, Facts, HookShape, Input, Role, TimeoutUnit,
};
use std::path::{Path, PathBuf};

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
        needs_trust: None,
        install_note: None,
        env_marker: None,
        compaction_files: claude_settings_files,
        deny: DenyShape::PermissionDecision,
        transcript: |_| None,
        context: ContextShape::HookSpecific,
        hook_shape: HookShape::Grouped,
        default: true,
        own_events_only: false,
        payload_marker: None,
        records_late: true,
        compaction_inferred: false,
        command_line: Some(CommandLine {
            programs: &["claude", "claude.exe"],
            script: ("claude-code", "cli.js"),
            option: "--autocompact",
        }),
        user_install: true,
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
        needs_trust: Some("/hooks"),
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
        default: false,
        own_events_only: false,
        payload_marker: Some("turn_id"),
        records_late: false,
        compaction_inferred: false,
        command_line: None,
        user_install: false,
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
        needs_trust: None,
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
        default: false,
        own_events_only: true,
        payload_marker: None,
        records_late: false,
        compaction_inferred: true,
        command_line: None,
        user_install: false,
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
        needs_trust: None,
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
        default: false,
        own_events_only: false,
        payload_marker: None,
        records_late: true,
        // Its compactions are not read (none was observed; `preCompact` is ignored).
        compaction_inferred: false,
        command_line: None,
        user_install: false,
    },
];

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
