//! The context hook through the real binary: hook JSON on stdin, transcripts in the real formats
//! (fixtures/transcripts, plus generated ones in temp dirs), state in a real repository's store.

mod common;
use common::{bin, Run, TestRepo};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/transcripts")
        .join(name)
}

/// Runs `git-session context hook` in `dir` with `stdin` and extra environment.
fn hook_raw(repo: &TestRepo, dir: &Path, stdin: &[u8], env: &[(&str, &str)]) -> Run {
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

fn hook(repo: &TestRepo, payload: &Value, env: &[(&str, &str)]) -> Run {
    let cwd = PathBuf::from(payload["cwd"].as_str().unwrap_or("/"));
    let dir = if cwd.is_dir() { cwd } else { repo.root.clone() };
    let run = hook_raw(repo, &dir, payload.to_string().as_bytes(), env);
    assert_eq!(run.code, 0, "the hook must exit 0: {run:?}");
    run
}

/// The additionalContext of an answer, or None for no output.
fn context_of(run: &Run) -> Option<String> {
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
fn assistant(tokens: u64, id: &str) -> String {
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
fn transcript(dir: &Path, name: &str, tokens: u64) -> PathBuf {
    let path = dir.join(format!("{name}.jsonl"));
    let user = json!({"type": "user", "message": {"role": "user", "content": "go"}});
    std::fs::write(
        &path,
        format!("{user}\n{}\n{user}\n", assistant(tokens, name)),
    )
    .unwrap();
    path
}

fn post_tool_use(agent: &str, cwd: &Path, transcript: &Path) -> Value {
    json!({"session_id": agent, "transcript_path": transcript, "cwd": cwd,
           "hook_event_name": "PostToolUse", "tool_name": "Bash",
           "tool_input": {"command": "ls"}, "tool_response": {"stdout": ""},
           "permission_mode": "default"})
}

fn session_start(agent: &str, cwd: &Path, source: &str, model: Option<&str>) -> Value {
    let mut v = json!({"session_id": agent, "transcript_path": cwd.join("none.jsonl"), "cwd": cwd,
                       "hook_event_name": "SessionStart", "source": source});
    if let Some(m) = model {
        v["model"] = json!(m);
    }
    v.as_object_mut().unwrap().remove("transcript_path");
    v
}

fn status_json(repo: &TestRepo, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut cmd = repo.cmd_in(dir);
    cmd.args(["context", "status", "--json"]).args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    common::to_run(cmd.output().unwrap()).ok().json()
}

fn audit_lines(repo: &TestRepo) -> Vec<Value> {
    std::fs::read_to_string(repo.store().join("audit.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

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

fn file_tool(event: &str, agent: &str, cwd: &Path, tool: &str, path: &Path) -> Value {
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

/// The keys an answer may carry, per agent and event (Claude Code hooks reference; Codex's
/// published hook output schemas, which reject unknown keys). Fails on any other key.
fn assert_schema(answer: &Value, event: &str) {
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

fn answer(run: &Run, event: &str) -> Option<Value> {
    if run.stdout.trim().is_empty() {
        return None;
    }
    let v: Value = serde_json::from_str(&run.stdout).expect("answer is JSON");
    assert_schema(&v, event);
    Some(v)
}

/// Appends lines to a transcript, as the agent does between hook calls.
fn append(path: &Path, lines: &[String]) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for l in lines {
        writeln!(f, "{l}").unwrap();
    }
}

// 8. Replay: a transcript grows one tool call at a time up to the automatic compaction it
// records; HANDOFF arrives after 75 % and before 100 % of that compaction point, on the default
// budget, on an autoCompactWindow from the settings, and on a 1M model.
#[test]
fn replay_handoff_arrives_before_the_recorded_compaction() {
    let repo = TestRepo::new();
    let wt = repo.create("replay");
    // (agent, model, settings, compaction point the transcript records)
    let cases: [(&str, &str, Option<&str>, u64); 3] = [
        ("r-default", "claude-sonnet-4-5-20250929", None, 167_000),
        // Before the settings case: an observed point is remembered per model.
        ("r-1m", "claude-opus-4-7", None, 967_000),
        (
            "r-settings",
            "claude-opus-4-7",
            Some(r#"{"autoCompactWindow": 400000}"#),
            367_000,
        ),
    ];
    for (agent, model, settings, point) in cases {
        match settings {
            Some(s) => repo.write(".claude/settings.local.json", s),
            None => {
                let _ = std::fs::remove_file(repo.root.join(".claude/settings.local.json"));
            }
        }
        let path = repo.base().join(format!("{agent}.jsonl"));
        let mut handoff_at = None;
        let mut tokens = 20_000;
        let mut step = 0;
        while tokens < point {
            step += 1;
            let id = format!("{agent}-{step}");
            let mut record: Value = serde_json::from_str(&assistant(tokens, &id)).unwrap();
            record["message"]["model"] = json!(model);
            append(&path, &[record.to_string()]);
            let mut p = post_tool_use(agent, &repo.root, &path);
            p["model"] = json!(model);
            let run = hook(
                &repo,
                &p,
                &[("CLAUDE_PROJECT_DIR", repo.root.to_str().unwrap())],
            );
            if let Some(v) = answer(&run, "PostToolUse") {
                let text = v["hookSpecificOutput"]["additionalContext"]
                    .as_str()
                    .unwrap();
                assert!(v["systemMessage"].as_str().unwrap().len() < 200);
                if text.starts_with("HANDOFF MODE") && handoff_at.is_none() {
                    handoff_at = Some(tokens);
                }
            }
            tokens += 7_919;
        }
        let at = handoff_at.unwrap_or_else(|| panic!("{agent}: no HANDOFF before compaction"));
        assert!(
            at * 100 > point * 75 && at < point,
            "{agent}: HANDOFF at {at}, compaction at {point}"
        );
        // The compaction itself, recorded as Claude Code does, then PostCompact.
        let boundary = json!({"type": "system", "subtype": "compact_boundary", "isSidechain": false,
            "content": "Conversation compacted", "compactMetadata":
            {"trigger": "auto", "preTokens": point, "postTokens": 12_000}});
        append(&path, &[boundary.to_string()]);
        let post = json!({"session_id": agent, "transcript_path": path, "cwd": wt,
                          "hook_event_name": "PostCompact", "trigger": "auto",
                          "compact_summary": "..."});
        assert_eq!(hook(&repo, &post, &[]).stdout, "");
        let v = status_json(&repo, &repo.root, &["--agent-session", agent], &[]);
        assert_eq!(v["compactions"], 1, "{agent}");
        assert_eq!(v["fired"], json!([]), "{agent}");
    }
    let _ = std::fs::remove_file(repo.root.join(".claude/settings.local.json"));
    // The observed point is remembered per model and becomes the budget for the next agent.
    let path = transcript(&repo.base(), "after", 100_000);
    hook(&repo, &post_tool_use("r-next", &repo.root, &path), &[]);
    let v = status_json(&repo, &repo.root, &["--agent-session", "r-next"], &[]);
    assert_eq!(
        (v["budget"].clone(), v["budget_source"].clone()),
        (json!(167_000), json!("observed"))
    );
}

// 9. Subagents never spend an alert; UserPromptSubmit delivers it; a sidechain compaction is
// not the main agent's.
#[test]
fn subagents_spend_no_alert_and_prompts_deliver_it() {
    let repo = TestRepo::new();
    let wt = repo.create("sub");
    let at75 = transcript(&repo.base(), "s75", 125_250);
    let agent = "main-agent-1";
    let mut sub = post_tool_use(agent, &wt, &at75);
    sub["agent_id"] = json!("a1b2c3");
    sub["agent_type"] = json!("Explore");
    for _ in 0..3 {
        assert_eq!(
            hook(&repo, &sub, &[]).stdout,
            "",
            "a subagent's call stays silent"
        );
    }
    let prompt = json!({"session_id": agent, "transcript_path": at75, "cwd": wt,
                        "hook_event_name": "UserPromptSubmit", "prompt": "next?",
                        "permission_mode": "default"});
    let v = answer(&hook(&repo, &prompt, &[]), "UserPromptSubmit").expect("the 70 % alert");
    assert!(v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .starts_with("Context awareness"));
    assert!(hook(&repo, &prompt, &[]).stdout.is_empty(), "once only");
    // A subagent's PostCompact changes nothing for the main agent.
    let mut pc = json!({"session_id": agent, "transcript_path": at75, "cwd": wt,
                        "hook_event_name": "PostCompact", "trigger": "auto"});
    pc["agent_id"] = json!("a1b2c3");
    hook(&repo, &pc, &[]);
    let v = status_json(&repo, &wt, &["--agent-session", agent], &[]);
    assert_eq!(
        (v["fired"].clone(), v["compactions"].clone()),
        (json!([70]), json!(0))
    );
    // A sidechain compact_boundary after the main record does not hide the main fill.
    let side = json!({"type": "system", "subtype": "compact_boundary", "isSidechain": true,
                      "compactMetadata": {"trigger": "auto", "preTokens": 90_000}});
    append(&at75, &[side.to_string()]);
    let v = status_json(&repo, &wt, &["--transcript", at75.to_str().unwrap()], &[]);
    assert_eq!(v["tokens"], 125_250);
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
