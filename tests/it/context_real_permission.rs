//! A real agent asking a permission (issue 32): Claude Code, interactive under tmux against our
//! model server on 127.0.0.1 (the harness is `context_real`), is asked by the model to run a
//! Bash command its settings do not allow. `list --json` must show `permission` within a second
//! of the question appearing on its screen, `working` once the question is answered with a key
//! press, and `waiting` for input when the turn ends.

use crate::common::tmux::Tmux;
use crate::common::{self, TestRepo};
use crate::context_real::{agent_bin, assert_no_escape, CLAUDE, CODEX};
use crate::context_real_codex::{codex_home, codex_main, codex_trust_hooks};
use crate::context_support::mock::{self, Mock};
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};

fn claude_main(path: &str, body: &Value) -> bool {
    path.ends_with("/v1/messages") && body["tools"].as_array().is_some_and(|t| !t.is_empty())
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

/// The shell line that starts the agent in the window: its environment pointed at the mock
/// (every proxy variable too), updates and telemetry off.
fn agent_script(mock: &Mock, bin: &Path, home: &Path, args: &[&str]) -> String {
    let url = mock.url();
    // Interactive only: the official plugin marketplace (GitHub, downloads.claude.ai) and the
    // model catalog (downloads.claude.ai, read here from a file that does not exist).
    let catalog = format!("file://{}/no-model-catalog.json", home.display());
    let mut s = String::from("exec env");
    for (k, v) in [
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", "sk-ant-test-key"),
        ("HTTP_PROXY", &url),
        ("HTTPS_PROXY", &url),
        ("http_proxy", &url),
        ("https_proxy", &url),
        ("NO_PROXY", "127.0.0.1,localhost"),
        ("no_proxy", "127.0.0.1,localhost"),
        ("DISABLE_AUTOUPDATER", "1"),
        ("DISABLE_TELEMETRY", "1"),
        ("DISABLE_ERROR_REPORTING", "1"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ("CLAUDE_CODE_ENABLE_TELEMETRY", "0"),
        ("GIT_SESSION_HOOK_BUDGET", "9s"),
        ("CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL", "1"),
        ("CLAUDE_CODE_MODEL_CATALOG_URL", &catalog),
    ] {
        s.push_str(&format!(" {k}='{v}'"));
    }
    s.push_str(&format!(" '{}'", bin.display()));
    for a in args {
        s.push_str(&format!(" '{a}'"));
    }
    s
}

/// What a first interactive run would ask before the prompt, answered as a person would once:
/// onboarding done, the API key approved, the worktree trusted; and the user's settings allow
/// `sleep 3` (the tool the model calls after the one it must ask for).
fn claude_first_run_done(home: &Path, dirs: &[&Path]) {
    let projects: serde_json::Map<String, Value> = dirs
        .iter()
        .map(|d| {
            (
                d.display().to_string(),
                json!({"hasTrustDialogAccepted": true, "allowedTools": [],
                       "hasCompletedProjectOnboarding": true}),
            )
        })
        .collect();
    let state = json!({
        "hasCompletedOnboarding": true,
        "theme": "dark",
        "numStartups": 3,
        "customApiKeyResponses": {"approved": ["sk-ant-test-key"], "rejected": []},
        "bypassPermissionsModeAccepted": false,
        "projects": projects,
    });
    std::fs::write(home.join(".claude.json"), state.to_string()).unwrap();
    let user = home.join(".claude");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("settings.json"),
        json!({"permissions": {"allow": ["Bash(sleep 3)"]}}).to_string(),
    )
    .unwrap();
}

// Claude Code asks to run `touch` (not allowed by any setting): permission, shown within a
// second of the question on its screen; answered with Enter: working (the approved tool and
// the next, allowed one run); the turn's end: waiting for input.
#[test]
fn claude_code_permission_under_tmux_then_working_then_waiting() {
    let Some(bin) = agent_bin(CLAUDE) else { return };
    if !common::installed("tmux") {
        eprintln!("!!!! SKIPPED: tmux is not installed (Claude Code is driven under tmux) !!!!");
        return;
    }
    let repo = TestRepo::new();
    repo.run(["context", "install"]).ok();
    repo.git(["add", ".claude/settings.json"]);
    repo.git(["commit", "-qm", "agent hooks"]);
    let alpha = repo.create("alpha");
    claude_first_run_done(&repo.home, &[&alpha, &repo.root]);
    let server = Mock::start(
        vec![
            mock::tool(
                20_000,
                "Bash",
                json!({"command": "touch made-by-agent", "description": "make a file"}),
            ),
            mock::tool(
                21_000,
                "Bash",
                json!({"command": "sleep 3", "description": "wait a moment"}),
            ),
            mock::text(22_000, "Made it."),
        ],
        claude_main,
    );
    let script = agent_script(
        &server,
        &bin,
        &repo.home,
        &["--model", "claude-sonnet-4-5-20250929"],
    );
    let tmux = Tmux::start(&repo.home, &alpha, 150, 45, &script);
    let fail = |what: &str| -> ! {
        panic!(
            "{what}\nscreen:\n{}\nagent: {:#}\nmock:\n{}\naudit: {}",
            tmux.pane(),
            agent(&repo),
            server.dump(),
            std::fs::read_to_string(repo.store().join("audit.log")).unwrap_or_default()
        )
    };
    // Its SessionStart: waiting for a first prompt.
    let started = Instant::now();
    while agent(&repo)["state"] != "waiting" {
        if started.elapsed() > Duration::from_secs(90) {
            fail("no SessionStart recorded");
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    tmux.until_within("the prompt box", "\u{276f}", Duration::from_secs(60));
    tmux.keys(&["Make the file."], true);
    std::thread::sleep(Duration::from_millis(300));
    tmux.keys(&["Enter"], false);

    // The question on the screen and `permission` in the list, each when first seen.
    let asked = Instant::now();
    let (mut on_screen, mut listed) = (None, None);
    while on_screen.is_none() || listed.is_none() {
        if on_screen.is_none() && tmux.pane().contains("Do you want") {
            on_screen = Some(Instant::now());
        }
        let a = agent(&repo);
        if listed.is_none() && a["state"] == "waiting" && a["reason"] == "permission" {
            listed = Some(Instant::now());
        }
        if asked.elapsed() > Duration::from_secs(90) {
            fail(&format!(
                "no permission question (on screen: {on_screen:?}, listed: {listed:?})"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let (on_screen, listed) = (on_screen.unwrap(), listed.unwrap());
    let lag = listed.saturating_duration_since(on_screen);
    eprintln!(
        "permission listed {lag:?} after the question showed (listed first: {})",
        listed < on_screen
    );
    if lag > Duration::from_secs(1) {
        fail(&format!(
            "permission listed {lag:?} after the question showed"
        ));
    }
    let shown = agent(&repo);
    eprintln!("recorded by {}", shown["event"]);
    assert!(
        ["PermissionRequest", "Notification"].contains(&shown["event"].as_str().unwrap_or("")),
        "{shown:#}"
    );
    assert!(
        !alpha.join("made-by-agent").exists(),
        "the tool ran before it was approved"
    );

    // Nothing but the answer moves it.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(agent(&repo)["reason"], "permission", "{}", tmux.pane());

    // Answered: the approved tool runs, then `sleep 3`: working.
    tmux.keys(&["Enter"], false);
    let answered = Instant::now();
    while agent(&repo)["state"] != "working" {
        if answered.elapsed() > Duration::from_secs(30) {
            fail("not working after the answer");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("working {:?} after the answer", answered.elapsed());
    assert!(
        alpha.join("made-by-agent").exists(),
        "the approved tool ran"
    );
    // The turn's end: waiting for input.
    loop {
        let a = agent(&repo);
        if a["state"] == "waiting" && a["reason"] == "input" {
            assert_eq!(a["event"], "Stop", "{a:#}");
            break;
        }
        if answered.elapsed() > Duration::from_secs(60) {
            fail("not waiting for input after the turn");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(server.turns_left(), 0, "{}", server.dump());
    assert_no_escape(&server);
}

// Codex's TUI under tmux, asked by the model to run `touch` outside its sandbox
// (`require_escalated`, with `approval_policy = "on-request"`):
// permission (its PermissionRequest) within a second of the question on its screen; approved
// with `y`: working while the model takes its time over the next answer; then waiting.
#[test]
fn codex_approval_under_tmux_then_working_then_waiting() {
    let Some(bin) = agent_bin(CODEX) else { return };
    if !common::installed("tmux") {
        eprintln!("!!!! SKIPPED: tmux is not installed (Codex is driven under tmux) !!!!");
        return;
    }
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
                json!({"cmd": "touch made-by-agent", "login": false,
                       "sandbox_permissions": "require_escalated",
                       "justification": "make the file"}),
            ),
            mock::slow(mock::text(31_000, "Made it."), Duration::from_secs(3)),
        ],
        codex_main,
    );
    let home = codex_home(&repo, &server, &[&repo.root, &alpha]);
    codex_trust_hooks(&repo, &bin, &home, &alpha);
    let config = home.join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replace(
            "approval_policy = \"never\"",
            "approval_policy = \"on-request\"",
        )
        .replace(
            "sandbox_mode = \"danger-full-access\"",
            "sandbox_mode = \"workspace-write\"",
        )
        // Interactive only: its offer of a newer model, answered once as a person would.
            + "[notice.model_migrations]\n\"gpt-5.5\" = \"gpt-6-sol\"\n",
    )
    .unwrap();
    let url = server.url();
    let mut script = String::from("env");
    for (k, v) in [
        ("CODEX_HOME", home.display().to_string()),
        ("MOCK_API_KEY", "test-key".to_string()),
        ("OPENAI_API_KEY", "test-key".to_string()),
        ("HTTP_PROXY", url.clone()),
        ("HTTPS_PROXY", url.clone()),
        ("http_proxy", url.clone()),
        ("https_proxy", url.clone()),
        ("NO_PROXY", "127.0.0.1,localhost".to_string()),
        ("no_proxy", "127.0.0.1,localhost".to_string()),
        ("GIT_SESSION_HOOK_BUDGET", "9s".to_string()),
    ] {
        script.push_str(&format!(" {k}='{v}'"));
    }
    script.push_str(&format!(
        " '{}' 'Make the file.'; echo exited $?; sleep 600",
        bin.display()
    ));
    let tmux = Tmux::start(&repo.home, &alpha, 150, 45, &script);
    let fail = |what: &str| -> ! {
        panic!(
            "{what}\nscreen:\n{}\nagent: {:#}\nmock:\n{}\naudit: {}",
            tmux.pane(),
            agent(&repo),
            server.dump(),
            std::fs::read_to_string(repo.store().join("audit.log")).unwrap_or_default()
        )
    };
    let asked = Instant::now();
    let (mut on_screen, mut listed) = (None, None);
    while on_screen.is_none() || listed.is_none() {
        if on_screen.is_none() && tmux.pane().contains("run the following command") {
            on_screen = Some(Instant::now());
        }
        let a = agent(&repo);
        if listed.is_none() && a["state"] == "waiting" && a["reason"] == "permission" {
            listed = Some(Instant::now());
        }
        if asked.elapsed() > Duration::from_secs(90) {
            fail(&format!(
                "no approval question (on screen: {on_screen:?}, listed: {listed:?})"
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let (on_screen, listed) = (on_screen.unwrap(), listed.unwrap());
    let lag = listed.saturating_duration_since(on_screen);
    let shown = agent(&repo);
    eprintln!(
        "permission listed {lag:?} after the question showed (listed first: {}), by {}",
        listed < on_screen,
        shown["event"]
    );
    if lag > Duration::from_secs(1) {
        fail(&format!(
            "permission listed {lag:?} after the question showed"
        ));
    }
    assert_eq!(shown["event"], "PermissionRequest", "{shown:#}");
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(agent(&repo)["reason"], "permission", "{}", tmux.pane());
    assert!(
        !alpha.join("made-by-agent").exists(),
        "the command ran before it was approved"
    );

    tmux.keys(&["y"], true);
    let answered = Instant::now();
    while agent(&repo)["state"] != "working" {
        if answered.elapsed() > Duration::from_secs(30) {
            fail("not working after the approval");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("working {:?} after the approval", answered.elapsed());
    assert!(
        alpha.join("made-by-agent").exists(),
        "the approved command ran"
    );
    loop {
        let a = agent(&repo);
        if a["state"] == "waiting" && a["reason"] == "input" {
            assert_eq!(a["event"], "Stop", "{a:#}");
            break;
        }
        if answered.elapsed() > Duration::from_secs(60) {
            fail("not waiting for input after the turn");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(server.turns_left(), 0, "{}", server.dump());
    // The TUI fetches a tip from GitHub once per start (`announcement_tip.toml`), with no
    // switch to stop it (`[tui] show_tooltips = false` does not); it came to the mock, which
    // refused it. Anything else that tried to leave fails the test.
    let escapes: Vec<_> = server
        .log()
        .into_iter()
        .filter(|l| l.escape && l.path != "raw.githubusercontent.com:443")
        .collect();
    assert!(
        escapes.is_empty(),
        "requests that left loopback: {escapes:?}"
    );
}
