//! GitHub Copilot CLI, the fourth agent (issue 33), through the real binary with the payloads
//! its hooks reference documents and Copilot CLI 1.0.102 was seen to send (docs/agents.md):
//! camelCase events from `.github/hooks/*.json`, camelCase keys (`sessionId`, `toolName`,
//! `toolArgs`), no event name in the payload (the installed handler sets it in
//! `GIT_SESSION_HOOK_EVENT`), answers as top-level `additionalContext` and
//! `permissionDecision`.

use crate::common;
use crate::context_support::hook;
use common::TestRepo;
use serde_json::{json, Value};
use std::path::Path;

const EVENT_ENV: &str = "GIT_SESSION_HOOK_EVENT";

/// One Copilot hook call: its payload on stdin, its event named as the installed handler names
/// it. Returns the answer, or None for no output.
fn copilot(repo: &TestRepo, event: &str, payload: Value) -> Option<Value> {
    let run = hook(repo, &payload, &[(EVENT_ENV, event)]);
    if run.stdout.trim().is_empty() {
        return None;
    }
    let v: Value = serde_json::from_str(&run.stdout).expect("answer is JSON");
    // Copilot reads top-level keys only: nothing nested where it would be ignored.
    assert!(v.get("hookSpecificOutput").is_none(), "{v}");
    Some(v)
}

fn base(session: &str, cwd: &Path) -> Value {
    json!({"sessionId": session, "timestamp": 1_795_799_755_403_u64, "cwd": cwd})
}

fn tool(session: &str, cwd: &Path, name: &str, args: Value, result: bool) -> Value {
    let mut v = base(session, cwd);
    v["toolName"] = json!(name);
    v["toolArgs"] = args;
    if result {
        v["toolResult"] = json!({"resultType": "success", "textResultForLlm": "done"});
    }
    v
}

fn claims(repo: &TestRepo, label: &str) -> Vec<String> {
    let info = repo.run(["info", label, "--json"]).ok().json();
    let mut v: Vec<String> = info["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

// Identity at sessionStart, claims by create/edit at postToolUse, a write of another live
// session's path refused at preToolUse with the owner named; other tools and free paths pass.
#[test]
fn copilot_identity_claims_and_denies() {
    let repo = TestRepo::new();
    let a = repo.create("alpha");
    let b = repo.create("beta");

    let mut start = base("cop-a", &a);
    start["source"] = json!("new");
    start["initialPrompt"] = json!("fix the login");
    let v = copilot(&repo, "sessionStart", start).expect("identity");
    let text = v["additionalContext"].as_str().unwrap();
    assert!(
        text.contains("\"alpha\"") && text.contains("cop-a"),
        "{text}"
    );

    // create (path, file_text) and edit (path, old_str, new_str): both claimed for alpha.
    let create = json!({"path": a.join("src/login.rs"), "file_text": "fn main() {}\n"});
    assert!(copilot(
        &repo,
        "preToolUse",
        tool("cop-a", &a, "create", create.clone(), false)
    )
    .is_none());
    copilot(
        &repo,
        "postToolUse",
        tool("cop-a", &a, "create", create, true),
    );
    let edit = json!({"path": a.join("README.md"), "old_str": "a", "new_str": "b"});
    copilot(&repo, "postToolUse", tool("cop-a", &a, "edit", edit, true));
    // A shell command writes nothing Copilot names: no claim.
    let bash = json!({"command": "touch x", "description": "touch"});
    copilot(&repo, "postToolUse", tool("cop-a", &a, "bash", bash, true));
    assert_eq!(claims(&repo, "alpha"), ["README.md", "src/login.rs"]);

    // beta's Copilot edits alpha's file: refused, the owner named, in Copilot's shape.
    let theirs = json!({"path": b.join("src/login.rs"), "old_str": "a", "new_str": "b"});
    let v = copilot(
        &repo,
        "preToolUse",
        tool("cop-b", &b, "edit", theirs, false),
    )
    .expect("denied");
    assert_eq!(v["permissionDecision"], "deny", "{v}");
    repo.insta().bind(|| {
        insta::assert_snapshot!("copilot_deny", serde_json::to_string_pretty(&v).unwrap());
    });
    let reason = v["permissionDecisionReason"].as_str().unwrap();
    assert!(
        reason.contains("src/login.rs") && reason.contains("alpha"),
        "{reason}"
    );
    // The same path relative to its cwd, as a JSON string of arguments: refused too.
    let relative = json!(json!({"path": "src/login.rs", "file_text": "x"}).to_string());
    let v = copilot(
        &repo,
        "preToolUse",
        tool("cop-b", &b, "create", relative, false),
    );
    assert_eq!(v.expect("denied")["permissionDecision"], "deny");
    // A free path passes, and nothing was claimed for beta by being refused.
    let free = json!({"path": b.join("src/free.rs"), "file_text": "x"});
    assert!(copilot(
        &repo,
        "preToolUse",
        tool("cop-b", &b, "create", free, false)
    )
    .is_none());
    assert!(claims(&repo, "beta").is_empty());
}

// The payload's own event name wins; without any, the call is not guessed at: no answer, exit 0.
#[test]
fn copilot_without_an_event_name_is_left_alone() {
    let repo = TestRepo::new();
    let b = repo.create("beta");
    let a = repo.create("alpha");
    let create = json!({"path": a.join("src/owned.rs"), "file_text": "x"});
    copilot(
        &repo,
        "postToolUse",
        tool("cop-a", &a, "create", create, true),
    );
    let theirs = tool(
        "cop-b",
        &b,
        "create",
        json!({"path": b.join("src/owned.rs")}),
        false,
    );
    let run = hook(&repo, &theirs, &[]);
    assert!(run.stdout.trim().is_empty(), "{run:?}");
    let run = hook(&repo, &theirs, &[(EVENT_ENV, "")]);
    assert!(run.stdout.trim().is_empty(), "{run:?}");
}

// install --agent copilot: the repository's .github/hooks/git-session.json, Copilot's flat
// shape, merged with the hooks already there, idempotent.
#[test]
fn install_copilot_writes_its_hook_file() {
    let repo = TestRepo::new();
    let theirs = r#"{"version": 1, "hooks": {"preToolUse": [
        {"type": "command", "bash": "./scripts/guard.sh", "timeoutSec": 5}]}}"#;
    repo.commit_file(
        &repo.root,
        ".github/hooks/git-session.json",
        theirs,
        "their hooks",
    );
    let run = repo.run(["context", "install", "--agent", "copilot"]).ok();
    let path = repo.root.join(".github/hooks/git-session.json");
    let text = std::fs::read_to_string(&path).unwrap();
    repo.insta().bind(|| {
        insta::assert_snapshot!("copilot_hook_file", text);
        insta::assert_snapshot!("copilot_install_output", run.stderr);
    });
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["hooks"]["preToolUse"][0]["bash"], "./scripts/guard.sh");
    let again = repo.run(["context", "install", "--agent", "copilot"]).ok();
    assert!(again.stderr.contains("already installed"), "{again:?}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

// Context alerts from Copilot's own record: its tool events carry no transcript path, so the hook
// reads `~/.copilot/session-state/<sessionId>/events.jsonl`, whose newest `session.usage_record`
// gives the exact prompt (`inputTokens`) and the window (`maxPromptTokens`); the budget is 80 %
// of that window (its background compaction point).
#[test]
fn copilot_alerts_from_its_usage_records() {
    let repo = TestRepo::new();
    let a = repo.create("alpha");
    let id = "6adc52b6-3b15-485b-991d-4036ddb6bd28";
    let record = repo
        .home
        .join(".copilot/session-state")
        .join(id)
        .join("events.jsonl");
    std::fs::create_dir_all(record.parent().unwrap()).unwrap();
    let usage = |input: u64| {
        json!({"type": "session.usage_record", "data": {"usage": {"model": "gpt-4.1",
            "inputTokens": input, "outputTokens": 20, "cacheReadTokens": 0,
            "maxPromptTokens": 64_000}}})
        .to_string()
            + "\n"
    };
    let append = |line: String| {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&record)
            .unwrap();
        f.write_all(line.as_bytes()).unwrap();
    };
    append(usage(20_000));
    let mut start = base(id, &a);
    start["source"] = json!("new");
    copilot(&repo, "sessionStart", start).expect("identity");
    let bash = json!({"command": "echo hi", "description": "hi"});
    assert!(copilot(
        &repo,
        "postToolUse",
        tool(id, &a, "bash", bash.clone(), true)
    )
    .is_none());
    // 37,000 of 51,200 (80 % of 64,000) is 72 %: the first alert, once.
    append(usage(37_000));
    let v = copilot(
        &repo,
        "postToolUse",
        tool(id, &a, "bash", bash.clone(), true),
    )
    .expect("the 70 % alert");
    let text = v["additionalContext"].as_str().unwrap();
    assert!(
        text.contains("Context awareness") && text.contains("51,200"),
        "{text}"
    );
    assert!(copilot(&repo, "postToolUse", tool(id, &a, "bash", bash, true)).is_none());
    // A prompt past 90 % is warned at userPromptSubmitted too.
    append(usage(47_000));
    let mut prompt = base(id, &a);
    prompt["prompt"] = json!("go on");
    let v = copilot(&repo, "userPromptSubmitted", prompt).expect("the 90 % alert");
    assert!(
        v["additionalContext"].as_str().unwrap().contains("HANDOFF"),
        "{v}"
    );
    // A session id that is not one directory name reads nothing.
    let odd = tool("../../etc", &a, "bash", json!({"command": "x"}), true);
    assert!(copilot(&repo, "postToolUse", odd).is_none());
}

// What Copilot CLI's events say it does, in `list`, as for every agent: a prompt and its tool
// calls are `working`, agentStop is `waiting` for input, sessionEnd `ended`.
#[test]
fn copilot_activity_shows_in_list() {
    let repo = TestRepo::new();
    let a = repo.create("A");
    let state = |repo: &TestRepo| {
        let list = repo.run(["list", "--json"]).ok().json();
        list[0]["agent"]["state"].as_str().unwrap_or("").to_string()
    };
    copilot(&repo, "sessionStart", base("cp-2", &a));
    let mut prompt = base("cp-2", &a);
    prompt["prompt"] = json!("go");
    copilot(&repo, "userPromptSubmitted", prompt);
    assert_eq!(state(&repo), "working");
    copilot(&repo, "agentStop", base("cp-2", &a));
    assert_eq!(state(&repo), "waiting");
    copilot(
        &repo,
        "postToolUse",
        tool("cp-2", &a, "bash", json!({"command": "ls"}), true),
    );
    assert_eq!(state(&repo), "working");
    copilot(&repo, "sessionEnd", base("cp-2", &a));
    assert_eq!(state(&repo), "ended");
}
