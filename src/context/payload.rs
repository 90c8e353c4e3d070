//! The hook payload: what one agent sends on stdin, and which agent sent it.
//!
//! Three agents call the same hook command, each with its own protocol:
//! - Claude Code: `session_id`, `transcript_path`, `cwd`, `hook_event_name`, and per event
//!   `tool_name`/`tool_input`, `source`, `model`, `trigger`, `agent_id` (a subagent's call).
//!   File writes: Write / Edit / MultiEdit (`file_path`), NotebookEdit (`notebook_path`).
//! - Codex: the same event names and fields, plus `turn_id` and `model` on every tool event;
//!   file writes go through `apply_patch`, whose patch text is in `tool_input.command`.
//! - Gemini CLI: its own event names (`BeforeTool`, `AfterTool`, `BeforeAgent`, ...), the same
//!   base fields plus `timestamp`; file writes are `write_file` and `replace` (`file_path`).
//!   Gemini sets `GEMINI_SESSION_ID` / `GEMINI_PROJECT_DIR` in a hook's environment.
//!
//! Invariants: parsing never fails on an unknown or missing field (agents add fields across
//! versions); only a payload that is not a JSON object is an error. [`AgentKind`] is decided from
//! what the payload and transcript themselves say, never from configuration.

use super::transcript::{Format, Reading};
use anyhow::{anyhow, Context, Result};
use serde_json::Value;
use std::path::PathBuf;

/// Tools that write one file, and the `tool_input` key naming it: Claude Code's, then Gemini
/// CLI's (its tool-names source: `write_file`, and `replace` for edits).
pub const FILE_TOOLS: &[(&str, &str)] = &[
    ("Write", "file_path"),
    ("Edit", "file_path"),
    ("MultiEdit", "file_path"),
    ("NotebookEdit", "notebook_path"),
    ("write_file", "file_path"),
    ("replace", "file_path"),
];

/// Gemini CLI's hook events (its hooks reference); none of them is a Claude Code or Codex name.
pub const GEMINI_EVENTS: &[&str] = &[
    "BeforeTool",
    "AfterTool",
    "BeforeAgent",
    "AfterAgent",
    "BeforeModel",
    "AfterModel",
    "BeforeToolSelection",
    "PreCompress",
    "SessionEnd",
    "Notification",
];

/// Which agent made the call: decides the answer's shape and where the agent compacts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentKind {
    Claude,
    Codex,
    Gemini,
}

impl AgentKind {
    /// From the payload, the transcript reading and the hook's environment, most specific
    /// first: a Gemini event name; the transcript's format; Codex's `turn_id` or `apply_patch`;
    /// for SessionStart alone (the one event name all three share), Gemini's environment
    /// variable; else Claude Code. A Claude Code or Codex event name is never Gemini's, so the
    /// answer to it never takes Gemini's shape.
    pub fn detect(p: &Payload, reading: Option<&Reading>) -> AgentKind {
        if GEMINI_EVENTS.contains(&p.event.as_str()) {
            return AgentKind::Gemini;
        }
        let shared = p.event == "SessionStart";
        match reading.and_then(|r| r.format) {
            Some(Format::Gemini) if shared => return AgentKind::Gemini,
            Some(Format::Codex) => return AgentKind::Codex,
            Some(Format::Claude) => return AgentKind::Claude,
            _ => {}
        }
        if p.turn_id.is_some() || p.tool_name.as_deref() == Some("apply_patch") {
            return AgentKind::Codex;
        }
        if shared && std::env::var_os("GEMINI_SESSION_ID").is_some() {
            return AgentKind::Gemini;
        }
        AgentKind::Claude
    }

    /// From a transcript's format alone (Claude Code when it says nothing).
    pub fn of_reading(reading: &Reading) -> AgentKind {
        match reading.format {
            Some(Format::Gemini) => AgentKind::Gemini,
            Some(Format::Codex) => AgentKind::Codex,
            Some(Format::Claude) | None => AgentKind::Claude,
        }
    }
}

/// The fields of a hook payload this tool reads; everything else is ignored.
#[derive(Debug, Clone, Default)]
pub struct Payload {
    pub session_id: Option<String>,
    pub transcript_path: Option<PathBuf>,
    pub cwd: Option<PathBuf>,
    pub event: String,
    pub tool_name: Option<String>,
    pub tool_input: Value,
    pub source: Option<String>,
    pub trigger: Option<String>,
    pub model: Option<String>,
    pub window: Option<u64>,
    /// Set when a subagent made the call (Claude Code's `agent_id`).
    pub agent_id: Option<String>,
    /// Codex's turn id (every Codex tool event carries one).
    pub turn_id: Option<String>,
    /// The tool call a tool event is about (Claude Code's and Codex's `tool_use_id`).
    pub tool_use_id: Option<String>,
    /// A statusline payload's `context_window.current_usage` input-side tokens (null before the
    /// first API answer) and `used_percentage`.
    pub used_tokens: Option<u64>,
    pub used_percentage: Option<f64>,
    /// A Notification's kind (Claude Code's `permission_prompt`, `idle_prompt`; Gemini CLI's
    /// `ToolPermission`) and its text: read to tell a permission prompt, never passed on.
    pub notification_type: Option<String>,
    pub message: Option<String>,
}

pub fn string(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .filter(|s| !s.is_empty())
}

impl Payload {
    pub fn parse(bytes: &[u8]) -> Result<Payload> {
        let v: Value = serde_json::from_slice(bytes).context("the hook input is not JSON")?;
        if !v.is_object() {
            return Err(anyhow!("the hook input is not a JSON object"));
        }
        let model = match v.get("model") {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            Some(Value::Object(m)) => string(&Value::Object(m.clone()), "id"),
            _ => None,
        };
        let window = v
            .get("context_window")
            .and_then(|w| {
                w.as_u64()
                    .or_else(|| w.get("context_window_size").and_then(Value::as_u64))
            })
            .or_else(|| v.get("model_context_window").and_then(Value::as_u64))
            .or_else(|| v.get("context_window_size").and_then(Value::as_u64));
        Ok(Payload {
            session_id: string(&v, "session_id"),
            transcript_path: string(&v, "transcript_path").map(PathBuf::from),
            cwd: string(&v, "cwd").map(PathBuf::from),
            event: string(&v, "hook_event_name").unwrap_or_default(),
            tool_name: string(&v, "tool_name"),
            tool_input: v.get("tool_input").cloned().unwrap_or(Value::Null),
            source: string(&v, "source"),
            trigger: string(&v, "trigger"),
            model,
            window,
            agent_id: string(&v, "agent_id"),
            turn_id: string(&v, "turn_id"),
            tool_use_id: string(&v, "tool_use_id"),
            used_tokens: v
                .get("context_window")
                .and_then(|w| w.get("current_usage"))
                .filter(|u| u.is_object())
                .map(|u| {
                    [
                        "input_tokens",
                        "cache_creation_input_tokens",
                        "cache_read_input_tokens",
                    ]
                    .iter()
                    .filter_map(|k| u.get(*k).and_then(Value::as_u64))
                    .sum()
                }),
            used_percentage: v
                .get("context_window")
                .and_then(|w| w.get("used_percentage"))
                .and_then(Value::as_f64),
            notification_type: string(&v, "notification_type"),
            message: string(&v, "message"),
        })
    }

    /// The files a file-writing tool call writes: one for Claude Code's and Gemini CLI's tools,
    /// every file a Codex `apply_patch` names.
    pub fn file_paths(&self) -> Vec<String> {
        let Some(tool) = self.tool_name.as_deref() else {
            return Vec::new();
        };
        if tool == "apply_patch" {
            let text = match &self.tool_input {
                Value::String(s) => Some(s.as_str()),
                v => v
                    .get("command")
                    .or_else(|| v.get("input"))
                    .and_then(Value::as_str),
            };
            return text.map(super::patch::files).unwrap_or_default();
        }
        FILE_TOOLS
            .iter()
            .find(|(t, _)| *t == tool)
            .and_then(|(_, key)| string(&self.tool_input, key))
            .into_iter()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_tolerates_shapes() {
        let p = Payload::parse(
            br#"{"session_id":"s","hook_event_name":"SessionStart","model":{"id":"m[1m]"},"extra":1}"#,
        )
        .unwrap();
        assert_eq!(p.model.as_deref(), Some("m[1m]"));
        assert!(Payload::parse(b"[1,2]").is_err());
        assert!(Payload::parse(b"{\"tool_name\":").is_err());
        let w = Payload::parse(
            br#"{"hook_event_name":"PreToolUse","tool_name":"NotebookEdit","tool_input":{"notebook_path":"/a/b.ipynb"}}"#,
        )
        .unwrap();
        assert_eq!(w.file_paths(), ["/a/b.ipynb"]);
        let codex = Payload::parse(
            br#"{"hook_event_name":"PreToolUse","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Update File: x.rs\n*** End Patch\n"}}"#,
        )
        .unwrap();
        assert_eq!(codex.file_paths(), ["x.rs"]);
        assert_eq!(AgentKind::detect(&codex, None), AgentKind::Codex);
        let gemini = Payload::parse(
            br#"{"hook_event_name":"BeforeTool","tool_name":"replace","tool_input":{"file_path":"src/a.rs","old_string":"a","new_string":"b"}}"#,
        )
        .unwrap();
        assert_eq!(gemini.file_paths(), ["src/a.rs"]);
        assert_eq!(AgentKind::detect(&gemini, None), AgentKind::Gemini);
        // A Claude Code event name is never answered in Gemini's shape.
        let gemini_file = Reading {
            format: Some(Format::Gemini),
            ..Reading::default()
        };
        assert_eq!(AgentKind::detect(&w, Some(&gemini_file)), AgentKind::Claude);
    }
}
