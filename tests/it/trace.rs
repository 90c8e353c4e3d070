//! `GIT_SESSION_TRACE=1` (issue 33): the guard's and the context hook's decisions, a line each
//! on stderr; unset, not a byte more (every other test pins stderr without it).

use crate::common::{guarded, write_in, TestRepo};

fn traced(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with("git-session trace: "))
        .collect()
}

fn commit(repo: &TestRepo, dir: &std::path::Path, trace: Option<&str>) -> crate::common::Run {
    let mut cmd = repo.git_cmd(dir);
    cmd.args(["commit", "-q", "-m", "change"]);
    if let Some(value) = trace {
        cmd.env("GIT_SESSION_TRACE", value);
    }
    crate::common::to_run(cmd.output().unwrap())
}

#[test]
fn the_guard_traces_who_commits_each_owned_path_and_its_verdict() {
    let repo = guarded();
    let a = repo.create("A");
    let b = repo.create("B");
    repo.commit_file(&a, "f.txt", "A\n", "A f");
    write_in(&b, "f.txt", "B\n");
    write_in(&b, "g.txt", "B\n");
    repo.git_in(&b, ["add", "f.txt", "g.txt"]);
    let refused = commit(&repo, &b, Some("1"));
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    let lines = traced(&refused.stderr);
    insta::assert_snapshot!("guard_refusal", lines.join("\n"));

    // The same commit without f.txt passes, and says what it claimed.
    repo.git_in(&b, ["reset", "-q", "f.txt"]);
    let passed = commit(&repo, &b, Some("1"));
    assert_eq!(passed.code, 0, "{}", passed.stderr);
    insta::assert_snapshot!("guard_pass", traced(&passed.stderr).join("\n"));
}

#[test]
fn unset_or_zero_traces_nothing() {
    let repo = guarded();
    let a = repo.create("A");
    for value in [None, Some("0"), Some("")] {
        write_in(&a, "f.txt", &format!("{value:?}\n"));
        repo.git_in(&a, ["add", "f.txt"]);
        let out = commit(&repo, &a, value);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(out.stderr, "", "{value:?}");
    }
}

/// The hook traces the event, the measurement against the compaction point, and its answer,
/// on stderr only: what the agent reads on stdout is the same byte for byte.
#[test]
fn the_hook_traces_its_measurement_and_answer_and_answers_the_same() {
    use crate::context_support::{file_tool, hook, post_tool_use, transcript};
    let repo = guarded();
    let a = repo.create("A");
    let b = repo.create("B");
    repo.run_in(&b, ["claim", "owned.txt"]).ok();
    let answers = |trace: &[(&str, &str)], agent: &str| {
        let t = transcript(&repo.base(), agent, 150_000);
        let tool = hook(&repo, &post_tool_use(agent, &a, &t), trace);
        let deny = hook(
            &repo,
            &file_tool("PreToolUse", agent, &a, "Write", &a.join("owned.txt")),
            trace,
        );
        (tool, deny)
    };
    let (tool, deny) = answers(&[("GIT_SESSION_TRACE", "1")], "traced");
    let (plain_tool, plain_deny) = answers(&[], "plain");
    assert_eq!(tool.stdout, plain_tool.stdout.replace("plain", "traced"));
    assert_eq!(deny.stdout, plain_deny.stdout);
    assert_eq!(plain_tool.stderr, "");
    assert_eq!(plain_deny.stderr, "");
    let lines = [traced(&tool.stderr), traced(&deny.stderr)].concat();
    insta::assert_snapshot!("hook", lines.join("\n"));
}
