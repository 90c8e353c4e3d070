//! The context hook through the real binary: hook JSON on stdin, transcripts in the real formats
//! (fixtures/transcripts, plus generated ones in temp dirs), state in a real repository's store.
//! Agent-specific protocols are in context_agents.rs, replays in context_replay.rs.

use crate::common;
use crate::context_support;
use common::{bin, TestRepo};
use context_support::*;
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

// 1. The fill is the last main-chain assistant record's three-field sum.
#[test]
fn fill_comes_from_the_last_main_chain_record() {
    let repo = TestRepo::new();
    let cases = [
        // A sidechain record, an API-error record, an unknown record type and a half-written
        // last line all come after the deciding record.
        ("claude-main-chain.jsonl", json!(83412), "default"),
        // Three streaming records of one API call: counted once.
        ("claude-streaming.jsonl", json!(125003), "default"),
        ("claude-compact-post-tokens.jsonl", json!(24000), "default"),
        ("claude-compact-next-turn.jsonl", json!(26507), "default"),
        ("claude-compact-unknown.jsonl", Value::Null, "default"),
        ("codex-rollout.jsonl", json!(21500), "transcript"),
        // Gemini CLI: the newest message with tokens; the newest one has none yet.
        ("gemini-session.jsonl", json!(61877), "model"),
    ];
    for (name, tokens, source) in cases.clone() {
        let v = status_json(
            &repo,
            &repo.root,
            &["--transcript", fixture(name).to_str().unwrap()],
            &[],
        );
        assert_eq!(v["tokens"], tokens, "{name}");
        assert_eq!(v["window_source"], source, "{name}");
    }
    let lines: Vec<String> = cases
        .iter()
        .map(|(name, _, _)| {
            let out = repo
                .run([
                    "context",
                    "status",
                    "--transcript",
                    fixture(name).to_str().unwrap(),
                ])
                .ok();
            format!("{name}: {}", out.stdout.trim_end())
        })
        .collect();
    insta::assert_snapshot!("status_lines_of_fixtures", lines.join("\n"));

    // Unknown fill after a compaction: the hook says nothing, even at a tiny window.
    let payload = post_tool_use(
        "after-compact",
        &repo.root,
        &fixture("claude-compact-unknown.jsonl"),
    );
    let run = hook(&repo, &payload, &[("GIT_SESSION_CONTEXT_WINDOW", "1000")]);
    assert_eq!(run.stdout, "");
}

#[test]
fn big_transcripts_are_read_from_the_end() {
    let repo = TestRepo::new();
    let path = repo.base().join("big.jsonl");
    let mut f = std::fs::File::create(&path).unwrap();
    let filler = json!({"type": "user", "message": {"role": "user",
                        "content": "x".repeat(2000)}})
    .to_string();
    writeln!(f, "{}", assistant(7_000, "old")).unwrap();
    for _ in 0..5000 {
        writeln!(f, "{filler}").unwrap();
    }
    writeln!(f, "{}", assistant(42_000, "new")).unwrap();
    // A long tool result after it spans several read blocks.
    writeln!(
        f,
        "{}",
        json!({"type": "user", "message": {"content": "y".repeat(300_000)}})
    )
    .unwrap();
    drop(f);
    let v = status_json(
        &repo,
        &repo.root,
        &["--transcript", path.to_str().unwrap()],
        &[],
    );
    assert_eq!(v["tokens"], 42_000);
}

// 2. The window chain, each source reported.
#[test]
fn window_chain_sources() {
    let repo = TestRepo::new();
    let dir = repo.base();
    let mid = transcript(&dir, "mid", 150_000);
    let big = transcript(&dir, "big", 250_000);
    // (agent, transcript, environment, SessionStart model, window, source)
    type Case<'a> = (
        &'a str,
        &'a Path,
        Vec<(&'a str, &'a str)>,
        Option<&'a str>,
        u64,
        &'a str,
    );
    let cases: Vec<Case> = vec![
        (
            "a-env",
            &mid,
            vec![
                ("GIT_SESSION_CONTEXT_WINDOW", "400000"),
                ("CLAUDE_CODE_MAX_CONTEXT_TOKENS", "300000"),
            ],
            None,
            400_000,
            "GIT_SESSION_CONTEXT_WINDOW",
        ),
        (
            "a-claude",
            &mid,
            vec![("CLAUDE_CODE_MAX_CONTEXT_TOKENS", "300000")],
            Some("gateway-model"),
            300_000,
            "CLAUDE_CODE_MAX_CONTEXT_TOKENS",
        ),
        (
            "a-claude-known",
            &mid,
            vec![("CLAUDE_CODE_MAX_CONTEXT_TOKENS", "300000")],
            Some("claude-opus-4-7"),
            1_000_000,
            "model",
        ),
        (
            "a-disable-1m",
            &mid,
            vec![("CLAUDE_CODE_DISABLE_1M_CONTEXT", "1")],
            Some("claude-opus-4-7"),
            200_000,
            "model",
        ),
        (
            "a-model",
            &mid,
            vec![],
            Some("claude-sonnet-4-5[1m]"),
            1_000_000,
            "model",
        ),
        ("a-observed", &big, vec![], None, 1_000_000, "observed"),
        ("a-default", &mid, vec![], None, 200_000, "default"),
    ];
    for (agent, path, env, model, window, source) in cases {
        hook(
            &repo,
            &session_start(agent, &repo.root, "startup", model),
            &env,
        );
        hook(&repo, &post_tool_use(agent, &repo.root, path), &env);
        let v = status_json(&repo, &repo.root, &["--agent-session", agent], &[]);
        assert_eq!(v["window"], window, "{agent}");
        assert_eq!(v["window_source"], source, "{agent}");
        assert_eq!(
            v["model"],
            model.unwrap_or("claude-sonnet-4-5-20250929"),
            "{agent}"
        );
    }
    // The configured window replaces the built-in default.
    repo.write(".git-session.toml", "[context]\nwindow = 160000\n");
    hook(&repo, &post_tool_use("a-config", &repo.root, &mid), &[]);
    let v = status_json(&repo, &repo.root, &["--agent-session", "a-config"], &[]);
    assert_eq!(
        (v["window"].clone(), v["window_source"].clone()),
        (json!(160000), json!("config"))
    );
    assert_eq!(v["percent"], 93.8);
    // The state file says the same, in TOML with a version.
    let toml = std::fs::read_to_string(repo.store().join("agents/a-model.toml")).unwrap();
    assert!(
        toml.contains("version = 1") && toml.contains("window_source = \"model\""),
        "{toml}"
    );
}

// 3. Once per threshold, wrap-up silences 90/95, compaction resets; config drives it all.
#[test]
fn thresholds_fire_once_and_reset_on_compaction() {
    let repo = TestRepo::new();
    let wt = repo.create("fix-login");
    let dir = repo.base();
    // Shares of the 167,000 tokens where Claude Code compacts a 200K window.
    let at75 = transcript(&dir, "t75", 125_250);
    let at91 = transcript(&dir, "t91", 152_000);
    let at96 = transcript(&dir, "t96", 160_320);
    let agent = "0b1c2d3e-1111-2222-3333-444455556666";
    hook(&repo, &session_start(agent, &wt, "startup", None), &[]);

    let first =
        context_of(&hook(&repo, &post_tool_use(agent, &wt, &at75), &[])).expect("70 % alert");
    assert!(context_of(&hook(&repo, &post_tool_use(agent, &wt, &at75), &[])).is_none());
    let mut alerts = Vec::new();
    for _ in 0..5 {
        alerts.extend(context_of(&hook(
            &repo,
            &post_tool_use(agent, &wt, &at91),
            &[],
        )));
    }
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert!(alerts[0].starts_with("HANDOFF MODE"), "{}", alerts[0]);
    insta::assert_snapshot!("alert_70", first);
    insta::assert_snapshot!("alert_90", alerts[0]);

    // Wrap-up recorded from inside the session's worktree (no id: the linked agent).
    repo.run_in(&wt, ["context", "wrapped-up"]).ok();
    assert!(context_of(&hook(&repo, &post_tool_use(agent, &wt, &at96), &[])).is_none());
    let v = status_json(&repo, &wt, &[], &[]);
    assert_eq!(v["wrapped_up"]["scope"], "full");
    assert_eq!(v["fired"], json!([70, 90]));

    // PreCompact may still be blocked by another hook: it changes nothing.
    let pre = json!({"session_id": agent, "transcript_path": at96, "cwd": wt,
                     "hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""});
    let run = hook(&repo, &pre, &[]);
    assert_eq!(run.stdout, "", "PreCompact answers nothing");
    let v = status_json(&repo, &wt, &["--agent-session", agent], &[]);
    assert_eq!(
        (v["fired"].clone(), v["compactions"].clone()),
        (json!([70, 90]), json!(0))
    );
    // PostCompact, then the SessionStart(compact) of the same compaction: counted once, reset.
    let post = json!({"session_id": agent, "transcript_path": at96, "cwd": wt,
                      "hook_event_name": "PostCompact", "trigger": "auto"});
    assert_eq!(
        hook(&repo, &post, &[]).stdout,
        "",
        "PostCompact answers nothing"
    );
    hook(&repo, &session_start(agent, &wt, "compact", None), &[]);
    let v = status_json(&repo, &wt, &["--agent-session", agent], &[]);
    assert_eq!(
        (
            v["fired"].clone(),
            v["wrapped_up"].clone(),
            v["compactions"].clone()
        ),
        (json!([]), Value::Null, json!(1))
    );
    // Claude Code then records the compaction and the next call in the transcript.
    append(
        &at96,
        &[
            json!({"type": "system", "subtype": "compact_boundary", "isSidechain": false,
                   "compactMetadata": {"trigger": "manual", "preTokens": 160_320,
                                       "postTokens": 9_000}})
            .to_string(),
            assistant(160_320, "after"),
        ],
    );
    // After the reset a jump straight to 96 % speaks once, as the emergency only.
    let emergency = context_of(&hook(&repo, &post_tool_use(agent, &wt, &at96), &[])).unwrap();
    assert!(emergency.starts_with("EMERGENCY"), "{emergency}");
    insta::assert_snapshot!("alert_95", emergency);
    // A SessionStart(compact) without a PreCompact before it counts on its own.
    hook(&repo, &session_start(agent, &wt, "compact", None), &[]);
    let v = status_json(&repo, &wt, &[], &[]);
    assert_eq!(v["compactions"], 2);
    insta::assert_snapshot!(
        "status_line_in_session",
        repo.run_in(&wt, ["context", "status"]).ok().stdout
    );

    // Thresholds and messages come from config.
    repo.write(
        ".git-session.toml",
        "[context]\nthresholds = [50]\n[context.messages]\n\"50\" = \"Half full: {percent}% ({tokens} of {window}).\"\n",
    );
    let text = context_of(&hook(&repo, &post_tool_use("cfg-agent", &wt, &at75), &[])).unwrap();
    assert!(
        text.starts_with("Half full: 75% (125,250 of 200,000)."),
        "{text}"
    );
}

// 4. SessionStart links the agent and answers with its identity; list/info show the fill.
#[test]
fn session_start_links_and_tells_the_agent_who_it_is() {
    let repo = TestRepo::new();
    repo.run(["hooks", "install"]).ok();
    let wt = repo.create("fix-login");
    repo.create("other");
    let agent = "agent-identity-one";
    let sub = wt.join("src");
    std::fs::create_dir_all(&sub).unwrap();
    let run = hook(
        &repo,
        &session_start(agent, &sub, "startup", Some("claude-opus-4-1")),
        &[],
    );
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    repo.insta().bind(|| {
        insta::assert_snapshot!("identity", context_of(&run).unwrap());
    });
    let info = repo.run(["info", "fix-login", "--json"]).ok().json();
    assert_eq!(info["agent_sessions"], json!([agent]));

    let t = transcript(&repo.base(), agent, 60_000);
    hook(&repo, &post_tool_use(agent, &sub, &t), &[]);
    let list = repo.run(["list", "--json"]).ok().json();
    let row = |label: &str| {
        list.as_array()
            .unwrap()
            .iter()
            .find(|r| r["label"] == label)
            .unwrap()
            .clone()
    };
    assert_eq!(row("fix-login")["context_percent"], 30.0);
    assert_eq!(row("other")["context_percent"], Value::Null);
    let info = repo.run(["info", "fix-login", "--json"]).ok().json();
    assert_eq!(info["context"]["tokens"], 60_000);
    assert_eq!(info["context"]["agent_session"], agent);

    // A handoff note in the store is handed to the next agent started there.
    let notes = repo.store().join("handoffs/fix-login");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(notes.join("1.md"), "old note\n").unwrap();
    std::fs::write(
        notes.join("2.md"),
        "# Kickoff\nIn-Flight State: login tests half done.\n",
    )
    .unwrap();
    let next = hook(
        &repo,
        &session_start("next-agent", &wt, "startup", None),
        &[],
    );
    let text = context_of(&next).unwrap();
    assert!(
        text.contains("(#2,")
            && text.contains("login tests half done")
            && !text.contains("old note"),
        "{text}"
    );
    assert!(text.contains("your agent session id: next-agent"), "{text}");

    // Outside every session worktree (the main worktree) nothing is linked and nothing said.
    let run = hook(
        &repo,
        &session_start("main-agent", &repo.root, "startup", None),
        &[],
    );
    assert_eq!(run.stdout, "");
}

// 5. File-writing tools claim their file; another session's agent is denied it.
#[test]
fn file_tools_claim_and_deny() {
    let repo = TestRepo::new();
    repo.write(".git-session.toml", "[guard]\nshared = [\"*.lock\"]\n");
    repo.git(["add", ".git-session.toml"]);
    repo.git(["commit", "-q", "-m", "config"]);
    let a = repo.create("alpha");
    let b = repo.create("beta");
    for (tool, rel) in [
        ("Write", "src/login.rs"),
        ("MultiEdit", "src/auth.rs"),
        ("NotebookEdit", "nb/a.ipynb"),
        ("Edit", "Cargo.lock"),
    ] {
        let run = hook(
            &repo,
            &file_tool("PostToolUse", "agent-a", &a, tool, &a.join(rel)),
            &[],
        );
        assert_eq!(run.stdout, "");
    }
    // Outside the repository: ignored.
    hook(
        &repo,
        &file_tool(
            "PostToolUse",
            "agent-a",
            &a,
            "Write",
            &repo.base().join("elsewhere.txt"),
        ),
        &[],
    );
    let info = repo.run(["info", "alpha", "--json"]).ok().json();
    let claimed: Vec<&str> = info["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        claimed,
        ["src/login.rs", "src/auth.rs", "nb/a.ipynb", "Cargo.lock"]
    );
    assert!(info["claims"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["how"] == "edit"));

    // beta's agent: denied the owned files, allowed its own, new and shared ones.
    let deny = hook(
        &repo,
        &file_tool("PreToolUse", "agent-b", &b, "Edit", &b.join("src/login.rs")),
        &[],
    );
    let v: Value = serde_json::from_str(&deny.stdout).unwrap();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    repo.insta().bind(|| {
        insta::assert_snapshot!(
            "deny_reason",
            v["hookSpecificOutput"]["permissionDecisionReason"]
                .as_str()
                .unwrap()
        );
    });
    let nb = hook(
        &repo,
        &file_tool(
            "PreToolUse",
            "agent-b",
            &b,
            "NotebookEdit",
            &b.join("nb/a.ipynb"),
        ),
        &[],
    );
    assert!(nb.stdout.contains("\"deny\""), "{nb:?}");
    for rel in ["src/new.rs", "Cargo.lock"] {
        let run = hook(
            &repo,
            &file_tool("PreToolUse", "agent-b", &b, "Write", &b.join(rel)),
            &[],
        );
        assert_eq!(run.stdout, "", "{rel}");
    }
    // alpha's own agent may keep writing its file; Bash is not a file tool.
    let own = hook(
        &repo,
        &file_tool(
            "PreToolUse",
            "agent-a",
            &a,
            "Write",
            &a.join("src/login.rs"),
        ),
        &[],
    );
    assert_eq!(own.stdout, "");
    let bash = json!({"session_id": "agent-b", "cwd": b, "hook_event_name": "PreToolUse",
                      "tool_name": "Bash", "tool_input": {"command": "rm src/login.rs"}});
    assert_eq!(hook(&repo, &bash, &[]).stdout, "");
    assert!(audit_lines(&repo)
        .iter()
        .any(|l| l["event"] == "context-deny"));
}

// 6. The hook never breaks the agent.
#[test]
fn failures_exit_zero_silently_with_an_audit_line() {
    let repo = TestRepo::new();
    let wt = repo.create("fix-login");
    let t = transcript(&repo.base(), "ok", 190_000);
    let dir_as_transcript = repo.base().join("a-directory.jsonl");
    std::fs::create_dir_all(&dir_as_transcript).unwrap();
    let agents = repo.store().join("agents");
    type Case<'a> = (&'a str, Vec<u8>, Box<dyn Fn()>);
    let cases: Vec<Case> = vec![
        ("garbage", b"\x00\xffnot json {{{".to_vec(), Box::new(|| {})),
        (
            "truncated",
            br#"{"session_id":"x","hook_event_name":"PostToolUse","cw"#.to_vec(),
            Box::new(|| {}),
        ),
        (
            "missing transcript",
            post_tool_use("m", &wt, &repo.base().join("gone.jsonl"))
                .to_string()
                .into_bytes(),
            Box::new(|| {}),
        ),
        (
            "directory transcript",
            post_tool_use("d", &wt, &dir_as_transcript)
                .to_string()
                .into_bytes(),
            Box::new(|| {}),
        ),
        (
            "locked store",
            post_tool_use("locked", &wt, &t).to_string().into_bytes(),
            Box::new({
                let agents = agents.clone();
                move || {
                    std::fs::create_dir_all(&agents).unwrap();
                    // A fresh lock with no parsable owner is respected (not broken) for 10 s.
                    std::fs::write(agents.join("locked.toml.lock"), "").unwrap();
                }
            }),
        ),
        (
            "unwritable store",
            post_tool_use("u", &wt, &t).to_string().into_bytes(),
            Box::new({
                let agents = agents.clone();
                move || {
                    let _ = std::fs::remove_dir_all(&agents);
                    std::fs::write(&agents, "not a directory").unwrap();
                }
            }),
        ),
    ];
    for (name, input, prepare) in cases {
        prepare();
        let before = audit_lines(&repo).len();
        let started = Instant::now();
        let run = hook_raw(&repo, &wt, &input, &[]);
        // Not a speed target (that is bench/context.py): this catches waiting out a 10 s lock.
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "{name}: {:?}",
            started.elapsed()
        );
        assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{name}: {run:?}");
        let lines = audit_lines(&repo);
        assert_eq!(lines.len(), before + 1, "{name}: {lines:?}");
        assert_eq!(lines[before]["event"], "context-hook-failed", "{name}");
    }
}

#[test]
fn status_needs_an_agent_session_to_show() {
    let repo = TestRepo::new();
    let wt = repo.create("fix-login");
    let out = repo.run_in(&wt, ["context", "status"]).fails(1);
    insta::assert_snapshot!("status_without_agent", out.stderr);
    let out = repo
        .run(["context", "wrapped-up", "--agent-session", "nope"])
        .fails(1);
    assert!(
        out.stderr.contains("no agent session \"nope\""),
        "{}",
        out.stderr
    );

    // A statusline pipes its JSON payload: the agent's state, refreshed from its transcript.
    let t = transcript(&repo.base(), "statusline", 100_000);
    hook(
        &repo,
        &session_start("sl-agent", &wt, "startup", Some("claude-sonnet-4-5[1m]")),
        &[],
    );
    let mut child = Command::new(bin());
    common::hermetic(&mut child, &repo.home);
    let mut child = child
        .current_dir(&wt)
        .args(["context", "status", "--stdin"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let payload = json!({"session_id": "sl-agent", "transcript_path": t, "model": {"id": "x"}});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    let out = common::to_run(child.wait_with_output().unwrap()).ok();
    assert_eq!(
        out.stdout,
        "context 10.3% of the compaction point (100,000 of 967,000 tokens, from model); 10.0% of \
         the 1,000,000 window (from model) | fired: - | wrapped up: - | compactions: 0 | model: \
         claude-sonnet-4-5[1m] | session: fix-login\n"
    );
}
