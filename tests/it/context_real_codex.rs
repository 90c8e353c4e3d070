//! Codex, end to end against our mock model server (the harness and the pinned version are in
//! `context_real`): its hooks trusted as `/hooks` would, then one `codex exec` run through its
//! compaction.

use crate::common::{self, TestRepo};
use crate::context_real::{
    agent_bin, assert_alerts_before_compaction, assert_no_escape, diagnosis, run_agent,
    status_of_session, CODEX,
};
use crate::context_support::mock::{self, Mock};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Codex's main calls offer tools and are not its compaction request.
pub(crate) fn codex_main(path: &str, body: &Value) -> bool {
    path.ends_with("/responses")
        && body["tools"].as_array().is_some_and(|t| !t.is_empty())
        && !body.to_string().contains("CONTEXT CHECKPOINT COMPACTION")
}

/// Features of Codex 0.169.0 that reach for the network or the desktop: all off.
const CODEX_FEATURES_OFF: &[&str] = &[
    "apps",
    "plugins",
    "plugin_sharing",
    "remote_plugin",
    "api_key_model_discovery",
    "api_key_cyber_access_programs",
    "browser_use",
    "browser_use_external",
    "computer_use",
    "in_app_browser",
    "in_app_updates",
    "daemon_auto_start",
    "image_generation",
    "realtime_conversation",
    "skill_mcp_dependency_install",
    "system_proxy_fallback",
    "shell_snapshot",
    "cli_daybreak",
    "multi_agent",
];

/// `$CODEX_HOME/config.toml`: our mock as a custom Responses provider, a model from Codex's
/// bundled catalog, updates, analytics and network features off, the repository trusted.
pub(crate) fn codex_home(repo: &TestRepo, mock: &Mock, trusted: &[&Path]) -> PathBuf {
    let home = repo.home.join(".codex");
    std::fs::create_dir_all(&home).unwrap();
    let mut config = format!(
        "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\napproval_policy = \"never\"\n\
         sandbox_mode = \"danger-full-access\"\ncheck_for_update_on_startup = false\n\
         [model_providers.mock]\nname = \"mock\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\n\
         env_key = \"MOCK_API_KEY\"\nrequest_max_retries = 0\nstream_max_retries = 0\n\
         [analytics]\nenabled = false\n[features]\n",
        mock.url()
    );
    for f in CODEX_FEATURES_OFF {
        config.push_str(&format!("{f} = false\n"));
    }
    for dir in trusted {
        config.push_str(&format!(
            "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            dir.display()
        ));
    }
    std::fs::write(home.join("config.toml"), config).unwrap();
    home
}

/// Trusts the hooks Codex finds for `cwd`, as `/hooks` would: their keys and current hashes
/// from `codex app-server`'s `hooks/list`, written as `[hooks.state."<key>"] trusted_hash`.
pub(crate) fn codex_trust_hooks(repo: &TestRepo, bin: &Path, home: &Path, cwd: &Path) -> usize {
    use std::io::Write;
    let mut cmd = Command::new(bin);
    common::hermetic(&mut cmd, &repo.home);
    let mut child = cmd
        .arg("app-server")
        .current_dir(cwd)
        .env("CODEX_HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let requests = [
        json!({"id": 1, "method": "initialize",
               "params": {"clientInfo": {"name": "git-session-tests", "version": "1"}}}),
        json!({"method": "initialized"}),
        json!({"id": 2, "method": "hooks/list", "params": {"cwds": [cwd]}}),
    ];
    for r in requests {
        writeln!(stdin, "{r}").unwrap();
    }
    let stdout = child.stdout.take().unwrap();
    let mut listed = None;
    for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
        let Ok(line) = line else { break };
        let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if v["id"] == 2 {
            listed = Some(v);
            break;
        }
    }
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let listed = listed.expect("hooks/list answered");
    let hooks = listed["result"]["data"][0]["hooks"]
        .as_array()
        .unwrap()
        .clone();
    let mut trust = String::new();
    for h in &hooks {
        trust.push_str(&format!(
            "[hooks.state.{}]\ntrusted_hash = {}\n",
            h["key"], h["currentHash"]
        ));
    }
    let config = home.join("config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&trust);
    std::fs::write(config, text).unwrap();
    hooks.len()
}

// Codex, one `codex exec` run: hooks trusted as /hooks would; the identity reaches the model;
// an apply_patch of another session's file is denied; alerts arrive on the call that crosses
// the threshold (its token_usage_record), at 90 % of the model's 272,000 window.
#[test]
fn codex_end_to_end() {
    let Some(bin) = agent_bin(CODEX) else { return };
    let repo = TestRepo::new();
    repo.run(["context", "install", "--codex"]).ok();
    repo.git(["add", ".codex/hooks.json"]);
    repo.git(["commit", "-qm", "agent hooks"]);
    let alpha = repo.create("alpha");
    let beta = repo.create("beta");
    repo.run_in(&beta, ["claim", "README.md"]).ok();
    let cmd = |c: &str| json!({"cmd": c, "login": false});
    let patch = "*** Begin Patch\n*** Update File: README.md\n@@\n-hello\n+mine\n*** End Patch\n";
    // Codex compacts at 244,800 (90 % of gpt-5.5's 272,000): 70 % is 171,360, 90 % 220,320.
    let turns = vec![
        mock::tool(30_000, "exec_command", cmd("echo one")),
        mock::tool(40_000, "apply_patch", json!(patch)),
        mock::tool(200_000, "exec_command", cmd("echo two")),
        mock::tool(222_000, "exec_command", cmd("echo three")),
        mock::tool(236_000, "exec_command", cmd("echo four")),
        mock::tool(246_000, "exec_command", cmd("echo five")),
        mock::tool(30_000, "exec_command", cmd("echo six")),
        mock::text(31_000, "All done."),
    ];
    let server = Mock::start(turns, codex_main);
    let home = codex_home(&repo, &server, &[&repo.root, &alpha]);
    let trusted = codex_trust_hooks(&repo, &bin, &home, &alpha);
    assert!(trusted >= 5, "hooks Codex found: {trusted}");
    let env = vec![
        ("CODEX_HOME", home.display().to_string()),
        ("MOCK_API_KEY", "test-key".to_string()),
        ("OPENAI_API_KEY", "test-key".to_string()),
    ];
    let run = run_agent(
        &repo,
        &server,
        &bin,
        &alpha,
        &["exec", "--skip-git-repo-check", "Do the task."],
        &env,
        180,
    );
    // The judgement last: a CI log keeps the end of a long failure.
    let dump = format!("{}\n{}", server.dump(), diagnosis(&repo, &server));
    assert_eq!(run.code, 0, "{run:?}\n{dump}");
    assert_no_escape(&server);
    assert_eq!(server.turns_left(), 0, "{dump}");
    let log = server.log();
    let main: Vec<_> = log.iter().filter(|l| l.turn.is_some()).collect();
    assert!(main[0].text().contains("session/alpha"), "identity: {dump}");
    assert!(
        main[2].text().contains("beta"),
        "the deny reason names the owner: {dump}"
    );
    assert_eq!(
        std::fs::read_to_string(alpha.join("README.md")).unwrap(),
        "hello\n"
    );
    // Each alert in the request right after the call that crossed its threshold (its
    // token_usage_record: input plus output tokens), against 244,800.
    let first = |needle: &str| main.iter().position(|l| l.text().contains(needle));
    assert_eq!(first("Context awareness"), Some(3), "{dump}");
    assert_eq!(first("HANDOFF MODE"), Some(4), "{dump}");
    assert!(main[4].text().contains("222,040 of 244,800"), "{dump}");
    // Codex compacts after the 246,000 call; every alert came before its compaction request,
    // and its compaction events count one compaction.
    assert_alerts_before_compaction(
        &log,
        |l| l.text().contains("CONTEXT CHECKPOINT COMPACTION"),
        &dump,
    );
    let agent = status_of_session(&repo, &alpha);
    assert_eq!(agent["compactions"], json!(1), "{agent}");
    assert_eq!(agent["budget"], json!(244_800), "{agent}");
}

// An agent of a session stays in its own worktree (issue 29): real Codex's apply_patch adding a
// file to the main worktree is denied before it happens; the model reads where its own
// worktree is; nothing is written.
#[test]
fn codex_stays_in_its_worktree() {
    let Some(bin) = agent_bin(CODEX) else { return };
    let repo = TestRepo::new();
    repo.run(["context", "install", "--codex"]).ok();
    repo.git(["add", ".codex/hooks.json"]);
    repo.git(["commit", "-qm", "agent hooks"]);
    let alpha = repo.create("alpha");
    let into_main = repo.root.join("escaped.txt");
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+x\n*** End Patch\n",
        into_main.display()
    );
    let turns = vec![
        mock::tool(30_000, "apply_patch", json!(patch)),
        mock::text(31_000, "Done."),
    ];
    let server = Mock::start(turns, codex_main);
    let home = codex_home(&repo, &server, &[&repo.root, &alpha]);
    codex_trust_hooks(&repo, &bin, &home, &alpha);
    let env = vec![
        ("CODEX_HOME", home.display().to_string()),
        ("MOCK_API_KEY", "test-key".to_string()),
        ("OPENAI_API_KEY", "test-key".to_string()),
    ];
    let run = run_agent(
        &repo,
        &server,
        &bin,
        &alpha,
        &["exec", "--skip-git-repo-check", "Do the task."],
        &env,
        180,
    );
    // The judgement last: a CI log keeps the end of a long failure.
    let dump = format!("{}\n{}", server.dump(), diagnosis(&repo, &server));
    assert_eq!(run.code, 0, "{run:?}\n{dump}");
    assert_no_escape(&server);
    assert!(!into_main.exists(), "{dump}");
    let log = server.log();
    let main: Vec<_> = log.iter().filter(|l| l.turn.is_some()).collect();
    let own = format!("whose worktree is {}", alpha.display());
    assert!(
        main[1].text().contains(&own),
        "the refusal reaches the model: {dump}"
    );
}

// What `list` shows of Codex (issue 32): one `codex exec` turn ends with Codex's SessionEnd,
// so the agent is `ended` (not `gone`, though the process that ran it no longer runs).
#[test]
fn codex_exec_turn_shows_in_list() {
    let Some(bin) = agent_bin(CODEX) else { return };
    let repo = TestRepo::new();
    repo.run(["context", "install", "--codex"]).ok();
    repo.git(["add", ".codex/hooks.json"]);
    repo.git(["commit", "-qm", "agent hooks"]);
    let alpha = repo.create("alpha");
    let server = Mock::start(
        vec![
            mock::tool(
                30_000,
                "exec_command",
                json!({"cmd": "echo one", "login": false}),
            ),
            mock::text(31_000, "Done."),
        ],
        codex_main,
    );
    let home = codex_home(&repo, &server, &[&repo.root, &alpha]);
    codex_trust_hooks(&repo, &bin, &home, &alpha);
    let env = vec![
        ("CODEX_HOME", home.display().to_string()),
        ("MOCK_API_KEY", "test-key".to_string()),
        ("OPENAI_API_KEY", "test-key".to_string()),
    ];
    let run = run_agent(
        &repo,
        &server,
        &bin,
        &alpha,
        &["exec", "--skip-git-repo-check", "Do the task."],
        &env,
        180,
    );
    let dump = format!("{}\n{}", server.dump(), diagnosis(&repo, &server));
    assert_eq!(run.code, 0, "{run:?}\n{dump}");
    assert_no_escape(&server);
    let list = repo.run(["list", "--json"]).ok().json();
    let agent = &list
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == "alpha")
        .unwrap()["agent"];
    let audit = std::fs::read_to_string(repo.store().join("audit.log")).unwrap_or_default();
    assert_eq!(agent["state"], "ended", "{agent:#}\naudit: {audit}");
    assert_eq!(agent["event"], "SessionEnd", "{agent:#}");
    assert_eq!(agent["reason"], Value::Null, "{agent:#}");
    // The process the hooks recorded as the agent no longer runs.
    let pid = agent["pid"].as_i64().expect("Codex's process recorded");
    assert!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), None).is_err(),
        "pid {pid} still runs after codex exec returned"
    );
}
