//! What `list` shows of a real Claude Code (issue 32), against our model server on 127.0.0.1
//! (the harness is `context_real`): a turn that ends is `waiting` for input while the process
//! runs; the process killed with SIGKILL is `gone`; a session that ends is `ended`. Each state
//! is polled from `list --json` and must show within a few seconds of what caused it (the
//! agent's own hooks run first; on a loaded test machine they take their time).

use crate::common::{self, TestRepo};
use crate::context_real::{agent_bin, assert_no_escape, run_agent, CLAUDE};
use crate::context_support::mock::{self, Mock};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn claude_main(path: &str, body: &Value) -> bool {
    path.ends_with("/v1/messages") && body["tools"].as_array().is_some_and(|t| !t.is_empty())
}

fn claude_env(mock: &Mock) -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_BASE_URL", mock.url()),
        ("ANTHROPIC_API_KEY", "sk-ant-test-key".to_string()),
        ("IS_SANDBOX", "1".to_string()),
        ("CLAUDE_CODE_ENABLE_TELEMETRY", "0".to_string()),
    ]
}

/// A repository with the hooks installed and committed, and a session `alpha` for the agent.
fn repo_with_session() -> (TestRepo, PathBuf) {
    let repo = TestRepo::new();
    repo.run(["context", "install"]).ok();
    repo.git(["add", ".claude/settings.json"]);
    repo.git(["commit", "-qm", "agent hooks"]);
    let alpha = repo.create("alpha");
    (repo, alpha)
}

/// `list --json`'s `agent` of `alpha`.
fn agent(repo: &TestRepo) -> Value {
    let list = repo.run(["list", "--json"]).ok().json();
    list.as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == "alpha")
        .map(|s| s["agent"].clone())
        .unwrap_or(Value::Null)
}

/// Polls `list --json` until `alpha`'s agent is in `state`; how long that took, or what it
/// showed last.
fn until(repo: &TestRepo, state: &str, limit: Duration) -> Result<Duration, Value> {
    let started = Instant::now();
    loop {
        let a = agent(repo);
        if a["state"] == state {
            return Ok(started.elapsed());
        }
        if started.elapsed() > limit {
            return Err(a);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Claude Code reading prompts as stream-json on a pipe: it answers each and waits for the
/// next while the pipe stays open.
fn spawn_streaming(repo: &TestRepo, mock: &Mock, bin: &Path, dir: &Path) -> std::process::Child {
    let mut cmd = Command::new(bin);
    common::hermetic(&mut cmd, &repo.home);
    let proxy = mock.url();
    cmd.current_dir(dir)
        .args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "claude-sonnet-4-5-20250929",
            "--dangerously-skip-permissions",
        ])
        .env("HTTP_PROXY", &proxy)
        .env("HTTPS_PROXY", &proxy)
        .env("http_proxy", &proxy)
        .env("https_proxy", &proxy)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .env("no_proxy", "127.0.0.1,localhost")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("GIT_SESSION_HOOK_BUDGET", "9s")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (k, v) in claude_env(mock) {
        cmd.env(k, v);
    }
    cmd.spawn().unwrap()
}

// A turn that ends: waiting for input while Claude Code runs; killed with SIGKILL (no end
// event): gone.
#[test]
fn claude_code_waits_after_its_turn_and_is_gone_when_killed() {
    let Some(bin) = agent_bin(CLAUDE) else { return };
    let (repo, alpha) = repo_with_session();
    let server = Mock::start(
        vec![
            mock::tool(
                20_000,
                "Bash",
                json!({"command": "echo hi", "description": "say hi"}),
            ),
            mock::text(21_000, "Said hi."),
        ],
        claude_main,
    );
    let mut child = spawn_streaming(&repo, &server, &bin, &alpha);
    let prompt = json!({"type": "user", "message": {"role": "user", "content": "Say hi."}});
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{prompt}").unwrap();
    stdin.flush().unwrap();
    // Its SessionStart says it waits for a first prompt; the prompt makes it work, and the
    // end of the turn (Stop) makes it wait again.
    let started = until(&repo, "waiting", Duration::from_secs(120));
    let first = agent(&repo);
    let deadline = Instant::now() + Duration::from_secs(120);
    while server.turns_left() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let answered = Instant::now();
    let mut shown = agent(&repo);
    while !(shown["state"] == "waiting" && shown["event"] == "Stop")
        && answered.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(100));
        shown = agent(&repo);
    }
    if shown["state"] != "waiting" || shown["event"] != "Stop" {
        let _ = child.kill();
        panic!(
            "no new wait after the turn (started: {started:?}, first: {first:#}): {shown:#}\n{}\naudit: {}",
            server.dump(),
            std::fs::read_to_string(repo.store().join("audit.log")).unwrap_or_default()
        );
    }
    eprintln!(
        "waiting again {:?} after the last answer",
        answered.elapsed()
    );
    assert_eq!(shown["reason"], "input", "{shown:#}");
    assert_eq!(
        shown["pid"],
        json!(child.id()),
        "the agent is the process we started"
    );
    assert_eq!(server.turns_left(), 0, "{}", server.dump());
    // Still waiting a moment later: nothing else moves it while the agent waits.
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(agent(&repo)["state"], "waiting");

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let _ = child.wait();
    drop(stdin);
    let gone = until(&repo, "gone", Duration::from_secs(1));
    assert!(
        gone.is_ok(),
        "not gone within a second of SIGKILL: {gone:?}"
    );
    assert_no_escape(&server);
}

// A session that ends (`claude -p` exits after its answer): ended.
#[test]
fn claude_code_that_exits_is_ended() {
    let Some(bin) = agent_bin(CLAUDE) else { return };
    let (repo, alpha) = repo_with_session();
    let server = Mock::start(vec![mock::text(20_000, "Hello.")], claude_main);
    let run = run_agent(
        &repo,
        &server,
        &bin,
        &alpha,
        &[
            "-p",
            "Say hello.",
            "--model",
            "claude-sonnet-4-5-20250929",
            "--dangerously-skip-permissions",
        ],
        &claude_env(&server),
        120,
    );
    assert_eq!(run.code, 0, "{run:?}\n{}", server.dump());
    let ended = until(&repo, "ended", Duration::from_secs(1));
    assert!(ended.is_ok(), "not ended: {ended:?}\n{}", server.dump());
    assert_no_escape(&server);
}
