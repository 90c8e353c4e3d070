//! Helpers shared by the context-hook tests (tests/context*.rs): run the real hook binary with
//! a payload, build transcripts in the agents' formats, check answers against the agents'
//! published output schemas.
#![allow(dead_code)]

pub mod mock;

use crate::common::{self, Run, TestRepo};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/transcripts")
        .join(name)
}

/// Runs `git-session context hook` in `dir` with `stdin` and extra environment.
pub fn hook_raw(repo: &TestRepo, dir: &Path, stdin: &[u8], env: &[(&str, &str)]) -> Run {
    let mut cmd: Command = repo.cmd_in(dir);
    cmd.args(["context", "hook"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    common::to_run(child.wait_with_output().unwrap())
}

pub fn hook(repo: &TestRepo, payload: &Value, env: &[(&str, &str)]) -> Run {
    let cwd = PathBuf::from(payload["cwd"].as_str().unwrap_or("/"));
    let dir = if cwd.is_dir() { cwd } else { repo.root.clone() };
    let run = hook_raw(repo, &dir, payload.to_string().as_bytes(), env);
    assert_eq!(run.code, 0, "the hook must exit 0: {run:?}");
    run
}

/// The additionalContext of an answer, or None for no output.
pub fn context_of(run: &Run) -> Option<String> {
    if run.stdout.trim().is_empty() {
        return None;
    }
    let v: Value = serde_json::from_str(&run.stdout).expect("answer is JSON");
    Some(
        v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .expect("additionalContext")
            .to_string(),
    )
}

/// One Claude Code assistant record whose prompt was `tokens` tokens.
pub fn assistant(tokens: u64, id: &str) -> String {
    json!({"parentUuid": "p", "isSidechain": false, "type": "assistant", "uuid": id,
           "timestamp": "2026-01-01T10:00:00.000Z",
           "message": {"id": format!("msg_{id}"), "type": "message", "role": "assistant",
                       "model": "claude-sonnet-4-5-20250929", "stop_reason": "tool_use",
                       "content": [{"type": "text", "text": "ok"}],
                       "usage": {"input_tokens": 3, "cache_creation_input_tokens": 997,
                                 "cache_read_input_tokens": tokens - 1000, "output_tokens": 50}}})
    .to_string()
}

/// A transcript in `dir` whose fill is `tokens`.
pub fn transcript(dir: &Path, name: &str, tokens: u64) -> PathBuf {
    let path = dir.join(format!("{name}.jsonl"));
    let user = json!({"type": "user", "message": {"role": "user", "content": "go"}});
    std::fs::write(
        &path,
        format!("{user}\n{}\n{user}\n", assistant(tokens, name)),
    )
    .unwrap();
    path
}

pub fn post_tool_use(agent: &str, cwd: &Path, transcript: &Path) -> Value {
    json!({"session_id": agent, "transcript_path": transcript, "cwd": cwd,
           "hook_event_name": "PostToolUse", "tool_name": "Bash",
           "tool_input": {"command": "ls"}, "tool_response": {"stdout": ""},
           "permission_mode": "default"})
}

pub fn session_start(agent: &str, cwd: &Path, source: &str, model: Option<&str>) -> Value {
    let mut v = json!({"session_id": agent, "transcript_path": cwd.join("none.jsonl"), "cwd": cwd,
                       "hook_event_name": "SessionStart", "source": source});
    if let Some(m) = model {
        v["model"] = json!(m);
    }
    v.as_object_mut().unwrap().remove("transcript_path");
    v
}

pub fn status_json(repo: &TestRepo, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut cmd = repo.cmd_in(dir);
    cmd.args(["context", "status", "--json"]).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    common::to_run(cmd.output().unwrap()).ok().json()
}

pub fn audit_lines(repo: &TestRepo) -> Vec<Value> {
    std::fs::read_to_string(repo.store().join("audit.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

pub fn file_tool(event: &str, agent: &str, cwd: &Path, tool: &str, path: &Path) -> Value {
    let input = match tool {
        "NotebookEdit" => json!({"notebook_path": path, "new_source": "x"}),
        "MultiEdit" => {
            json!({"file_path": path, "edits": [{"old_string": "a", "new_string": "b"}]})
        }
        _ => json!({"file_path": path, "content": "x"}),
    };
    json!({"session_id": agent, "cwd": cwd, "hook_event_name": event, "tool_name": tool,
           "tool_input": input, "tool_use_id": "toolu_01"})
}

/// The keys an answer may carry, per agent and event (Claude Code hooks reference; Codex's
/// published hook output schemas, which reject unknown keys). Fails on any other key.
pub fn assert_schema(answer: &Value, event: &str) {
    let top = [
        "continue",
        "stopReason",
        "suppressOutput",
        "systemMessage",
        "hookSpecificOutput",
    ];
    let obj = answer.as_object().expect("an answer is a JSON object");
    for k in obj.keys() {
        assert!(
            top.contains(&k.as_str()),
            "unknown top-level key {k} in {answer}"
        );
    }
    let Some(hso) = obj.get("hookSpecificOutput") else {
        return;
    };
    let allowed: &[&str] = match event {
        "PreToolUse" => &[
            "hookEventName",
            "permissionDecision",
            "permissionDecisionReason",
            "additionalContext",
        ],
        _ => &["hookEventName", "additionalContext"],
    };
    for k in hso.as_object().unwrap().keys() {
        assert!(
            allowed.contains(&k.as_str()),
            "{event}: key {k} in {answer}"
        );
    }
    assert_eq!(hso["hookEventName"], event, "{answer}");
}

pub fn answer(run: &Run, event: &str) -> Option<Value> {
    if run.stdout.trim().is_empty() {
        return None;
    }
    let v: Value = serde_json::from_str(&run.stdout).expect("answer is JSON");
    assert_schema(&v, event);
    Some(v)
}

/// Appends lines to a transcript, as the agent does between hook calls.
pub fn append(path: &Path, lines: &[String]) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
}

/// The keys a Gemini CLI hook answer may carry (its hooks reference and `HookOutput` in
/// packages/core/src/hooks/types.ts, 0.56.0-nightly): fails on any other key.
pub fn assert_gemini_schema(answer: &Value, event: &str) {
    let top = [
        "continue",
        "stopReason",
        "suppressOutput",
        "systemMessage",
        "decision",
        "reason",
        "hookSpecificOutput",
    ];
    let obj = answer.as_object().expect("an answer is a JSON object");
    for k in obj.keys() {
        assert!(top.contains(&k.as_str()), "unknown key {k} in {answer}");
    }
    if let Some(d) = obj.get("decision") {
        assert!(
            ["allow", "deny", "block"].contains(&d.as_str().unwrap()),
            "{answer}"
        );
        assert!(
            obj["reason"].as_str().is_some_and(|r| !r.is_empty()),
            "{answer}"
        );
    }
    let Some(hso) = obj.get("hookSpecificOutput") else {
        return;
    };
    let allowed: &[&str] = match event {
        "AfterTool" => &["hookEventName", "additionalContext", "tailToolCallRequest"],
        "BeforeTool" => &["hookEventName", "tool_input"],
        _ => &["hookEventName", "additionalContext"],
    };
    for k in hso.as_object().unwrap().keys() {
        assert!(
            allowed.contains(&k.as_str()),
            "{event}: key {k} in {answer}"
        );
    }
    assert_eq!(hso["hookEventName"], event, "{answer}");
}

/// A Gemini CLI answer, schema-checked; None for no output.
pub fn gemini_answer(run: &Run, event: &str) -> Option<Value> {
    if run.stdout.trim().is_empty() {
        return None;
    }
    let v: Value = serde_json::from_str(&run.stdout).expect("answer is JSON");
    assert_gemini_schema(&v, event);
    Some(v)
}

/// One Gemini CLI session-file message (chatRecordingService's `MessageRecord`, type `gemini`)
/// whose prompt was `input` tokens.
pub fn gemini_message(id: &str, input: u64, model: &str) -> String {
    json!({"id": id, "timestamp": "2026-01-01T10:00:00.000Z", "type": "gemini", "content": "",
           "thoughts": [], "model": model,
           "tokens": {"input": input, "output": 120, "cached": input / 2, "thoughts": 40,
                      "tool": 0, "total": input + 160}})
    .to_string()
}

/// A Gemini CLI hook payload: the base fields every event carries (its hooks reference:
/// session_id, transcript_path, cwd, hook_event_name, timestamp) plus `extra`.
pub fn gemini_payload(
    event: &str,
    session: &str,
    cwd: &Path,
    transcript: &Path,
    extra: Value,
) -> Value {
    let mut v = json!({"session_id": session, "transcript_path": transcript, "cwd": cwd,
                       "hook_event_name": event, "timestamp": "2026-01-01T10:00:00.000Z"});
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}
