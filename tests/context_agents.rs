//! The context hook's agent-specific protocols through the real binary: installing into each
//! agent's configuration, Codex's apply_patch, Claude Code's statusline, Gemini CLI's events.

mod common;
mod context_support;
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
    // The context events and WorktreeCreate/WorktreeRemove.
    assert_eq!(user["hooks"].as_object().unwrap().len(), 7);

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
