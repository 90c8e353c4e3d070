//! Claude Code, end to end against our mock model server (the harness and the pinned version
//! are in `context_real`): one `claude -p` run through its compaction, with its window given on
//! the command line, in its environment and in its settings; the compaction point learned for
//! the next agent session; a 1M model; Claude Code's own worktree made a session.

use crate::common::{self, TestRepo};
use crate::context_real::{
    agent_bin, assert_alerts_before_compaction, assert_no_escape, diagnosis, first_with,
    once_more_if_it_fails, run_agent, status_of_session, CLAUDE,
};
use crate::context_support::mock::{self, Mock};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Claude Code's compaction request: a side call asking for a summary.
fn claude_compaction(l: &mock::Logged) -> bool {
    l.turn.is_none() && l.text().contains("summary")
}

/// Claude Code's main calls offer tools and are not its compaction request.
fn claude_main(path: &str, body: &Value) -> bool {
    if !path.ends_with("/v1/messages") {
        return false;
    }
    let tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .map(|m| m.to_string())
        .unwrap_or_default();
    tools && !last.contains("summary of the conversation") && !last.contains("detailed summary")
}

fn claude_env(mock: &Mock) -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_BASE_URL", mock.url()),
        ("ANTHROPIC_API_KEY", "sk-ant-test-key".to_string()),
        ("IS_SANDBOX", "1".to_string()),
        ("CLAUDE_CODE_ENABLE_TELEMETRY", "0".to_string()),
    ]
}

/// A repository with the hooks installed and committed, a session `alpha` for the agent and a
/// session `beta` that owns README.md.
fn claude_repo() -> (TestRepo, PathBuf) {
    let repo = TestRepo::new();
    repo.run(["context", "install"]).ok();
    repo.git(["add", ".claude/settings.json"]);
    repo.git(["commit", "-qm", "agent hooks"]);
    let alpha = repo.create("alpha");
    let beta = repo.create("beta");
    repo.run_in(&beta, ["claim", "README.md"]).ok();
    (repo, alpha)
}

// Claude Code, one `claude -p` run: the identity reaches the model; a Write of a path another
// session owns is denied before it happens, the model reads the owner; the 70/90/95 alerts
// reach the model before Claude Code's own compaction request; the compaction is counted once
// and its point learned for the next agent session.
#[test]
fn claude_code_end_to_end() {
    let Some(bin) = agent_bin(CLAUDE) else { return };
    // Claude Code writes its compaction record after its hooks have run, and the point is
    // learned at the first hook call that can read it; on a loaded machine that call can come
    // too early for this scenario's short second session. Once more with a fresh repository
    // before it counts as a failure (what failed the first time is printed).
    if let Err(first) = learned_point_reaches_a_second_session(&bin) {
        eprintln!("!!!! first attempt: {first}; trying once more !!!!");
        learned_point_reaches_a_second_session(&bin).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// The compaction with the budget on the command line, then a second agent session without
/// the flag, whose alert must measure against the point learned from the first.
fn learned_point_reaches_a_second_session(bin: &Path) -> Result<(), String> {
    let bin = bin.to_path_buf();
    let (repo, alpha, learned) = claude_compacts(&bin, Source::CommandLine);
    // A second agent session without the flag measures against the learned point.
    let second = Mock::start(
        vec![
            mock::tool(
                learned * 72 / 100,
                "Bash",
                json!({"command": "echo again", "description": "check"}),
            ),
            mock::text(learned * 73 / 100, "Done."),
        ],
        claude_main,
    );
    let run = run_agent(
        &repo,
        &second,
        &bin,
        &alpha,
        &[
            "-p",
            "Go on.",
            "--model",
            "claude-sonnet-4-5-20250929",
            "--dangerously-skip-permissions",
        ],
        &claude_env(&second),
        120,
    );
    assert_eq!(run.code, 0, "{run:?}\n{}", second.dump());
    assert_no_escape(&second);
    let want = format!("of {} tokens", thousands(learned));
    if !second
        .log()
        .iter()
        .any(|l| l.text().contains("Context awareness") && l.text().contains(&want))
    {
        let status = status_of_session(&repo, &alpha);
        // The judgement last: a CI log keeps the end of a long failure.
        return Err(format!(
            "{}\nno alert {want} in the second agent session\n{}\nstatus: {status}",
            second.dump(),
            diagnosis(&repo, &second),
        ));
    }
    Ok(())
}

// The same compaction with the budget given in Claude Code's environment, then in its settings.
#[test]
fn claude_code_budget_from_env_and_settings() {
    let Some(bin) = agent_bin(CLAUDE) else { return };
    once_more_if_it_fails(|| {
        claude_compacts(&bin, Source::Env);
    });
    once_more_if_it_fails(|| {
        claude_compacts(&bin, Source::Settings);
    });
}

/// Where the scenario gives Claude Code its compaction window (150,000).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Source {
    CommandLine,
    Env,
    Settings,
}

/// One `claude -p` run through its compaction, its window 150,000 given by `source`; returns
/// the repository, the session's worktree and the compaction point learned.
fn claude_compacts(bin: &Path, source: Source) -> (TestRepo, PathBuf, u64) {
    let (repo, alpha) = claude_repo();
    let owned = alpha.join("README.md");
    let bash = |c: &str| json!({"command": c, "description": "check"});
    // A window of 150,000: Claude Code compacts at 117,000 (150,000 less its reserve).
    let turns = vec![
        mock::tool(20_000, "Bash", bash("echo one")),
        mock::tool(30_000, "Read", json!({"file_path": owned})),
        mock::tool(
            40_000,
            "Write",
            json!({"file_path": owned, "content": "mine\n"}),
        ),
        mock::tool(85_000, "Bash", bash("echo two")),
        mock::tool(106_000, "Bash", bash("echo three")),
        mock::tool(112_000, "Bash", bash("echo four")),
        mock::tool(125_000, "Bash", bash("echo five")),
        mock::tool(21_000, "Bash", bash("echo six")),
        mock::text(22_000, "All done."),
    ];
    let server = Mock::start(turns, claude_main);
    let mut args = vec![
        "-p",
        "Do the task.",
        "--model",
        "claude-sonnet-4-5-20250929",
        "--dangerously-skip-permissions",
        "--output-format",
        "json",
    ];
    let mut env = claude_env(&server);
    let expected_source = match source {
        Source::CommandLine => {
            args.extend(["--autocompact", "150000"]);
            "--autocompact (claude command line"
        }
        Source::Env => {
            env.push(("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "150000".to_string()));
            "CLAUDE_CODE_AUTO_COMPACT_WINDOW"
        }
        Source::Settings => {
            common::write_in(
                &alpha,
                ".claude/settings.local.json",
                r#"{"autoCompactWindow": 150000}"#,
            );
            "autoCompactWindow"
        }
    };
    let run = run_agent(&repo, &server, bin, &alpha, &args, &env, 240);
    let log = server.log();
    // The judgement last: a CI log keeps the end of a long failure.
    let dump = format!("{}\n{}", server.dump(), diagnosis(&repo, &server));
    if let Some(to) = std::env::var_os("GIT_SESSION_KEEP_HOME") {
        let _ = Command::new("cp")
            .arg("-a")
            .arg(&repo.home)
            .arg(to)
            .status();
    }
    assert_eq!(run.code, 0, "{run:?}\n{dump}");
    assert_no_escape(&server);
    assert_eq!(server.turns_left(), 0, "{dump}");
    // The identity, from SessionStart, in the first call.
    assert!(log[0].text().contains("session/alpha"), "{dump}");
    // The Write of beta's file is denied before it runs; the next call carries the reason.
    let after_write = log.iter().find(|l| l.turn == Some(3)).unwrap();
    let last = after_write.body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap();
    assert!(
        last.to_string().contains("beta"),
        "the deny reason names the owner: {last}"
    );
    assert_eq!(std::fs::read_to_string(&owned).unwrap(), "hello\n");
    // Each alert before the compaction request.
    assert_alerts_before_compaction(&log, claude_compaction, &dump);
    let agent = status_of_session(&repo, &alpha);
    assert_eq!(agent["compactions"], json!(1), "{agent}");
    assert!(
        agent["budget_source"]
            .as_str()
            .unwrap()
            .starts_with(expected_source),
        "{source:?}: {agent}"
    );
    // The compaction point Claude Code recorded (`preTokens`), learned after its hooks ran.
    let models: toml::Table = std::fs::read_to_string(repo.store().join("context-models.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let learned = models["models"]["claude-sonnet-4-5-20250929"]["pre_tokens"]
        .as_integer()
        .unwrap() as u64;
    assert!(
        (117_000..=130_000).contains(&learned),
        "learned {learned}: {models}"
    );
    eprintln!("claude code ({source:?}) compacted at preTokens {learned}, after every alert");
    (repo, alpha, learned)
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

// Claude Code's own worktree (`--worktree`) is made by our WorktreeCreate hook as a session,
// and the agent's commit there outlives the run: `claude -p` (2.1.328) ends without calling
// WorktreeRemove, so the kept-worktree answer is covered by tests/it/worktree_hook.rs. A
// transcript that does not exist yet at the first UserPromptSubmit writes no failure.
#[test]
fn claude_code_worktree_is_a_session() {
    let Some(bin) = agent_bin(CLAUDE) else { return };
    let repo = TestRepo::new();
    repo.run(["context", "install"]).ok();
    repo.git(["add", ".claude/settings.json"]);
    repo.git(["commit", "-qm", "agent hooks"]);
    let bash = |c: &str| json!({"command": c, "description": "work"});
    let turns = vec![
        mock::tool(
            20_000,
            "Bash",
            bash("echo work > work.txt && git add work.txt && git commit -qm work"),
        ),
        mock::text(21_000, "Committed."),
    ];
    let server = Mock::start(turns, claude_main);
    let run = run_agent(
        &repo,
        &server,
        &bin,
        &repo.root,
        &[
            "-p",
            "Do the task.",
            "--model",
            "claude-sonnet-4-5-20250929",
            "--dangerously-skip-permissions",
            "--worktree",
            "kept-one",
        ],
        &claude_env(&server),
        120,
    );
    // The judgement last: a CI log keeps the end of a long failure.
    let dump = format!("{}\n{}", server.dump(), diagnosis(&repo, &server));
    assert_eq!(run.code, 0, "{run:?}\n{dump}");
    assert_no_escape(&server);
    assert_eq!(repo.labels(), ["kept-one"], "{run:?}");
    let info = repo.run(["info", "kept-one", "--json"]).ok().json();
    let path = PathBuf::from(info["path"].as_str().unwrap());
    assert!(path.join("work.txt").is_file(), "{info}");
    assert!(
        server.log()[0].text().contains("session/kept-one"),
        "identity: {dump}"
    );
    let audit = std::fs::read_to_string(repo.store().join("audit.log")).unwrap_or_default();
    assert!(!audit.contains("context-hook-failed"), "{audit}");
}

// A 1M model (Claude Code's native 1M Opus 4.7): the alerts are shares of 967,000 and all
// arrive before Claude Code's compaction request.
#[test]
fn claude_code_one_million_model() {
    let Some(bin) = agent_bin(CLAUDE) else { return };
    once_more_if_it_fails(|| one_million(&bin));
}

fn one_million(bin: &Path) {
    let (repo, alpha) = claude_repo();
    let bash = |c: &str| json!({"command": c, "description": "check"});
    let turns = vec![
        mock::tool(20_000, "Bash", bash("echo one")),
        mock::tool(700_000, "Bash", bash("echo two")),
        mock::tool(880_000, "Bash", bash("echo three")),
        mock::tool(930_000, "Bash", bash("echo four")),
        mock::tool(985_000, "Bash", bash("echo five")),
        mock::tool(21_000, "Bash", bash("echo six")),
        mock::text(22_000, "All done."),
    ];
    let server = Mock::start(turns, claude_main);
    let run = run_agent(
        &repo,
        &server,
        bin,
        &alpha,
        &[
            "-p",
            "Do the task.",
            "--model",
            "claude-opus-4-7",
            "--dangerously-skip-permissions",
        ],
        &claude_env(&server),
        240,
    );
    let log = server.log();
    // The judgement last: a CI log keeps the end of a long failure.
    let dump = format!("{}\n{}", server.dump(), diagnosis(&repo, &server));
    assert_eq!(run.code, 0, "{run:?}\n{dump}");
    assert_no_escape(&server);
    assert_alerts_before_compaction(&log, claude_compaction, &dump);
    assert!(first_with(&log, "of 967,000 tokens").is_some(), "{dump}");
    let agent = status_of_session(&repo, &alpha);
    assert_eq!(agent["compactions"], json!(1), "{agent}");
}

// An agent of a session stays in its own worktree (issue 29): real Claude Code's Write into
// the main worktree and into another session's worktree is denied before it happens; the model
// reads in the next request where its own worktree is; nothing is written.
#[test]
fn claude_code_stays_in_its_worktree() {
    let Some(bin) = agent_bin(CLAUDE) else { return };
    let (repo, alpha) = claude_repo();
    let beta = PathBuf::from(
        repo.run(["info", "beta", "--json"]).ok().json()["path"]
            .as_str()
            .unwrap(),
    );
    let into_main = repo.root.join("escaped.txt");
    let into_beta = beta.join("escaped.txt");
    let write = |p: &Path| json!({"file_path": p.display().to_string(), "content": "x\n"});
    let turns = vec![
        mock::tool(20_000, "Write", write(&into_main)),
        mock::tool(21_000, "Write", write(&into_beta)),
        mock::text(22_000, "Done."),
    ];
    let server = Mock::start(turns, claude_main);
    let run = run_agent(
        &repo,
        &server,
        &bin,
        &alpha,
        &[
            "-p",
            "Do the task.",
            "--model",
            "claude-sonnet-4-5-20250929",
            "--dangerously-skip-permissions",
        ],
        &claude_env(&server),
        120,
    );
    // The judgement last: a CI log keeps the end of a long failure.
    let dump = format!("{}\n{}", server.dump(), diagnosis(&repo, &server));
    assert_eq!(run.code, 0, "{run:?}\n{dump}");
    assert_no_escape(&server);
    assert!(!into_main.exists() && !into_beta.exists(), "{dump}");
    let log = server.log();
    let main: Vec<_> = log.iter().filter(|l| l.turn.is_some()).collect();
    let own = format!("whose worktree is {}", alpha.display());
    for (i, target) in [(1, &into_main), (2, &into_beta)] {
        let text = main[i].text();
        assert!(
            text.contains(&own) && text.contains(&target.display().to_string()),
            "request {i} carries the refusal of {}: {dump}",
            target.display()
        );
    }
}

// A Claude Code session that belongs to session alpha (GIT_SESSION, as `create -- claude`
// gives it) but starts in the main worktree is told so in the first request its model
// receives, with the way to its own worktree.
#[test]
fn claude_code_started_outside_its_worktree_is_told_at_once() {
    let Some(bin) = agent_bin(CLAUDE) else { return };
    let (repo, alpha) = claude_repo();
    let server = Mock::start(vec![mock::text(20_000, "Noted.")], claude_main);
    let mut env = claude_env(&server);
    env.push(("GIT_SESSION", "alpha".to_string()));
    let run = run_agent(
        &repo,
        &server,
        &bin,
        &repo.root,
        &[
            "-p",
            "Do the task.",
            "--model",
            "claude-sonnet-4-5-20250929",
            "--dangerously-skip-permissions",
        ],
        &env,
        120,
    );
    let dump = format!("{}\n{}", server.dump(), diagnosis(&repo, &server));
    assert_eq!(run.code, 0, "{run:?}\n{dump}");
    assert_no_escape(&server);
    let log = server.log();
    let first = log.iter().find(|l| l.turn.is_some()).expect("a request");
    let text = first.text();
    assert!(
        text.contains(&format!(
            "runs in {}, outside that worktree",
            repo.root.display()
        )) && text.contains(&format!("`cd {}`", alpha.display())),
        "{dump}"
    );
}
