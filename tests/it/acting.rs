//! One rule for who is acting, seen through all three doors: the CLI (`info` without a label),
//! the pre-commit guard (its refusal says as whom you commit), and the context hook (the
//! identity SessionStart hands the agent). In every situation they name the same session.

use crate::common;
use crate::context_support::{context_of, hook};
use common::TestRepo;
use serde_json::json;
use std::path::Path;

/// What the CLI takes as acting in `dir` with `env`: the label `info` reports, or names as
/// missing; `None` when it finds no session here.
fn cli(repo: &TestRepo, dir: &Path, env: &[(&str, &str)]) -> Option<String> {
    let mut cmd = repo.cmd_in(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = common::to_run(cmd.args(["info", "--json"]).output().unwrap());
    if out.code == 0 {
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        return Some(v["label"].as_str().unwrap().to_string());
    }
    if let Some(rest) = out.stderr.strip_prefix("error: no session named \"") {
        return Some(rest.split('"').next().unwrap().to_string());
    }
    assert!(
        out.stderr.starts_with("error: no session here"),
        "{}",
        out.stderr
    );
    None
}

/// As whom the guard judges a commit made in `dir`: it refuses `owned.txt` (owned by the
/// session "owner", which is never the one acting here), or a session's commit in a worktree
/// not its own, and says who is committing.
fn guard(repo: &TestRepo, dir: &Path, env: &[(&str, &str)]) -> Option<String> {
    let top = std::path::PathBuf::from(repo.git_in(dir, ["rev-parse", "--show-toplevel"]).trim());
    std::fs::write(top.join("owned.txt"), format!("{}\n", dir.display())).unwrap();
    repo.git_in(&top, ["add", "owned.txt"]);
    let mut cmd = repo.cmd_in(dir);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = common::to_run(cmd.args(["guard", "pre-commit"]).output().unwrap());
    repo.git_in(&top, ["reset", "-q", "--", "owned.txt"]);
    std::fs::remove_file(top.join("owned.txt")).unwrap();
    assert_eq!(out.code, 1, "the guard must refuse owned.txt: {out:?}");
    if let Some(rest) = out.stderr.split("you are committing as session \"").nth(1) {
        return Some(rest.split('"').next().unwrap().to_string());
    }
    // A session named by GIT_SESSION in a worktree not its own is refused for that first.
    if let Some(rest) = out.stderr.strip_prefix("error: commit refused: session \"") {
        let (label, rest) = rest.split_once('"').unwrap();
        assert!(
            rest.starts_with(" (GIT_SESSION) commits in"),
            "{}",
            out.stderr
        );
        return Some(label.to_string());
    }
    assert!(
        out.stderr.contains("no session is acting here"),
        "{}",
        out.stderr
    );
    None
}

/// The session the hook tells an agent starting in `dir` it works in.
/// Each call is a new agent session, so no earlier link is remembered.
fn hook_says(repo: &TestRepo, dir: &Path, env: &[(&str, &str)]) -> Option<String> {
    static AGENTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let id = AGENTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let payload = json!({"session_id": format!("agent-{id}"), "transcript_path": "/nonexistent.jsonl",
        "cwd": dir.display().to_string(), "hook_event_name": "SessionStart", "source": "startup"});
    let text = context_of(&hook(repo, &payload, env))?;
    let rest = text.split("works in the git session \"").nth(1)?;
    Some(rest.split('"').next().unwrap().to_string())
}

/// What the situation is, where, with which environment, and who must be acting.
type Case<'a> = (&'a str, &'a Path, &'a [(&'a str, &'a str)], Option<&'a str>);

#[test]
fn cli_guard_and_hook_agree_on_who_is_acting() {
    let repo = TestRepo::new();
    let owner = repo.create("owner");
    let a = repo.create("a");
    repo.create("b");
    // `owned.txt` belongs to "owner" in every worktree.
    repo.run_in(&owner, ["claim", "owned.txt"]).ok();
    std::fs::create_dir_all(a.join("deep/er")).unwrap();
    // A plain git worktree inside session a's directory: its own worktree, no session.
    let inner = a.join("inner");
    repo.git_in(
        &a,
        ["worktree", "add", "-q", "--detach", inner.to_str().unwrap()],
    );

    let cases: &[Case] = &[
        ("main worktree", &repo.root, &[], None),
        ("a's worktree", &a, &[], Some("a")),
        ("deep inside a", &a.join("deep/er"), &[], Some("a")),
        (
            "a's worktree, GIT_SESSION=b",
            &a,
            &[("GIT_SESSION", "b")],
            Some("b"),
        ),
        (
            "main, GIT_SESSION=a",
            &repo.root,
            &[("GIT_SESSION", "a")],
            Some("a"),
        ),
        ("a plain worktree nested in a", &inner, &[], None),
    ];
    for (what, dir, env, expect) in cases {
        let expect = expect.map(str::to_string);
        assert_eq!(cli(&repo, dir, env), expect, "CLI, {what}");
        assert_eq!(guard(&repo, dir, env), expect, "guard, {what}");
        assert_eq!(hook_says(&repo, dir, env), expect, "hook, {what}");
    }
    // GIT_SESSION naming no session: the CLI and the guard both act as that name (which owns
    // nothing); the hook has no session to link the agent to, so it names none.
    let ghost: &[(&str, &str)] = &[("GIT_SESSION", "ghost")];
    assert_eq!(cli(&repo, &a, ghost).as_deref(), Some("ghost"));
    assert_eq!(guard(&repo, &a, ghost).as_deref(), Some("ghost"));
    assert_eq!(hook_says(&repo, &a, ghost), None);
}
