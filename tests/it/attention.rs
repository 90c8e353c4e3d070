//! What each agent does, as `list` and `info` show it (issue 32): the real hook binary fed the
//! agents' events, the real `list`/`info` reading the store, time pinned with GIT_SESSION_NOW so
//! that quiet and waiting times are exact, and processes that really end for `gone`.

use crate::common::{self, Run, TestRepo};
use crate::context_support::hook;
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

const T0: &str = "2026-01-01T10:00:00Z";

/// T0 plus `secs` seconds, as RFC 3339.
pub(crate) fn at(secs: i64) -> String {
    let t0 = chrono::DateTime::parse_from_rfc3339(T0).unwrap();
    (t0 + chrono::Duration::seconds(secs))
        .with_timezone(&chrono::Utc)
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// `git session ARGS` in `dir`, "now" being T0 plus `secs`.
pub(crate) fn run_at(repo: &TestRepo, dir: &Path, secs: i64, args: &[&str]) -> Run {
    let mut cmd = repo.cmd_in(dir);
    cmd.args(args).env("GIT_SESSION_NOW", at(secs));
    common::to_run(cmd.output().unwrap()).ok()
}

pub(crate) fn payload(agent: &str, cwd: &Path, event: &str, extra: Value) -> Value {
    let mut v = json!({"session_id": agent, "cwd": cwd, "hook_event_name": event});
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

/// One event of `agent` at T0 + `secs`, sent by this test process (which stays alive).
pub(crate) fn send(repo: &TestRepo, agent: &str, cwd: &Path, secs: i64, event: &str, extra: Value) {
    let run = hook(
        repo,
        &payload(agent, cwd, event, extra),
        &[("GIT_SESSION_NOW", &at(secs))],
    );
    assert_eq!(
        run.stdout.trim().is_empty(),
        event != "SessionStart",
        "{run:?}"
    );
}

/// `list --json`'s `agent` object of `label` at T0 + `secs`.
fn agent_of(repo: &TestRepo, label: &str, secs: i64) -> Value {
    let list = run_at(repo, &repo.root, secs, &["list", "--json"]).json();
    list.as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == label)
        .unwrap_or_else(|| panic!("{label} in {list:#}"))["agent"]
        .clone()
}

/// The AGENT cell of `label` in a piped `list` at T0 + `secs`.
fn cell_of(repo: &TestRepo, label: &str, secs: i64) -> String {
    let out = run_at(repo, &repo.root, secs, &["list"]).stdout;
    let header = out.lines().next().unwrap();
    let (start, end) = (header.find("AGENT").unwrap(), header.find("STATE").unwrap());
    let line = out
        .lines()
        .find(|l| l.starts_with(&format!("{label} ")))
        .unwrap_or_else(|| panic!("{label} in {out}"));
    line[start..end].trim().to_string()
}

#[test]
fn each_event_moves_what_list_and_info_show_and_every_state_has_a_way_out() {
    let repo = TestRepo::new();
    let wt = repo.create("alpha");
    let a = "0b1c2d3e-aaaa-2222-3333-444455556666";
    assert_eq!(agent_of(&repo, "alpha", 0), Value::Null);
    assert_eq!(cell_of(&repo, "alpha", 0), "-");

    send(
        &repo,
        a,
        &wt,
        0,
        "SessionStart",
        json!({"source": "startup"}),
    );
    let v = agent_of(&repo, "alpha", 5);
    assert_eq!(
        (&v["state"], &v["reason"]),
        (&json!("waiting"), &json!("input")),
        "{v:#}"
    );
    assert_eq!(v["agent_session"], a);
    assert_eq!(
        v["pid"].as_u64().map(|p| p as u32),
        Some(std::process::id()),
        "{v:#}"
    );

    send(
        &repo,
        a,
        &wt,
        10,
        "UserPromptSubmit",
        json!({"prompt": "go"}),
    );
    assert_eq!(agent_of(&repo, "alpha", 11)["state"], "working");
    assert_eq!(cell_of(&repo, "alpha", 11), "working");

    send(
        &repo,
        a,
        &wt,
        20,
        "PermissionRequest",
        json!({"tool_name": "Bash",
        "tool_input": {"command": "rm -rf build"}}),
    );
    let v = agent_of(&repo, "alpha", 20 + 12 * 60);
    assert_eq!(
        (&v["state"], &v["reason"]),
        (&json!("waiting"), &json!("permission")),
        "{v:#}"
    );
    assert_eq!(v["since"], at(20));
    assert_eq!(cell_of(&repo, "alpha", 20 + 12 * 60), "permission 12m");

    // Answered: the tool ran.
    let tool = json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {}});
    send(&repo, a, &wt, 13 * 60, "PostToolUse", tool.clone());
    assert_eq!(agent_of(&repo, "alpha", 13 * 60 + 1)["state"], "working");
    // No event for longer than the bound: quiet, since the last event; the next one ends it.
    assert_eq!(agent_of(&repo, "alpha", 18 * 60)["state"], "working");
    let v = agent_of(&repo, "alpha", 19 * 60 + 1);
    assert_eq!(
        (&v["state"], &v["since"]),
        (&json!("quiet"), &json!(at(13 * 60))),
        "{v:#}"
    );
    assert_eq!(cell_of(&repo, "alpha", 19 * 60 + 1), "quiet 6m");
    send(&repo, a, &wt, 20 * 60, "PostToolUse", tool);
    assert_eq!(agent_of(&repo, "alpha", 20 * 60 + 1)["state"], "working");

    send(
        &repo,
        a,
        &wt,
        21 * 60,
        "Stop",
        json!({"stop_hook_active": false}),
    );
    // Claude Code's idle notification a minute later is the same wait.
    send(
        &repo,
        a,
        &wt,
        22 * 60,
        "Notification",
        json!({"notification_type": "idle_prompt",
        "message": "Claude is waiting for your input"}),
    );
    assert_eq!(cell_of(&repo, "alpha", 33 * 60), "waiting 12m");
    let info = run_at(&repo, &repo.root, 33 * 60, &["info", "alpha", "--json"]).json();
    assert_eq!(info["agent"]["state"], "waiting");
    assert_eq!(
        info["agent_states"].as_array().unwrap().len(),
        1,
        "{info:#}"
    );
    let text = run_at(&repo, &repo.root, 33 * 60, &["info", "alpha"]).stdout;
    assert!(
        text.contains(&format!(
            "  {a} waiting: input since 12m ago (last event 11m ago, pid "
        )),
        "{text}"
    );

    send(
        &repo,
        a,
        &wt,
        34 * 60,
        "SessionEnd",
        json!({"reason": "prompt_input_exit"}),
    );
    assert_eq!(agent_of(&repo, "alpha", 34 * 60 + 1)["state"], "ended");
    assert_eq!(cell_of(&repo, "alpha", 3 * 3600), "ended 2h");
    // Resumed: a new SessionStart.
    send(
        &repo,
        a,
        &wt,
        4 * 3600,
        "SessionStart",
        json!({"source": "resume"}),
    );
    assert_eq!(agent_of(&repo, "alpha", 4 * 3600 + 1)["state"], "waiting");
}

/// Sends one event through `timeout`, which runs the hook as its child and ends with it: the
/// "agent" is a process that is gone once the event is recorded.
pub(crate) fn send_through_dying_parent(
    repo: &TestRepo,
    agent: &str,
    cwd: &Path,
    event: &str,
    env: &[(&str, &str)],
) {
    let mut cmd = Command::new("timeout");
    common::hermetic(&mut cmd, &repo.home);
    cmd.current_dir(cwd)
        .args(["60", "git-session", "context", "hook"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let body = payload(agent, cwd, event, json!({"source": "startup"})).to_string();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn an_agent_whose_process_ended_without_an_end_event_is_gone_until_it_comes_back() {
    if !common::installed("timeout") {
        eprintln!("!!!! SKIPPED: no `timeout` (coreutils) to stand in for an agent that ends !!!!");
        return;
    }
    let repo = TestRepo::new();
    let wt = repo.create("crashed");
    let a = "agent-that-crashed";
    send_through_dying_parent(&repo, a, &wt, "SessionStart", &[]);
    send_through_dying_parent(&repo, a, &wt, "UserPromptSubmit", &[]);
    let list = repo.run(["list", "--json"]).ok().json();
    assert_eq!(list[0]["agent"]["state"], "gone", "{list:#}");
    // Back, in a process that runs (this test's): its SessionStart records it.
    let run = hook(
        &repo,
        &payload(a, &wt, "SessionStart", json!({"source": "resume"})),
        &[],
    );
    assert_eq!(run.code, 0);
    let list = repo.run(["list", "--json"]).ok().json();
    assert_eq!(list[0]["agent"]["state"], "waiting", "{list:#}");

    // Where the platform cannot say which ancestor is the agent, none is recorded, and a
    // missing fact never makes an agent gone.
    let b = "agent-unjudged";
    let wt2 = repo.create("unjudged");
    let facts = [("GIT_SESSION_PROCESS_FACTS", "existence-only")];
    send_through_dying_parent(&repo, b, &wt2, "SessionStart", &facts);
    let list = repo.run(["list", "--json"]).ok().json();
    let row = list
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == "unjudged")
        .unwrap();
    assert_eq!(row["agent"]["state"], "waiting", "{row:#}");
    assert_eq!(row["agent"]["pid"], Value::Null, "{row:#}");
}

#[test]
fn sort_attention_puts_who_needs_you_first() {
    let repo = TestRepo::new();
    let mut dirs = Vec::new();
    for label in ["a-works", "b-waits", "c-asks", "d-alone", "e-waits-longer"] {
        dirs.push(repo.create(label));
    }
    let prompt = json!({"prompt": "go"});
    send(&repo, "A", &dirs[0], 0, "UserPromptSubmit", prompt.clone());
    send(&repo, "B", &dirs[1], 0, "UserPromptSubmit", prompt.clone());
    send(&repo, "B", &dirs[1], 100, "Stop", json!({}));
    send(&repo, "C", &dirs[2], 0, "UserPromptSubmit", prompt.clone());
    send(
        &repo,
        "C",
        &dirs[2],
        200,
        "PermissionRequest",
        json!({"tool_name": "Bash"}),
    );
    send(&repo, "E", &dirs[4], 0, "UserPromptSubmit", prompt);
    send(&repo, "E", &dirs[4], 50, "Stop", json!({}));
    let order = |args: &[&str]| -> Vec<String> {
        let list = run_at(&repo, &repo.root, 300, args).json();
        list.as_array()
            .unwrap()
            .iter()
            .map(|s| s["label"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        order(&["list", "--json"]),
        ["a-works", "b-waits", "c-asks", "d-alone", "e-waits-longer"]
    );
    assert_eq!(
        order(&["list", "--json", "--sort", "attention"]),
        ["c-asks", "e-waits-longer", "b-waits", "a-works", "d-alone"]
    );
    let text = run_at(&repo, &repo.root, 300, &["list", "--sort", "attention"]).stdout;
    let labels: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(
        labels,
        ["c-asks", "e-waits-longer", "b-waits", "a-works", "d-alone"]
    );
    let bad = repo.run(["list", "--sort", "age"]).fails(2);
    assert!(bad.stderr.contains("attention"), "{bad:?}");
}

// `[list] sort = "attention"` makes that the order without `--sort`, from the repository's file
// or the user's (which wins); `--sort label` still overrides; a bad value is refused, naming the
// file, the key and what is allowed.
#[test]
fn list_sort_default_from_configuration_and_sort_overrides_it() {
    let repo = TestRepo::new();
    let a = repo.create("a-works");
    let b = repo.create("b-asks");
    for (agent, dir) in [("A", &a), ("B", &b)] {
        send(
            &repo,
            agent,
            dir,
            0,
            "SessionStart",
            json!({"source": "startup"}),
        );
        send(
            &repo,
            agent,
            dir,
            1,
            "UserPromptSubmit",
            json!({"prompt": "go"}),
        );
    }
    send(
        &repo,
        "B",
        &b,
        2,
        "PermissionRequest",
        json!({"tool_name": "Bash"}),
    );
    let order = |args: &[&str]| -> Vec<String> {
        let list = run_at(&repo, &repo.root, 60, args).json();
        list.as_array()
            .unwrap()
            .iter()
            .map(|s| s["label"].as_str().unwrap().to_string())
            .collect()
    };
    let by_label = ["a-works", "b-asks"];
    let by_attention = ["b-asks", "a-works"];
    assert_eq!(order(&["list", "--json"]), by_label);
    repo.write(".git-session.toml", "[list]\nsort = \"attention\"\n");
    assert_eq!(order(&["list", "--json"]), by_attention);
    assert_eq!(order(&["list", "--json", "--sort", "label"]), by_label);
    let text = run_at(&repo, &repo.root, 60, &["list"]).stdout;
    let first = text.lines().nth(1).unwrap_or_default();
    assert!(first.starts_with("b-asks "), "{text}");
    // The user's own file wins over the repository's.
    let user = repo.home.join(".config/git-session");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(user.join("config.toml"), "[list]\nsort = \"label\"\n").unwrap();
    assert_eq!(order(&["list", "--json"]), by_label);
    assert_eq!(
        order(&["list", "--json", "--sort", "attention"]),
        by_attention
    );
    std::fs::remove_file(user.join("config.toml")).unwrap();
    repo.write(".git-session.toml", "[list]\nsort = \"age\"\n");
    let bad = repo.run(["list"]).fails(1);
    assert!(
        bad.stderr.contains(".git-session.toml")
            && bad.stderr.contains("list.sort")
            && bad.stderr.contains("\"attention\""),
        "{bad:?}"
    );
    assert_eq!(bad.stderr.trim_end().lines().count(), 2, "{bad:?}");
}

/// The lines `[notify]`'s command wrote, once `want` of them are there (it is not waited for).
fn notified(path: &Path, want: usize, secs: u64) -> Vec<String> {
    let started = std::time::Instant::now();
    loop {
        let lines: Vec<String> = std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        if lines.len() >= want || started.elapsed() > std::time::Duration::from_secs(secs) {
            return lines;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

// `[notify] command` runs once each time an agent starts waiting, with the label, the reason
// and the worktree as arguments and environment; the agent's text never reaches a shell; a
// repository's own file cannot set it.
#[test]
fn notify_runs_once_per_wait_with_label_reason_and_worktree() {
    let repo = TestRepo::new();
    let wt = repo.create("alpha");
    let out = repo.home.join("notified");
    let pwned = repo.home.join("pwned");
    let config = repo.home.join(".config/git-session/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let command = format!(
        "printf '%s|%s|%s|%s\\n' \"$1\" \"$2\" \"$3\" \"$GIT_SESSION_NOTIFY_REASON\" >> '{}'",
        out.display()
    );
    std::fs::write(
        &config,
        format!("[notify]\ncommand = {}\n", toml_string(&command)),
    )
    .unwrap();
    let a = "agent-n";
    let wts = wt.display().to_string();
    send(
        &repo,
        a,
        &wt,
        0,
        "UserPromptSubmit",
        json!({"prompt": "go"}),
    );
    send(&repo, a, &wt, 10, "Stop", json!({}));
    assert_eq!(notified(&out, 1, 10), [format!("alpha|input|{wts}|input")]);
    // Still the same wait: nothing more.
    let sneaky = format!(
        "$(touch '{}') needs your permission `touch '{}'`",
        pwned.display(),
        pwned.display()
    );
    send(
        &repo,
        a,
        &wt,
        70,
        "Notification",
        json!({"notification_type": "idle_prompt", "message": sneaky}),
    );
    send(
        &repo,
        a,
        &wt,
        80,
        "UserPromptSubmit",
        json!({"prompt": "go on"}),
    );
    send(
        &repo,
        a,
        &wt,
        90,
        "PermissionRequest",
        json!({"tool_name": "Bash",
        "tool_input": {"command": format!("touch '{}'", pwned.display())}}),
    );
    send(
        &repo,
        a,
        &wt,
        95,
        "Notification",
        json!({"notification_type": "permission_prompt", "message": sneaky}),
    );
    let lines = notified(&out, 2, 10);
    assert_eq!(
        lines,
        [
            format!("alpha|input|{wts}|input"),
            format!("alpha|permission|{wts}|permission")
        ]
    );
    assert_eq!(notified(&out, 3, 1).len(), 2, "once per wait");
    assert!(!pwned.exists(), "the agent's text reached a shell");

    // Set in the repository's file: refused, naming the key and where it belongs.
    std::fs::remove_file(&config).unwrap();
    common::write_in(
        &repo.root,
        ".git-session.toml",
        "[notify]\ncommand = \"true\"\n",
    );
    let refused = repo.run(["list"]);
    assert_ne!(refused.code, 0, "{refused:?}");
    assert!(refused.stderr.contains("notify.command"), "{refused:?}");
    assert!(
        refused
            .stderr
            .contains("only in your own configuration file"),
        "{refused:?}"
    );
}

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}
