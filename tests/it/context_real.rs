//! The real agent CLIs, end to end (issue 18): Claude Code, Codex and Gemini CLI as installed
//! from the npm registry by `.ci/agents.sh` (pinned versions below), pointed at our model server
//! on 127.0.0.1 ([`mock`]), running our hooks in a real repository. The assertions are on what
//! the model receives (identity, deny reasons, alerts and whether they precede the compaction
//! request) and on `context status`.
//!
//! An agent that is not installed is skipped with a loud message naming it; CI installs them.
//! Everything stays on loopback: the agents' update, telemetry and plugin features are off, and
//! their proxy variables point at the mock, which logs any attempt to go elsewhere as an escape
//! (each test asserts there is none).
//!
//! This module is their harness and holds the pinned versions; the scenarios are per agent, in
//! `context_real_claude`, `context_real_codex` and `context_real_gemini`.

use crate::common::{self, Run, TestRepo};
use crate::context_support::mock::{self, Mock};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// (name, npm package, version): as `.ci/agents.sh` installs them.
pub const CLAUDE: (&str, &str, &str) = ("claude", "@anthropic-ai/claude-code", "2.1.328");
pub const GEMINI: (&str, &str, &str) = ("gemini", "@google/gemini-cli", "0.61.0");
pub const CODEX: (&str, &str, &str) = ("codex", "@openai/codex", "0.169.0");
pub const COPILOT: (&str, &str, &str) = ("copilot", "@github/copilot", "1.0.102");

fn agents_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("GIT_SESSION_AGENTS_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache"));
    cache.join("git-session-ci/agents")
}

/// The version the suite drives: the pin, or with `GIT_SESSION_AGENTS=latest` the newest the
/// registry had when `.ci/agents.sh` ran in that mode (it writes `<name>.latest`).
fn driven_version(name: &str, pinned: &str) -> Option<String> {
    if std::env::var("GIT_SESSION_AGENTS").as_deref() != Ok("latest") {
        return Some(pinned.to_string());
    }
    let file = agents_dir().join(format!("{name}.latest"));
    match std::fs::read_to_string(&file) {
        Ok(v) if !v.trim().is_empty() => Some(v.trim().to_string()),
        _ => {
            eprintln!(
                "!!!! SKIPPED: GIT_SESSION_AGENTS=latest but {} is missing (run \
                 GIT_SESSION_AGENTS=latest .ci/agents.sh) !!!!",
                file.display()
            );
            None
        }
    }
}

/// The installed CLI, or `None` after saying loudly that the test is skipped.
pub(crate) fn agent_bin(agent: (&str, &str, &str)) -> Option<PathBuf> {
    let (name, package, pinned) = agent;
    let version = driven_version(name, pinned)?;
    eprintln!("driving {package}@{version}");
    let bin = agents_dir()
        .join(format!("{name}-{version}"))
        .join("node_modules/.bin")
        .join(name);
    if bin.exists() {
        return Some(bin);
    }
    eprintln!(
        "!!!! SKIPPED: {package}@{version} is not installed at {} (CI installs it: .ci/agents.sh) !!!!",
        bin.display()
    );
    None
}

/// Runs an agent CLI hermetically (the test's HOME, git config, UTC), with `env`, from `dir`,
/// within `secs`; every proxy variable points at the mock.
pub(crate) fn run_agent(
    repo: &TestRepo,
    mock: &Mock,
    bin: &Path,
    dir: &Path,
    args: &[&str],
    env: &[(&str, String)],
    secs: u64,
) -> Run {
    let mut cmd = Command::new(bin);
    common::hermetic(&mut cmd, &repo.home);
    let proxy = mock.url();
    cmd.current_dir(dir)
        .args(args)
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
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The agents end a hook after the 10 s timeout `context install` writes; on a test machine
    // loaded with the rest of the suite the hook may use all but one of them (its wait for
    // the agent's own late transcript writes is 4/9 of its budget), where the hermetic 5 s
    // would leave an alert one call late now and then.
    cmd.env("GIT_SESSION_HOOK_BUDGET", "9s");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().unwrap();
    let started = Instant::now();
    let out = wait_within(child, Duration::from_secs(secs));
    eprintln!(
        "{} {} took {:?}",
        bin.display(),
        args.join(" "),
        started.elapsed()
    );
    out
}

fn wait_within(mut child: std::process::Child, limit: Duration) -> Run {
    use wait_timeout::ChildExt;
    match child.wait_timeout(limit).unwrap() {
        Some(_) => common::to_run(child.wait_with_output().unwrap()),
        None => {
            let _ = child.kill();
            let run = common::to_run(child.wait_with_output().unwrap());
            panic!("the agent did not finish within {limit:?}: {run:?}");
        }
    }
}

/// Index of the first logged request whose body contains `needle`.
pub(crate) fn first_with(log: &[mock::Logged], needle: &str) -> Option<usize> {
    log.iter().position(|l| l.text().contains(needle))
}

/// Runs a real-agent scenario, and once more from scratch when it fails: the agent writes its
/// transcript on threads of its own, and on a machine loaded with the rest of the suite a
/// record can miss the hook's wait (the failure's diagnosis, printed before the second run,
/// shows the store's `context-hook-late` lines). A second failure fails the test.
pub(crate) fn once_more_if_it_fails(scenario: impl Fn()) {
    let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(&scenario));
    if first.is_err() {
        eprintln!("!!!! the first run failed (above); running it once more !!!!");
        scenario();
    }
}

/// What a failed real-agent scenario is judged by, short enough to survive a truncated CI log:
/// per model call, the alert sentences it carried; then every hook failure the store audited.
pub(crate) fn diagnosis(repo: &TestRepo, mock: &Mock) -> String {
    let mut out = Vec::new();
    for (i, l) in mock.log().iter().enumerate() {
        let text = l.text();
        let alerts: Vec<String> = ["Context awareness", "HANDOFF MODE", "EMERGENCY"]
            .iter()
            .filter_map(|a| {
                let at = text.find(a)?;
                Some(text[at..].chars().take(160).collect())
            })
            .collect();
        out.push(format!("call #{i} (turn {:?}): alerts {alerts:?}", l.turn));
    }
    let audit = std::fs::read_to_string(repo.store().join("audit.log")).unwrap_or_default();
    let failed: Vec<&str> = audit
        .lines()
        .filter(|l| l.contains("context-hook-failed") || l.contains("context-hook-late"))
        .collect();
    out.push(format!(
        "hook failures and late readings audited: {failed:?}"
    ));
    out.join("\n")
}

/// Every alert (70, 90 and 95 %) reached the model before the agent's compaction request, the
/// first logged call `is_compaction` says is one.
pub(crate) fn assert_alerts_before_compaction(
    log: &[mock::Logged],
    is_compaction: impl Fn(&mock::Logged) -> bool,
    dump: &str,
) {
    let compaction = log
        .iter()
        .position(is_compaction)
        .unwrap_or_else(|| panic!("{dump}\nno compaction request"));
    for alert in ["Context awareness", "HANDOFF MODE", "EMERGENCY"] {
        let at = first_with(log, alert).unwrap_or_else(|| panic!("{dump}\nno {alert}"));
        assert!(
            at < compaction,
            "{dump}\n{alert} at #{at}, compaction at #{compaction}"
        );
    }
}

pub(crate) fn assert_no_escape(mock: &Mock) {
    let escapes: Vec<_> = mock.log().into_iter().filter(|l| l.escape).collect();
    assert!(
        escapes.is_empty(),
        "requests that left loopback: {escapes:?}"
    );
}

/// `context status --json` in `dir` (the agent session linked there).
pub(crate) fn status_of_session(repo: &TestRepo, dir: &Path) -> Value {
    let mut cmd = repo.cmd_in(dir);
    cmd.args(["context", "status", "--json"]);
    common::to_run(cmd.output().unwrap()).ok().json()
}
