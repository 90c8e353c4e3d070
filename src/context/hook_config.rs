//! `context install`: merges the hook configuration into Claude Code's `settings.json` (or Codex's
//! `.codex/hooks.json`, or Gemini CLI's `.gemini/settings.json`).
//!
//! GitHub Copilot CLI's `.github/hooks/git-session.json` lists handlers flat under each event
//! ([`super::agents::HookShape::Flat`]); the other three use the same event > matcher group >
//! handler shape; what differs (event names,
//! matchers, the unit of `timeout`, a handler's `name`, Claude Code's worktree hooks and
//! statusline) is each agent's row of [`super::agents::TABLE`].
//!
//! Invariants: every key and hook already in the file stays; an event that already runs our
//! command gets nothing added (so installing twice changes nothing); a file that is not a JSON
//! object is refused, never overwritten; the new file replaces the old one by rename, so a crash
//! leaves the old one whole; keys keep the order they had in the file (ours are appended), so the
//! user's diff of the file shows only what was added.
//!
//! This module merges and writes; the command line (`cli::commands::context::hook_config`) picks
//! the file, passes the command lines of Claude Code's worktree hooks ([`WorktreeHooks`]: they name
//! its own commands), says what happened, and words an [`InstallError`].

use super::agents::{Agent, HookShape, TimeoutUnit, EVENT_ENV};
use anyhow::{Context, Result};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// The command the hooks run: the binary itself, not `git session` (git's dispatch costs about
/// 2 ms more on every tool call). A name on PATH, not this process's absolute path: the project
/// file is committed and shared, and a path of one machine's install breaks on another.
pub const COMMAND: &str = "git-session context hook";

/// The statusline installed when the user has none.
pub const STATUSLINE: &str = "git-session context status --stdin --short";

/// Seconds Claude Code waits for the hook; ours finishes well within one.
pub const TIMEOUT: u64 = 10;

/// Whether a hook's command line runs our hook: `git-session context hook`, or the same through
/// git's dispatch (`git` and `session` as two words), anywhere in it, however it is spaced.
fn is_ours(command: &str) -> bool {
    let c = command.split_whitespace().collect::<Vec<_>>().join(" ");
    let tail = "session context hook";
    c.match_indices(tail)
        .any(|(at, _)| at >= 4 && matches!(&c.as_bytes()[at - 4..at], b"git " | b"git-"))
}

/// Whether a handler runs our command (`command`, or GitHub Copilot CLI's `bash`).
fn handler_is_ours(h: &Value) -> bool {
    ["command", "bash"]
        .iter()
        .any(|k| h.get(*k).and_then(Value::as_str).is_some_and(is_ours))
}

/// Whether a matcher group already runs our command; a flat entry (GitHub Copilot CLI's) is
/// its own handler.
pub fn group_has_ours(group: &Value) -> bool {
    handler_is_ours(group)
        || group
            .get("hooks")
            .and_then(Value::as_array)
            .is_some_and(|hooks| hooks.iter().any(handler_is_ours))
}

/// The command lines Claude Code's `WorktreeCreate` and `WorktreeRemove` hooks run. They name
/// commands of the command line, which passes them in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorktreeHooks {
    pub create: &'static str,
    pub remove: &'static str,
}

/// Why a settings file was not changed. Each line is the technical fact; the command line
/// words it (`cli::words::context_install`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InstallError {
    /// The file is JSON but not the shape the agent reads (`what`: which part is wrong).
    Malformed { file: PathBuf, what: String },
    /// The file is not JSON (`why`: the parser's error).
    NotJson { file: PathBuf, why: String },
    /// HOME is not set, so the user's Claude Code settings cannot be found.
    NoHome,
}

impl std::fmt::Display for InstallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InstallError::Malformed { file, what } => write!(f, "{}: {what}", file.display()),
            InstallError::NotJson { file, why } => {
                write!(f, "{}: not valid JSON ({why})", file.display())
            }
            InstallError::NoHome => {
                f.write_str("HOME is not set; cannot find the user's Claude Code settings")
            }
        }
    }
}

impl std::error::Error for InstallError {}

/// Merges one agent's hooks (and, for Claude Code, its worktree hooks and a statusline when
/// there is none).
pub fn merge_for(
    agent: Agent,
    settings: &mut Value,
    file: &Path,
    worktree: &WorktreeHooks,
) -> Result<Vec<&'static str>> {
    let facts = agent.facts();
    if facts.hook_shape == HookShape::Flat {
        return merge_flat(agent, settings, file);
    }
    let timeout = match facts.timeout_unit {
        TimeoutUnit::Seconds => TIMEOUT,
        TimeoutUnit::Millis => TIMEOUT * 1000,
    };
    let mut handler = Map::new();
    if let Some(name) = facts.handler_name {
        handler.insert("name".into(), json!(name));
    }
    handler.insert("type".into(), json!("command"));
    handler.insert("command".into(), json!(COMMAND));
    handler.insert("timeout".into(), json!(timeout));
    let handler = Value::Object(handler);
    let refuse = |what: &str| -> anyhow::Error {
        InstallError::Malformed {
            file: file.to_path_buf(),
            what: what.to_string(),
        }
        .into()
    };
    let root = settings
        .as_object_mut()
        .ok_or_else(|| refuse("is not a JSON object"))?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| refuse("`hooks` is not an object"))?;
    let mut added = Vec::new();
    for (event, matcher) in facts.install {
        let groups = hooks
            .entry(event.to_string())
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(|| refuse(&format!("`hooks.{event}` is not an array")))?;
        if groups.iter().any(group_has_ours) {
            continue;
        }
        let mut group = Map::new();
        if let Some(m) = matcher {
            group.insert("matcher".into(), json!(m));
        }
        group.insert("hooks".into(), json!([handler.clone()]));
        groups.push(Value::Object(group));
        added.push(*event);
    }
    if facts.worktree_hooks {
        merge_worktree_hooks(hooks, worktree, &refuse, &mut added)?;
    }
    // A statusline the user has is theirs: never replaced.
    if facts.statusline && !root.contains_key("statusLine") {
        root.insert(
            "statusLine".into(),
            json!({"type": "command", "command": STATUSLINE}),
        );
        added.push("statusLine");
    }
    Ok(added)
}

/// GitHub Copilot CLI's file: `{version: 1, hooks: {event: [handler]}}`, each handler naming
/// its event in [`EVENT_ENV`] (its payloads do not).
fn merge_flat(agent: Agent, settings: &mut Value, file: &Path) -> Result<Vec<&'static str>> {
    let refuse = |what: &str| -> anyhow::Error {
        InstallError::Malformed {
            file: file.to_path_buf(),
            what: what.to_string(),
        }
        .into()
    };
    let root = settings
        .as_object_mut()
        .ok_or_else(|| refuse("is not a JSON object"))?;
    root.entry("version").or_insert(json!(1));
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| refuse("`hooks` is not an object"))?;
    let mut added = Vec::new();
    for (event, matcher) in agent.facts().install {
        let handlers = hooks
            .entry(event.to_string())
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(|| refuse(&format!("`hooks.{event}` is not an array")))?;
        if handlers.iter().any(group_has_ours) {
            continue;
        }
        let mut h = Map::new();
        h.insert("type".into(), json!("command"));
        if let Some(m) = matcher {
            h.insert("matcher".into(), json!(m));
        }
        h.insert("bash".into(), json!(COMMAND));
        h.insert("env".into(), json!({ EVENT_ENV: event }));
        h.insert("timeoutSec".into(), json!(TIMEOUT));
        handlers.push(Value::Object(h));
        added.push(*event);
    }
    Ok(added)
}

/// Claude Code's `WorktreeCreate`/`WorktreeRemove`: its own worktrees become sessions
/// (`git session worktree-hook`, src/cli/commands/worktree_hook.rs). Creation runs a whole
/// `create`, so it gets that command's deadline and more.
fn merge_worktree_hooks(
    hooks: &mut Map<String, Value>,
    worktree: &WorktreeHooks,
    refuse: &dyn Fn(&str) -> anyhow::Error,
    added: &mut Vec<&'static str>,
) -> Result<()> {
    for (event, command) in [
        ("WorktreeCreate", worktree.create),
        ("WorktreeRemove", worktree.remove),
    ] {
        let groups = hooks
            .entry(event.to_string())
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(|| refuse(&format!("`hooks.{event}` is not an array")))?;
        let ours = |g: &Value| {
            g.get("hooks").and_then(Value::as_array).is_some_and(|hs| {
                hs.iter().any(|h| {
                    h.get("command").and_then(Value::as_str).is_some_and(|c| {
                        let c = c.split_whitespace().collect::<Vec<_>>().join(" ");
                        c.contains("session worktree-hook")
                            || c.contains("git-session worktree-hook")
                    })
                })
            })
        };
        if groups.iter().any(ours) {
            continue;
        }
        groups.push(json!({"hooks": [{"type": "command", "command": command, "timeout": 600}]}));
        added.push(event);
    }
    Ok(())
}

/// The user's hook file of `agent` ([`super::agents::Facts::user_hooks`]).
pub fn user_file(agent: Agent) -> std::result::Result<PathBuf, InstallError> {
    (agent.facts().user_hooks)().ok_or(InstallError::NoHome)
}

pub struct Outcome {
    pub path: PathBuf,
    pub text: String,
    pub added: Vec<&'static str>,
}

/// [`install`] for one agent's file.
pub fn install_for(
    agent: Agent,
    path: &Path,
    dry_run: bool,
    worktree: &WorktreeHooks,
) -> Result<Outcome> {
    // Write through a symlink to the file it names (dotfile managers link settings.json).
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut settings = match std::fs::read_to_string(&target) {
        Ok(text) if text.trim().is_empty() => Value::Object(Map::new()),
        Ok(text) => serde_json::from_str(&text).map_err(|e| InstallError::NotJson {
            file: target.clone(),
            why: e.to_string(),
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Value::Object(Map::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", target.display())),
    };
    let added = merge_for(agent, &mut settings, &target, worktree)?;
    let mut text = serde_json::to_string_pretty(&settings)?;
    text.push('\n');
    if !dry_run && !added.is_empty() {
        let dir = target.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir)
            .with_context(|| format!("writing into {}", dir.display()))?;
        std::io::Write::write_all(&mut tmp, text.as_bytes())?;
        tmp.as_file().sync_all()?;
        if let Ok(meta) = std::fs::metadata(&target) {
            let _ = std::fs::set_permissions(tmp.path(), meta.permissions());
        }
        tmp.persist(&target)
            .with_context(|| format!("replacing {}", target.display()))?;
    }
    Ok(Outcome {
        path: target,
        text,
        added,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const WORKTREE: WorktreeHooks = WorktreeHooks {
        create: "git session worktree-hook create",
        remove: "git session worktree-hook remove",
    };

    /// Merges our hooks into Claude Code's `settings`; returns the events it added to.
    fn merge(
        settings: &mut Value,
        file: &Path,
        worktree: &WorktreeHooks,
    ) -> Result<Vec<&'static str>> {
        merge_for(Agent::Claude, settings, file, worktree)
    }

    #[test]
    fn merge_is_idempotent_and_keeps_theirs() {
        let mut v = json!({"model": "x", "hooks": {"PostToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo hi"}]}]}});
        let added = merge(&mut v, Path::new("s.json"), &WORKTREE).unwrap();
        assert_eq!(
            added.len(),
            Agent::Claude.facts().install.len() + 3,
            "the context events, WorktreeCreate/Remove and the statusline: {added:?}"
        );
        assert_eq!(added.last(), Some(&"statusLine"));
        assert_eq!(v["hooks"]["PostToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(v["model"], "x");
        let before = v.clone();
        assert!(merge(&mut v, Path::new("s.json"), &WORKTREE)
            .unwrap()
            .is_empty());
        assert_eq!(v, before);
        assert!(merge(&mut json!([1]), Path::new("s.json"), &WORKTREE).is_err());
        assert!(merge(&mut json!({"hooks": 3}), Path::new("s.json"), &WORKTREE).is_err());
    }

    #[test]
    fn gemini_keeps_its_other_settings() {
        let mut v = json!({"model": {"compressionThreshold": 0.3}, "hooks": {"BeforeTool": [
            {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "x"}]}]}});
        let added = merge_for(Agent::Gemini, &mut v, Path::new("s.json"), &WORKTREE).unwrap();
        assert_eq!(
            added,
            [
                "AfterTool",
                "BeforeTool",
                "BeforeAgent",
                "SessionStart",
                "AfterAgent",
                "Notification",
                "SessionEnd"
            ]
        );
        assert_eq!(v["hooks"]["BeforeTool"].as_array().unwrap().len(), 2);
        assert_eq!(v["hooks"]["AfterTool"][0]["hooks"][0]["timeout"], 10_000);
        assert!(v.get("statusLine").is_none() && v["hooks"].get("WorktreeCreate").is_none());
        assert!(
            merge_for(Agent::Gemini, &mut v, Path::new("s.json"), &WORKTREE)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn our_hook_is_recognised_with_or_without_git_dispatch() {
        for ours in [
            "git-session context hook",
            "git session context hook",
            "/usr/local/bin/git-session   context\thook",
            "env X=1 git  session context hook --flag",
        ] {
            assert!(is_ours(ours), "{ours}");
        }
        for theirs in [
            "session context hook",
            "gitsession context hook",
            "git-session context status",
            "",
        ] {
            assert!(!is_ours(theirs), "{theirs}");
        }
    }

    #[test]
    fn keys_keep_their_order() {
        let text = r#"{"zeta": 1, "model": "x", "alpha": {"y": 1, "b": 2}}"#;
        let mut v: Value = serde_json::from_str(text).unwrap();
        merge(&mut v, Path::new("s.json"), &WORKTREE).unwrap();
        let out = serde_json::to_string(&v).unwrap();
        let at = |k: &str| out.find(k).unwrap_or_else(|| panic!("{k} in {out}"));
        assert!(at("\"zeta\"") < at("\"model\""), "{out}");
        assert!(at("\"model\"") < at("\"alpha\""), "{out}");
        assert!(at("\"y\"") < at("\"b\""), "{out}");
        assert!(at("\"alpha\"") < at("\"hooks\""), "{out}");
    }
}
