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
//! - GitHub Copilot CLI (camelCase events, its own format): `sessionId`, `cwd`, `timestamp`
//!   (milliseconds) and per event `toolName`/`toolArgs` (an object; a JSON string is read as
//!   one), `source`, `transcriptPath`; no event name, so the installed handler names it in
//!   [`EVENT_ENV`]. File writes: `create` and `edit` (`path`).
//!
//! Invariants: parsing never fails on an unknown or missing field (agents add fields across
//! versions); only a payload that is not a JSON object is an error. [`Agent::detect`] decides from
//! what the payload and transcript themselves say, never from configuration.

use super::agents::{Agent, Input, EVENT_ENV, TABLE};
use super::transcript::Reading;
use anyhow::{anyhow, Context, Result};
use serde_json::Value;
use std::path::PathBuf;

impl Agent {
    /// From the payload, the transcript reading and the hook's environment, most specific
    /// first: an event only one agent sends ([`Agent::only_sender`]) unless that agent is the
    /// default ([`Facts::default`]: others borrow its names); the transcript's format, unless
    /// that agent sends only its own names ([`Facts::own_events_only`]) and this is not one of
    /// them; a payload key only one agent sends ([`Facts::payload_marker`]), or a file tool only
    /// one agent has on an event that agent sends (`apply_patch`); for SessionStart alone (the
    /// one event name all of them share), an agent's own environment variable
    /// ([`Facts::env_marker`]); else the default agent. So an event name the default agent
    /// sends is never answered in the shape of an agent that never sends it because of the
    /// transcript alone.
    ///
    /// [`Facts::default`]: super::agents::Facts::default
    /// [`Facts::own_events_only`]: super::agents::Facts::own_events_only
    /// [`Facts::payload_marker`]: super::agents::Facts::payload_marker
    /// [`Facts::env_marker`]: super::agents::Facts::env_marker
    pub fn detect(p: &Payload, reading: Option<&Reading>) -> Agent {
        if let Some(a) = Agent::only_sender(&p.event).filter(|a| !a.facts().default) {
            return a;
        }
        match reading.and_then(|r| r.format) {
            Some(a) if !a.facts().own_events_only || a.sends(&p.event) => return a,
            _ => {}
        }
        if let Some(a) = p.marked_by {
            return a;
        }
        let tool = p.tool_name.as_deref().and_then(Agent::file_tool);
        if let Some((a, _)) = tool.filter(|(a, _)| a.sends(&p.event)) {
            return a;
        }
        if p.event == "SessionStart" {
            let marked = TABLE.iter().find(|f| {
                f.env_marker
                    .is_some_and(|var| std::env::var_os(var).is_some())
            });
            if let Some(f) = marked {
                return f.agent;
            }
        }
        Agent::default_agent()
    }

    /// From a transcript's format alone (the default agent when it says nothing).
    pub fn of_reading(reading: &Reading) -> Agent {
        reading.format.unwrap_or_else(Agent::default_agent)
    }
}

/// The fields of a hook payload this tool reads; everything else is ignored.
#[derive(Debug, Clone, Default)]
pub struct Payload {
    /// The agent session's id (Copilot CLI: `sessionId`).
    pub session_id: Option<String>,
    /// The agent's transcript, where it names one.
    pub transcript_path: Option<PathBuf>,
    /// Where the agent runs.
    pub cwd: Option<PathBuf>,
    /// The event, in the agent's own name for it (Copilot CLI's comes from the installed
    /// handler's `GIT_SESSION_HOOK_EVENT`).
    pub event: String,
    /// The tool a tool event is about.
    pub tool_name: Option<String>,
    /// That tool's input, as the agent sent it (`Null` when absent).
    pub tool_input: Value,
    /// Why a session started: `startup`, `resume`, `clear` or `compact`.
    pub source: Option<String>,
    /// What started a compaction: `auto` or `manual`.
    pub trigger: Option<String>,
    /// The model, where the payload names it.
    pub model: Option<String>,
    /// A statusline payload's `context_window.context_window_size`.
    pub window: Option<u64>,
    /// Set when a subagent made the call (Claude Code's `agent_id`).
    pub agent_id: Option<String>,
    /// The agent whose own key the payload has ([`super::agents::Facts::payload_marker`]:
    /// Codex's `turn_id`).
    pub marked_by: Option<Agent>,
    /// The tool call a tool event is about (Claude Code's and Codex's `tool_use_id`).
    pub tool_use_id: Option<String>,
    /// Text the agent writes into its transcript with this call's own record, once what came
    /// before the call is there: Claude Code's quoted `tool_use_id`; GitHub Copilot CLI's
    /// `"timestamp":<ms>` (the hook input it records, its events flushed 100 ms late).
    pub record_key: Option<String>,
    /// A statusline payload's `context_window.current_usage` input-side tokens (null before the
    /// first API answer) and `used_percentage`.
    pub used_tokens: Option<u64>,
    /// A statusline payload's `context_window.used_percentage`.
    pub used_percentage: Option<f64>,
    /// A Notification's kind (Claude Code's `permission_prompt`, `idle_prompt`; Gemini CLI's
    /// `ToolPermission`) and its text: read to tell a permission prompt, never passed on.
    pub notification_type: Option<String>,
    /// A Notification's text.
    pub message: Option<String>,
}

pub fn string(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .filter(|s| !s.is_empty())
}

impl Payload {
    /// Parses a payload; the event is `hook_event_name`, else what the handler set in
    /// [`EVENT_ENV`] (GitHub Copilot CLI's payloads name none).
    pub fn parse(bytes: &[u8]) -> Result<Payload> {
        Payload::parse_as(bytes, std::env::var(EVENT_ENV).ok().as_deref())
    }

    /// [`Payload::parse`] with `event` standing in for a missing `hook_event_name`.
    pub fn parse_as(bytes: &[u8], event: Option<&str>) -> Result<Payload> {
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
        // Copilot's camelCase keys stand in for the snake_case ones the others send.
        let either = |snake: &str, camel: &str| string(&v, snake).or_else(|| string(&v, camel));
        let tool_input = match v.get("tool_input").or_else(|| v.get("toolArgs")) {
            Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
            Some(other) => other.clone(),
            None => Value::Null,
        };
        let session_id = either("session_id", "sessionId");
        let event = string(&v, "hook_event_name")
            .or_else(|| event.filter(|e| !e.is_empty()).map(str::to_string))
            .unwrap_or_default();
        // Where the agent that alone sends this event keeps the record its payload leaves out.
        let transcript_path = either("transcript_path", "transcriptPath")
            .map(PathBuf::from)
            .or_else(|| {
                let agent = Agent::only_sender(&event)?;
                (agent.facts().transcript)(session_id.as_deref()?)
            });
        Ok(Payload {
            session_id,
            transcript_path,
            cwd: string(&v, "cwd").map(PathBuf::from),
            event,
            tool_name: either("tool_name", "toolName"),
            tool_input,
            source: string(&v, "source"),
            trigger: string(&v, "trigger"),
            model,
            window,
            agent_id: string(&v, "agent_id"),
            marked_by: TABLE
                .iter()
                .find(|f| f.payload_marker.is_some_and(|k| string(&v, k).is_some()))
                .map(|f| f.agent),
            record_key: match v.get("timestamp").and_then(Value::as_u64) {
                Some(ms) if v.get("sessionId").is_some() => Some(format!("\"timestamp\":{ms}")),
                _ => string(&v, "tool_use_id").map(|id| format!("\"{id}\"")),
            },
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
        match Agent::file_tool(tool) {
            Some((_, Input::Key(key))) => string(&self.tool_input, key).into_iter().collect(),
            Some((_, Input::Patch)) => {
                let text = match &self.tool_input {
                    Value::String(s) => Some(s.as_str()),
                    v => v
                        .get("command")
                        .or_else(|| v.get("input"))
                        .and_then(Value::as_str),
                };
                text.map(super::patch::files).unwrap_or_default()
            }
            None => Vec::new(),
        }
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
        assert_eq!(Agent::detect(&codex, None), Agent::Codex);
        let gemini = Payload::parse(
            br#"{"hook_event_name":"BeforeTool","tool_name":"replace","tool_input":{"file_path":"src/a.rs","old_string":"a","new_string":"b"}}"#,
        )
        .unwrap();
        assert_eq!(gemini.file_paths(), ["src/a.rs"]);
        assert_eq!(Agent::detect(&gemini, None), Agent::Gemini);
        // A Claude Code event name is never answered in Gemini's shape.
        let gemini_file = Reading {
            format: Some(Agent::Gemini),
            ..Reading::default()
        };
        assert_eq!(Agent::detect(&w, Some(&gemini_file)), Agent::Claude);
    }

    /// Copilot's camelCase payload, its event named by the handler, never by the payload.
    #[test]
    fn copilot_payload_reads_camel_case() {
        let bytes = br#"{"sessionId":"c1","timestamp":1795799755403,"cwd":"/r","toolName":"edit","toolArgs":{"path":"/r/b.txt","old_str":"a","new_str":"b"}}"#;
        let p = Payload::parse_as(bytes, Some("preToolUse")).unwrap();
        assert_eq!(p.event, "preToolUse");
        assert_eq!(p.session_id.as_deref(), Some("c1"));
        assert_eq!(p.file_paths(), ["/r/b.txt"]);
        assert_eq!(Agent::detect(&p, None), Agent::Copilot);
        // toolArgs as a JSON string is read as the object it holds.
        let s = br#"{"sessionId":"c1","toolName":"create","toolArgs":"{\"path\":\"x.rs\",\"file_text\":\"\"}"}"#;
        let p = Payload::parse_as(s, Some("preToolUse")).unwrap();
        assert_eq!(p.file_paths(), ["x.rs"]);
        // A payload's own event name wins over the handler's.
        let named = br#"{"hook_event_name":"PreToolUse","toolName":"edit"}"#;
        assert_eq!(
            Payload::parse_as(named, Some("preToolUse")).unwrap().event,
            "PreToolUse"
        );
        assert_eq!(Payload::parse_as(b"{}", None).unwrap().event, "");
    }
}
