//! The statusline a session shows its agent (`context status --short`) counts the OTHER
//! sessions whose agent waits for the person (issue 32): a permission or input, as `list`
//! shows them; its own session never; nothing said when none waits. Real hook binary, real
//! store, time pinned with GIT_SESSION_NOW.

use crate::attention::{at, send, send_through_dying_parent};
use crate::common::{self, TestRepo};
use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::process::Stdio;

/// `context status --stdin --short` in `dir` for agent `agent` at T0 + `secs`, as Claude Code
/// runs its statusline (its payload on stdin, its numbers in it).
fn statusline(repo: &TestRepo, dir: &Path, agent: &str, secs: i64) -> String {
    let payload = json!({"session_id": agent, "cwd": dir,
        "context_window": {"context_window_size": 200_000, "used_percentage": 25.0,
            "current_usage": {"input_tokens": 10_000, "output_tokens": 10,
                "cache_creation_input_tokens": 0, "cache_read_input_tokens": 40_000}}});
    let mut cmd = repo.cmd_in(dir);
    cmd.args(["context", "status", "--stdin", "--short"])
        .env("GIT_SESSION_NOW", at(secs))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    let run = common::to_run(child.wait_with_output().unwrap());
    assert_eq!(run.code, 0, "{run:?}");
    run.stdout.trim_end().to_string()
}

#[test]
fn statusline_counts_other_sessions_that_wait_and_says_nothing_when_none_does() {
    let repo = TestRepo::new();
    let labels = ["alpha", "b-asks", "c-waits", "d-works", "e-ended", "f-gone"];
    let dirs: Vec<_> = labels.iter().map(|l| repo.create(l)).collect();
    let prompt = json!({"prompt": "go"});
    for (i, agent) in ["A", "B", "C", "D", "E"].iter().enumerate() {
        send(
            &repo,
            agent,
            &dirs[i],
            0,
            "SessionStart",
            json!({"source": "startup"}),
        );
        send(
            &repo,
            agent,
            &dirs[i],
            1,
            "UserPromptSubmit",
            prompt.clone(),
        );
    }
    // Nobody waits: the plain statusline, not a word more.
    let plain = statusline(&repo, &dirs[0], "A", 10);
    assert!(!plain.contains("waiting"), "{plain}");

    // Its own session waiting counts for nothing; a permission and an input elsewhere do; a
    // session that works, one whose agent ended and one whose agent is gone (its process ended
    // while it waited) do not.
    send(&repo, "A", &dirs[0], 20, "Stop", json!({}));
    send(
        &repo,
        "B",
        &dirs[1],
        20,
        "PermissionRequest",
        json!({"tool_name": "Bash"}),
    );
    send(&repo, "C", &dirs[2], 20, "Stop", json!({}));
    send(
        &repo,
        "E",
        &dirs[4],
        20,
        "SessionEnd",
        json!({"reason": "exit"}),
    );
    if common::installed("timeout") {
        send_through_dying_parent(&repo, "F", &dirs[5], "SessionStart", &[]);
        let list = repo.run(["list", "--json"]).ok().json();
        let f = list
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["label"] == "f-gone");
        assert_eq!(f.unwrap()["agent"]["state"], "gone", "{list:#}");
    } else {
        eprintln!("!!!! no `timeout` (coreutils): the gone agent is not part of this run !!!!");
    }
    let line = statusline(&repo, &dirs[0], "A", 30);
    assert_eq!(line, format!("{plain} \u{b7} 2 waiting"));
    insta::assert_snapshot!("statusline_short_two_waiting", line);
    // Seen from a session that waits itself, the other two: its own wait is its own screen.
    let from_c = statusline(&repo, &dirs[2], "C", 30);
    assert!(from_c.ends_with(" \u{b7} 2 waiting"), "{from_c}");

    // The permission answered (the tool's end says working): one left; that one's next prompt:
    // none, and the line is the plain one again.
    send(
        &repo,
        "B",
        &dirs[1],
        40,
        "PostToolUse",
        json!({"tool_name": "Bash"}),
    );
    assert_eq!(
        statusline(&repo, &dirs[0], "A", 50),
        format!("{plain} \u{b7} 1 waiting")
    );
    send(&repo, "C", &dirs[2], 60, "UserPromptSubmit", prompt);
    assert_eq!(statusline(&repo, &dirs[0], "A", 70), plain);
}
