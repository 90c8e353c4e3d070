//! The context hook's agent-specific protocols through the real binary: installing into each
//! agent's configuration, Codex's apply_patch, Claude Code's statusline, Gemini CLI's events.

use crate::common;
use crate::context_support;
use common::TestRepo;
use context_support::*;
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

// 7. install merges, keeps theirs, is idempotent; --dry-run prints and writes nothing.
#[test]
fn install_merges_into_settings() {
    let repo = TestRepo::new();
    let settings = repo.root.join(".claude/settings.json");
    let dry = repo.run(["context", "install", "--dry-run"]).ok();
    assert!(!settings.exists());
    insta::assert_snapshot!("install_dry_run", dry.stdout);

    repo.write(
        ".claude/settings.json",
        r#"{"permissions": {"allow": ["Bash(cargo test:*)"]},
            "hooks": {"PostToolUse": [{"matcher": "Write|Edit",
                       "hooks": [{"type": "command", "command": "cargo fmt"}]}],
                      "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}"#,
    );
    repo.run(["context", "install"]).ok();
    let first = std::fs::read_to_string(&settings).unwrap();
    let v: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(v["permissions"]["allow"][0], "Bash(cargo test:*)");
    assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["command"], "say done");
    let post = v["hooks"]["PostToolUse"].as_array().unwrap();
    assert_eq!(post.len(), 2);
    assert_eq!(post[0]["hooks"][0]["command"], "cargo fmt");
    assert_eq!(post[1]["hooks"][0]["command"], "git-session context hook");
    assert_eq!(
        v["hooks"]["PreToolUse"][0]["matcher"],
        "Write|Edit|MultiEdit|NotebookEdit"
    );
    assert!(
        v["hooks"].get("PreCompact").is_none(),
        "PreCompact is not ours to count"
    );
    for event in ["PostCompact", "SessionStart", "UserPromptSubmit"] {
        assert!(
            v["hooks"][event][0]["hooks"][0]["command"].is_string(),
            "{event}"
        );
    }
    assert_eq!(
        v["statusLine"]["command"],
        "git-session context status --stdin --short"
    );
    let again = repo.run(["context", "install"]).ok();
    assert!(again.stderr.contains("already installed"), "{again:?}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), first);

    repo.run(["context", "install", "--user"]).ok();
    let user: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.home.join(".claude/settings.json")).unwrap(),
    )
    .unwrap();
    // The context events (7 of them for what the agent does) and WorktreeCreate/WorktreeRemove.
    assert_eq!(user["hooks"].as_object().unwrap().len(), 14);

    // A statusline the user has stays; --local writes the git-ignored local file; from inside a
    // session's worktree the main worktree's file is written and the session stays clean.
    let wt = repo.create("inst");
    let local = repo.root.join(".claude/settings.local.json");
    std::fs::write(
        &local,
        r#"{"statusLine": {"type": "command", "command": "mine"}}"#,
    )
    .unwrap();
    repo.run_in(&wt, ["context", "install", "--local"]).ok();
    let l: Value = serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
    assert_eq!(l["statusLine"]["command"], "mine");
    assert!(l["hooks"]["PostToolUse"].is_array());
    assert!(
        !wt.join(".claude").exists(),
        "the session's worktree is untouched"
    );
    let dirty = repo.git_in(&wt, ["status", "--porcelain"]);
    assert_eq!(dirty.trim(), "", "the session stays clean");

    // Codex: the repository's .codex/hooks.json, root keys only `hooks` (Codex refuses others).
    let run = repo.run(["context", "install", "--codex"]).ok();
    assert!(run.stderr.contains("/hooks"), "says how to trust: {run:?}");
    let c: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.root.join(".codex/hooks.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(c.as_object().unwrap().keys().collect::<Vec<_>>(), ["hooks"]);
    assert_eq!(c["hooks"]["PreToolUse"][0]["matcher"], "apply_patch");
    assert_eq!(
        c["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
        "git-session context hook"
    );

    std::fs::write(&settings, "{ not json").unwrap();
    let bad = repo.run(["context", "install"]).fails(1);
    assert!(
        bad.stderr.starts_with("error: ") && bad.stderr.contains("hint: "),
        "{bad:?}"
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{ not json");
}

// 10. Codex apply_patch: every file the patch names is denied when owned, claimed otherwise.
#[test]
fn codex_apply_patch_denies_and_claims() {
    let repo = TestRepo::new();
    let a = repo.create("alpha");
    let b = repo.create("beta");
    let patch = |files: &str| format!("*** Begin Patch\n{files}*** End Patch\n");
    let call = |event: &str, agent: &str, cwd: &Path, text: String| {
        json!({"session_id": agent, "transcript_path": Value::Null, "cwd": cwd,
               "hook_event_name": event, "model": "gpt-5-codex", "turn_id": "t1",
               "tool_name": "apply_patch", "tool_use_id": "call_1",
               "tool_input": {"command": text}})
    };
    let mine = patch(
        "*** Add File: src/new.rs\n+fn x() {}\n*** Update File: src/old.rs\n*** Move to: \
         src/moved.rs\n@@\n-a\n+b\n*** Delete File: docs/gone.md\n",
    );
    assert!(answer(
        &hook(&repo, &call("PreToolUse", "codex-a", &a, mine.clone()), &[]),
        "PreToolUse"
    )
    .is_none());
    hook(&repo, &call("PostToolUse", "codex-a", &a, mine), &[]);
    let info = repo.run(["info", "alpha", "--json"]).ok().json();
    let mut claimed: Vec<&str> = info["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    claimed.sort();
    assert_eq!(
        claimed,
        ["docs/gone.md", "src/moved.rs", "src/new.rs", "src/old.rs"]
    );
    // beta's patch touches one owned file among others: the whole call is refused.
    let theirs =
        patch("*** Add File: src/free.rs\n+x\n*** Update File: src/moved.rs\n@@\n-a\n+b\n");
    let v = answer(
        &hook(&repo, &call("PreToolUse", "codex-b", &b, theirs), &[]),
        "PreToolUse",
    )
    .expect("denied");
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    let reason = v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("src/moved.rs") && reason.contains("alpha"),
        "{reason}"
    );
    let free = patch("*** Add File: src/free.rs\n+x\n");
    assert!(answer(
        &hook(&repo, &call("PreToolUse", "codex-b", &b, free), &[]),
        "PreToolUse"
    )
    .is_none());
}

// 11. The statusline: Claude Code's numbers win and are remembered; always exit 0; short form.
#[test]
fn statusline_numbers_win_and_it_never_blanks() {
    let repo = TestRepo::new();
    let wt = repo.create("status-line");
    let t = transcript(&repo.base(), "sl", 185_000);
    let run_stdin = |args: &[&str], input: &str| {
        let mut child = repo
            .cmd_in(&wt)
            .args(["context", "status", "--stdin"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        common::to_run(child.wait_with_output().unwrap())
    };
    let payload = json!({"session_id": "sl-1", "transcript_path": t, "cwd": wt,
        "model": {"id": "claude-opus-4-7", "display_name": "Opus"},
        "workspace": {"current_dir": wt, "project_dir": wt},
        "context_window": {"context_window_size": 1_000_000, "used_percentage": 18.5,
            "remaining_percentage": 81.5, "total_input_tokens": 900_000, "total_output_tokens": 5,
            "current_usage": {"input_tokens": 5_000, "output_tokens": 100,
                "cache_creation_input_tokens": 10_000, "cache_read_input_tokens": 170_000}}});
    let run = run_stdin(&["--json"], &payload.to_string());
    assert_eq!(run.code, 0);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        (
            v["tokens"].clone(),
            v["window"].clone(),
            v["window_source"].clone(),
            v["percent"].clone()
        ),
        (
            json!(185_000),
            json!(1_000_000),
            json!("statusline"),
            json!(18.5)
        )
    );
    assert_eq!(v["budget"], 967_000);
    let short = run_stdin(&["--short"], &payload.to_string());
    assert_eq!(short.code, 0);
    assert!(short.stdout.trim_end().chars().count() < 40, "{short:?}");
    insta::assert_snapshot!("statusline_short", short.stdout.trim_end());
    // The hook measures this agent session against the window the statusline reported.
    hook(&repo, &post_tool_use("sl-1", &wt, &t), &[]);
    let v = status_json(&repo, &wt, &["--agent-session", "sl-1"], &[]);
    assert_eq!(
        (v["window"].clone(), v["window_source"].clone()),
        (json!(1_000_000), json!("statusline"))
    );
    assert_eq!(v["fired"], json!([]), "185K of a 1M window is no alert");
    // Before the first answer the numbers are null: the unknown form, exit 0.
    let fresh = json!({"session_id": "sl-2", "cwd": wt, "model": {"id": "claude-opus-4-7"},
        "context_window": {"context_window_size": 1_000_000, "used_percentage": null,
                           "current_usage": null}});
    let run = run_stdin(&["--short"], &fresh.to_string());
    assert_eq!(
        (run.code, run.stdout.trim_end()),
        (0, "ctx context unknown")
    );
    for garbage in ["", "not json", "[1]"] {
        let run = run_stdin(&["--short"], garbage);
        assert_eq!(
            (run.code, run.stdout.trim_end()),
            (0, "ctx unknown"),
            "{garbage:?}"
        );
    }
}

// 12. Gemini CLI: payloads shaped as its hooks reference and source show (gemini-cli
// 0.56.0-nightly.20260806: docs/hooks/reference.md; packages/core/src/hooks/types.ts for
// BeforeToolInput / AfterToolInput / SessionStartInput; tool names and `file_path` from
// packages/core/src/tools/definitions/base-declarations.ts).
#[test]
fn gemini_before_tool_denies_after_tool_claims_and_alerts() {
    let repo = TestRepo::new();
    let a = repo.create("alpha");
    let b = repo.create("beta");
    let t = repo.base().join("session-gemini-a.jsonl");
    let meta = json!({"sessionId": "gem-a", "projectHash": "h", "startTime":
        "2026-01-01T10:00:00.000Z", "lastUpdated": "2026-01-01T10:00:00.000Z", "kind": "main"});
    append(
        &t,
        &[
            meta.to_string(),
            gemini_message("m1", 40_000, "gemini-2.5-pro"),
        ],
    );

    // SessionStart: the identity, in the shape Gemini CLI injects as the first turn.
    let start = gemini_payload(
        "SessionStart",
        "gem-a",
        &a,
        &t,
        json!({"source": "startup"}),
    );
    let v = gemini_answer(&hook(&repo, &start, &[]), "SessionStart").expect("identity");
    let text = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        text.contains("\"alpha\"") && text.contains("gem-a"),
        "{text}"
    );

    // AfterTool of write_file and replace: both files are claimed for alpha.
    let write = gemini_payload(
        "AfterTool",
        "gem-a",
        &a,
        &t,
        json!({
        "tool_name": "write_file",
        "tool_input": {"file_path": a.join("src/login.rs"), "content": "fn main() {}\n"},
        "tool_response": {"llmContent": "Successfully created and wrote to new file",
                          "returnDisplay": "Wrote src/login.rs"}}),
    );
    assert!(gemini_answer(&hook(&repo, &write, &[]), "AfterTool").is_none());
    let replace = gemini_payload(
        "AfterTool",
        "gem-a",
        &a,
        &t,
        json!({
        "tool_name": "replace",
        "tool_input": {"file_path": "src/auth.rs", "instruction": "fix",
                       "old_string": "a", "new_string": "b"},
        "tool_response": {"llmContent": "Successfully modified file", "returnDisplay": ""}}),
    );
    hook(&repo, &replace, &[]);
    let info = repo.run(["info", "alpha", "--json"]).ok().json();
    let claimed: Vec<&str> = info["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(claimed, ["src/login.rs", "src/auth.rs"]);

    // beta's Gemini agent: BeforeTool of an owned path is denied in Gemini's own shape, with
    // the reason it sends to the model; a free path passes.
    let tb = repo.base().join("session-gemini-b.jsonl");
    let before = |file: &str| {
        gemini_payload(
            "BeforeTool",
            "gem-b",
            &b,
            &tb,
            json!({
            "tool_name": "replace",
            "tool_input": {"file_path": file, "old_string": "x", "new_string": "y",
                           "instruction": "edit"}}),
        )
    };
    let v =
        gemini_answer(&hook(&repo, &before("src/login.rs"), &[]), "BeforeTool").expect("denied");
    assert_eq!(v["decision"], "deny");
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.contains("src/login.rs") && reason.contains("\"alpha\""),
        "{reason}"
    );
    assert!(v.get("hookSpecificOutput").is_none(), "{v}");
    assert!(gemini_answer(&hook(&repo, &before("src/free.rs"), &[]), "BeforeTool").is_none());

    // The budget: half of Gemini's 1,048,576-token limit, unless compressionThreshold says.
    let v = status_json(&repo, &a, &["--agent-session", "gem-a"], &[]);
    assert_eq!(
        (
            v["window"].clone(),
            v["window_source"].clone(),
            v["budget"].clone()
        ),
        (json!(1_048_576), json!("model"), json!(524_288))
    );
    assert_eq!(v["budget_source"], "gemini default (50% of the window)");
    // 75 % of the compression point: the 70 % alert at AfterTool, once.
    append(&t, &[gemini_message("m2", 393_216, "gemini-2.5-pro")]);
    let v = gemini_answer(&hook(&repo, &write, &[]), "AfterTool").expect("the 70 % alert");
    let text = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(text.starts_with("Context awareness"), "{text}");
    assert!(
        text.contains("393,216") && text.contains("524,288"),
        "{text}"
    );
    assert!(v["systemMessage"].as_str().unwrap().contains("75%"), "{v}");
    assert!(hook(&repo, &write, &[]).stdout.is_empty(), "once only");
    // BeforeAgent delivers the next one, on a turn without tool calls.
    append(&t, &[gemini_message("m3", 480_000, "gemini-2.5-pro")]);
    let prompt = gemini_payload(
        "BeforeAgent",
        "gem-a",
        &a,
        &t,
        json!({"prompt": "and now?"}),
    );
    let v = gemini_answer(&hook(&repo, &prompt, &[]), "BeforeAgent").expect("HANDOFF");
    assert!(v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .starts_with("HANDOFF MODE"));

    // Gemini CLI writes nothing when it compresses: the fill falling far below the alerts is
    // the compression, counted, and the thresholds start over.
    append(&t, &[gemini_message("m4", 90_000, "gemini-2.5-pro")]);
    assert!(hook(&repo, &write, &[]).stdout.is_empty());
    let v = status_json(&repo, &a, &["--agent-session", "gem-a"], &[]);
    assert_eq!(
        (v["compactions"].clone(), v["fired"].clone()),
        (json!(1), json!([]))
    );

    // model.compressionThreshold in the project's .gemini/settings.json moves the point.
    let project = repo.base().join("gemini-project");
    common::write_in(
        &project,
        ".gemini/settings.json",
        r#"{"model": {"compressionThreshold": 0.3}, "hooks": {}}"#,
    );
    hook(
        &repo,
        &write,
        &[("GEMINI_PROJECT_DIR", project.to_str().unwrap())],
    );
    let v = status_json(&repo, &a, &["--agent-session", "gem-a"], &[]);
    assert_eq!(
        (v["budget"].clone(), v["budget_source"].clone()),
        (
            json!(314_572),
            json!("model.compressionThreshold (project .gemini/settings.json)")
        )
    );
}

// 13. install --gemini: the repository's .gemini/settings.json, merged, idempotent; Gemini's
// timeout is in milliseconds and its tool matchers are unanchored regular expressions.
#[test]
fn install_gemini_merges_into_its_settings() {
    let repo = TestRepo::new();
    repo.write(
        ".gemini/settings.json",
        r#"{"model": {"name": "gemini-2.5-pro"},
            "hooks": {"BeforeTool": [{"matcher": "run_shell_command",
                      "hooks": [{"type": "command", "command": "./guard.sh"}]}]}}"#,
    );
    let run = repo.run(["context", "install", "--gemini"]).ok();
    assert!(run.stderr.contains("/hooks"), "{run:?}");
    let path = repo.root.join(".gemini/settings.json");
    let first = std::fs::read_to_string(&path).unwrap();
    let v: Value = serde_json::from_str(&first).unwrap();
    assert_eq!(v["model"]["name"], "gemini-2.5-pro");
    let before = v["hooks"]["BeforeTool"].as_array().unwrap();
    assert_eq!(before.len(), 2);
    assert_eq!(before[0]["hooks"][0]["command"], "./guard.sh");
    assert_eq!(before[1]["matcher"], "^(write_file|replace)$");
    let ours = &before[1]["hooks"][0];
    assert_eq!(
        (
            ours["command"].clone(),
            ours["timeout"].clone(),
            ours["type"].clone()
        ),
        (
            json!("git-session context hook"),
            json!(10_000),
            json!("command")
        )
    );
    let mut events: Vec<&String> = v["hooks"].as_object().unwrap().keys().collect();
    events.sort();
    assert_eq!(
        events,
        [
            "AfterAgent",
            "AfterTool",
            "BeforeAgent",
            "BeforeTool",
            "Notification",
            "SessionEnd",
            "SessionStart"
        ]
    );
    assert!(v.get("statusLine").is_none());
    let again = repo.run(["context", "install", "--gemini"]).ok();
    assert!(again.stderr.contains("already installed"), "{again:?}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), first);
    repo.run(["context", "install", "--gemini", "--codex"])
        .fails(2);
}

// 14. Codex: model_auto_compact_token_limit in $CODEX_HOME/config.toml is where it compacts.
#[test]
fn codex_auto_compact_limit_is_the_budget() {
    let repo = TestRepo::new();
    let wt = repo.create("codex-budget");
    let codex_home = repo.base().join("codex-home");
    common::write_in(
        &codex_home,
        "config.toml",
        "model = \"gpt-5-codex\"\nmodel_auto_compact_token_limit = 200000\n",
    );
    let rollout = repo.base().join("rollout-2026-01-01T10-00-00-codex.jsonl");
    let count = |total: u64| {
        json!({"timestamp": "2026-01-01T10:00:05.000Z", "type": "event_msg", "payload": {
            "type": "token_count", "info": {
                "total_token_usage": {"input_tokens": total, "cached_input_tokens": 0,
                    "output_tokens": 10, "reasoning_output_tokens": 0, "total_tokens": total},
                "last_token_usage": {"input_tokens": total - 10, "cached_input_tokens": 0,
                    "output_tokens": 10, "reasoning_output_tokens": 0, "total_tokens": total},
                "model_context_window": 258_400}, "rate_limits": null}})
        .to_string()
    };
    append(&rollout, &[count(100_000)]);
    let call = json!({"session_id": "codex-1", "transcript_path": rollout, "cwd": wt,
        "hook_event_name": "PostToolUse", "model": "gpt-5-codex", "turn_id": "t1",
        "permission_mode": "default", "tool_name": "shell", "tool_use_id": "call_1",
        "tool_input": {"command": ["ls"]}, "tool_response": "ok"});
    let home = ("CODEX_HOME", codex_home.to_str().unwrap());
    assert!(answer(&hook(&repo, &call, &[home]), "PostToolUse").is_none());
    let v = status_json(&repo, &wt, &["--agent-session", "codex-1"], &[]);
    assert_eq!(
        (v["budget"].clone(), v["budget_source"].clone()),
        (
            json!(200_000),
            json!("model_auto_compact_token_limit (~/.codex/config.toml)")
        )
    );
    append(&rollout, &[count(150_000)]);
    let v = answer(&hook(&repo, &call, &[home]), "PostToolUse").expect("75 % of 200,000");
    assert!(v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .starts_with("Context awareness"));
    // Without the setting: Codex's own default, 90 % of the model's window (the rollout records
    // 95 % of it: 258,400 of 272,000).
    let v = status_json(
        &repo,
        &wt,
        &["--transcript", rollout.to_str().unwrap()],
        &[],
    );
    assert_eq!(
        (v["budget"].clone(), v["budget_source"].clone()),
        (json!(244_800), json!("codex default (90% of the window)"))
    );
}

/// Claude Code's reserve (where it compacts below the window) is configurable: `[context]
/// reserve` in the repository's file, overridden by `GIT_SESSION_CONTEXT_RESERVE`.
#[test]
fn the_reserve_below_the_window_is_configurable() {
    let repo = TestRepo::new();
    let t = transcript(&repo.base(), "reserve", 100_000);
    let path = t.display().to_string();
    let budget = |env: &[(&str, &str)]| {
        let v = status_json(&repo, &repo.root, &["--transcript", &path], env);
        (v["window"].as_u64().unwrap(), v["budget"].as_u64().unwrap())
    };
    let (window, default) = budget(&[]);
    assert_eq!(default, window - 33_000);
    repo.write(".git-session.toml", "[context]\nreserve = 50000\n");
    assert_eq!(budget(&[]), (window, window - 50_000));
    assert_eq!(
        budget(&[("GIT_SESSION_CONTEXT_RESERVE", "20000")]),
        (window, window - 20_000)
    );
}

// Issue 33: `install --agent ID` writes what the old per-agent flag wrote, for every agent the
// table holds; an unknown agent, or Claude Code's own files for another agent, is bad usage.
#[test]
fn install_agent_writes_what_the_old_flags_wrote() {
    for (id, old, file) in [
        ("claude", None, ".claude/settings.json"),
        ("codex", Some("--codex"), ".codex/hooks.json"),
        ("gemini", Some("--gemini"), ".gemini/settings.json"),
    ] {
        let by_agent = TestRepo::new();
        by_agent.run(["context", "install", "--agent", id]).ok();
        let by_flag = TestRepo::new();
        let mut args = vec!["context", "install"];
        args.extend(old);
        by_flag.run(args).ok();
        let written = |r: &TestRepo| std::fs::read_to_string(r.root.join(file)).unwrap();
        assert_eq!(written(&by_agent), written(&by_flag), "{id}");
    }
    let repo = TestRepo::new();
    let bad = repo.run(["context", "install", "--agent", "vim"]).fails(2);
    assert!(bad.stderr.contains("claude, codex, gemini"), "{bad:?}");
    let local = repo
        .run(["context", "install", "--agent", "codex", "--local"])
        .fails(2);
    assert!(local.stderr.contains(".codex/hooks.json"), "{local:?}");
    assert!(!repo.root.join(".codex").exists());
    // The flags name the agents whose files they write (the table's facts), for every agent.
    let user = repo
        .run(["context", "install", "--agent", "copilot", "--user"])
        .fails(2);
    let want = "--user is for Claude Code's settings; GitHub Copilot CLI reads its hooks from";
    assert!(user.stderr.contains(want), "{user:?}");
    let local = repo
        .run(["context", "install", "--agent", "gemini", "--local"])
        .fails(2);
    assert!(
        local
            .stderr
            .contains("--local is for Claude Code's settings"),
        "{local:?}"
    );
}
