//! GitHub Copilot CLI, end to end against our mock model server (the harness and the pinned
//! version are in `context_real`): one `copilot -p` run with a bring-your-own-key provider at
//! the mock (OpenAI Responses) and `COPILOT_OFFLINE=true`, so it needs no GitHub account and
//! contacts nothing else; its hooks from the committed `.github/hooks/git-session.json`.

use crate::common::TestRepo;
use crate::context_real::{agent_bin, assert_no_escape, diagnosis, run_agent, COPILOT};
use crate::context_support::mock::{self, Mock};
use serde_json::{json, Value};
use std::path::Path;

/// Copilot CLI's main calls offer its tools.
fn copilot_main(path: &str, body: &Value) -> bool {
    path.ends_with("/responses") && body["tools"].as_array().is_some_and(|t| !t.is_empty())
}

/// Copilot CLI's state: the session's worktree trusted (its repository hooks run in `-p` only
/// in a trusted folder), nothing else.
fn copilot_home(repo: &TestRepo, trusted: &Path) {
    let dir = repo.home.join(".copilot");
    std::fs::create_dir_all(&dir).unwrap();
    let config = json!({"trustedFolders": [trusted]});
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
}

// One `copilot -p` run: the identity reaches the model; `create` of a free path (its parent
// must exist: Copilot refuses to make directories) is claimed for
// the session; `edit` of a path another session owns is refused, the owner named in the next
// request, and the file is untouched.
#[test]
fn copilot_cli_end_to_end() {
    let Some(bin) = agent_bin(COPILOT) else {
        return;
    };
    let repo = TestRepo::new();
    repo.run(["context", "install", "--agent", "copilot"]).ok();
    repo.git(["add", ".github/hooks/git-session.json"]);
    repo.git(["commit", "-qm", "agent hooks"]);
    let alpha = repo.create("alpha");
    let beta = repo.create("beta");
    repo.run_in(&beta, ["claim", "README.md"]).ok();
    copilot_home(&repo, &alpha);
    let owned = alpha.join("README.md");
    let before = std::fs::read_to_string(&owned).unwrap();
    let turns = vec![
        mock::tool(
            40_000,
            "create",
            json!({"path": alpha.join("free.rs"), "file_text": "fn free() {}\n"}),
        ),
        mock::tool(
            12_000,
            "edit",
            json!({"path": owned, "old_str": before.trim_end(), "new_str": "mine"}),
        ),
        mock::text(13_000, "All done."),
    ];
    let server = Mock::start(turns, copilot_main);
    // The CLI unpacks itself into its cache on first run: one cache beside the install.
    let cache = bin.parent().unwrap().join("../../copilot-cache");
    let env = vec![
        ("COPILOT_OFFLINE", "true".to_string()),
        ("COPILOT_PROVIDER_BASE_URL", format!("{}/v1", server.url())),
        ("COPILOT_PROVIDER_TYPE", "openai".to_string()),
        ("COPILOT_PROVIDER_WIRE_API", "responses".to_string()),
        ("COPILOT_PROVIDER_API_KEY", "test-key".to_string()),
        ("COPILOT_MODEL", "gpt-4.1".to_string()),
        ("COPILOT_AUTO_UPDATE", "false".to_string()),
        ("COPILOT_CACHE_HOME", cache.display().to_string()),
    ];
    let run = run_agent(
        &repo,
        &server,
        &bin,
        &alpha,
        &["-p", "Do the task.", "--allow-all-tools"],
        &env,
        180,
    );
    let log = server.log();
    // Copilot's own records of each model call (what the hook measures), for a failure's dump.
    let records: Vec<String> = std::fs::read_dir(repo.home.join(".copilot/session-state"))
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|d| std::fs::read_to_string(d.path().join("events.jsonl")).ok())
        .flat_map(|t| {
            t.lines()
                .filter(|l| l.contains("session.usage_record"))
                .map(|l| {
                    let at = l.find("inputTokens").unwrap_or(0);
                    l[at..].chars().take(40).collect::<String>()
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let dump = format!(
        "{}\n{}\nCopilot's usage records: {records:?}\ncontext status: {}",
        server.dump(),
        diagnosis(&repo, &server),
        crate::context_real::status_of_session(&repo, &alpha),
    );
    assert_eq!(run.code, 0, "{run:?}\n{dump}");
    assert_no_escape(&server);
    assert_eq!(server.turns_left(), 0, "{dump}");
    let main: Vec<_> = log.iter().filter(|l| l.turn.is_some()).collect();
    assert!(main[0].text().contains("session/alpha"), "identity: {dump}");
    // 40,000 of 51,200 (80 % of the 64,000 its usage record gives gpt-4.1 here): the first
    // alert, with the result of the call that crossed it.
    assert!(
        main[1].text().contains("Context awareness") && main[1].text().contains("51,200"),
        "the alert: {dump}"
    );
    let refused = "is owned by the live session";
    assert!(!main[1].text().contains(refused), "{dump}");
    assert!(
        main[2].text().contains(refused) && main[2].text().contains("beta"),
        "the refusal names the owner: {dump}"
    );
    assert_eq!(std::fs::read_to_string(&owned).unwrap(), before);
    let info = repo.run(["info", "alpha", "--json"]).ok().json();
    let claimed: Vec<&str> = info["claims"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    let results: Vec<String> = log
        .iter()
        .map(|l| {
            let t = l.text();
            let at = t.find("function_call_output").unwrap_or(0);
            t[at..].chars().take(400).collect()
        })
        .collect();
    assert_eq!(claimed, ["free.rs"], "{results:?}\n{dump}");
    // Its agentStop and sessionEnd reached the hook: the run ended, and `list` says so.
    let list = repo.run(["list", "--json"]).ok().json();
    let alpha_agent = list
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == "alpha")
        .map(|s| s["agent"].clone());
    assert_eq!(
        alpha_agent.as_ref().map(|a| a["state"].clone()),
        Some(json!("ended")),
        "{list:#}\n{dump}"
    );
}
