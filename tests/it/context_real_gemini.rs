//! Gemini CLI, end to end against our mock model server (the harness and the pinned version are
//! in `context_real`).

use crate::common::TestRepo;
use crate::context_real::{agent_bin, assert_no_escape, diagnosis, run_agent, GEMINI};
use crate::context_support::mock::{self, Mock};
use serde_json::{json, Value};

/// Gemini CLI's main calls offer its tools.
fn gemini_main(path: &str, body: &Value) -> bool {
    (path.contains(":generateContent") || path.contains(":streamGenerateContent"))
        && body["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t.get("functionDeclarations").is_some()))
}

/// Gemini CLI's user settings: API-key auth, telemetry, usage statistics and updates off.
fn gemini_home(repo: &TestRepo) {
    let dir = repo.home.join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"},
                     "folderTrust": {"enabled": false}},
        "telemetry": {"enabled": false, "logPrompts": false},
        "privacy": {"usageStatisticsEnabled": false},
        "general": {"disableAutoUpdate": true, "disableUpdateNag": true,
                    "enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "ide": {"enabled": false},
        "model": {"name": "gemini-2.5-pro"}
    });
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

// Gemini CLI, one `gemini -p` run: the identity reaches the model; write_file of a path another
// session owns is denied with the owner in the next request; the awareness alert reaches the
// model at 72 % of its compression point (half of 1,048,576).
#[test]
fn gemini_cli_end_to_end() {
    let Some(bin) = agent_bin(GEMINI) else { return };
    let repo = TestRepo::new();
    repo.run(["context", "install", "--gemini"]).ok();
    repo.git(["add", ".gemini/settings.json"]);
    repo.git(["commit", "-qm", "agent hooks"]);
    let alpha = repo.create("alpha");
    let beta = repo.create("beta");
    repo.run_in(&beta, ["claim", "README.md"]).ok();
    gemini_home(&repo);
    let owned = alpha.join("README.md");
    let turns = vec![
        mock::tool(
            100_000,
            "run_shell_command",
            json!({"command": "echo one", "description": "check"}),
        ),
        mock::tool(
            120_000,
            "write_file",
            json!({"file_path": owned, "content": "mine\n"}),
        ),
        mock::tool(
            380_000,
            "run_shell_command",
            json!({"command": "echo two", "description": "check"}),
        ),
        mock::tool(
            475_000,
            "run_shell_command",
            json!({"command": "echo three", "description": "check"}),
        ),
        mock::tool(
            500_000,
            "run_shell_command",
            json!({"command": "echo four", "description": "check"}),
        ),
        mock::tool(
            530_000,
            "run_shell_command",
            json!({"command": "echo five", "description": "check"}),
        ),
        mock::tool(
            60_000,
            "run_shell_command",
            json!({"command": "echo six", "description": "check"}),
        ),
        mock::text(61_000, "All done."),
    ];
    let server = Mock::start(turns, gemini_main);
    let env = vec![
        ("GEMINI_API_KEY", "test-key".to_string()),
        ("GOOGLE_GEMINI_BASE_URL", server.url()),
        ("GEMINI_CLI_NO_RELAUNCH", "true".to_string()),
        ("NO_BROWSER", "true".to_string()),
    ];
    let run = run_agent(
        &repo,
        &server,
        &bin,
        &alpha,
        &["-p", "Do the task.", "--yolo", "-m", "gemini-2.5-pro"],
        &env,
        180,
    );
    let log = server.log();
    // The judgement last: a CI log keeps the end of a long failure.
    let dump = format!("{}\n{}", server.dump(), diagnosis(&repo, &server));
    assert_eq!(run.code, 0, "{run:?}\n{dump}");
    assert_no_escape(&server);
    assert_eq!(server.turns_left(), 0, "{dump}");
    let main: Vec<_> = log.iter().filter(|l| l.turn.is_some()).collect();
    assert!(main[0].text().contains("session/alpha"), "identity: {dump}");
    assert!(
        main[2].text().contains("beta"),
        "the deny reason names the owner: {dump}"
    );
    assert_eq!(std::fs::read_to_string(&owned).unwrap(), "hello\n");
    // Each alert in the request right after the call that crossed its threshold (shares of
    // 524,288). Gemini CLI 0.61.0 did not compress in `-p` even at 530,000: no compression
    // request reaches the server, so that order is not checked here.
    let first = |needle: &str| main.iter().position(|l| l.text().contains(needle));
    assert_eq!(first("Context awareness"), Some(3), "{dump}");
    assert_eq!(first("HANDOFF MODE"), Some(4), "{dump}");
    assert_eq!(first("EMERGENCY"), Some(5), "{dump}");
}
