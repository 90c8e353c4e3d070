//! `list --watch` under tmux (issue 32): it redraws when an agent's state changes, without a
//! key press, and `q` and Ctrl-C end it with exit 0 and the terminal's settings as they were.
//! Skipped loudly where tmux is missing.

use crate::common::tmux::Tmux;
use crate::common::{self, TestRepo};
use crate::context_support::hook;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// Starts `list --watch` in a tmux window 120 columns wide; the shell around it writes the
/// terminal's settings before and after, and the exit code, into `out` (its trap keeps it alive
/// through the Ctrl-C meant for the watch, which gets the default handling).
fn watch(repo: &TestRepo, out: &Path) -> Tmux {
    let script = format!(
        "trap true INT; stty -g > {o}/before; git-session list --watch; echo $? > {o}/code; stty -g > {o}/after; sleep 30",
        o = out.display()
    );
    Tmux::start(&repo.home, &repo.root, 120, 20, &script)
}

fn ended(tmux: &Tmux, out: &Path) -> (String, String, String) {
    let started = Instant::now();
    while !out.join("after").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "list --watch did not end:\n{}\nfiles: {:?}\nsessions: {:?}",
            tmux.pane(),
            std::fs::read_dir(out)
                .unwrap()
                .flatten()
                .map(|e| e.file_name())
                .collect::<Vec<_>>(),
            tmux.cmd().arg("ls").output()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(100));
    let read = |n: &str| {
        std::fs::read_to_string(out.join(n))
            .unwrap()
            .trim()
            .to_string()
    };
    (read("code"), read("before"), read("after"))
}

#[test]
fn list_watch_redraws_on_an_agent_event_and_ends_on_q_and_ctrl_c() {
    if !common::installed("tmux") {
        eprintln!("!!!! SKIPPED: tmux is not installed (list --watch is driven under tmux) !!!!");
        return;
    }
    let repo = TestRepo::new();
    let wt = repo.create("alpha");
    let send = |event: &str| {
        let p = json!({"session_id": "agent-1", "cwd": wt, "hook_event_name": event,
                       "tool_name": "Bash", "tool_input": {"command": "ls"}});
        hook(&repo, &p, &[]);
    };
    send("UserPromptSubmit");
    for (key, how) in [("q", "q"), ("C-c", "Ctrl-C")] {
        let out = repo.home.join(format!("run-{how}"));
        std::fs::create_dir_all(&out).unwrap();
        let tmux = watch(&repo, &out);
        tmux.until(how, "working");
        send("Stop");
        let pane = tmux.until(how, "waiting");
        assert!(pane.contains("(q or Ctrl-C ends)"), "{pane}");
        // Redrawn in place: one header on the screen, not one per drawing.
        assert_eq!(pane.matches("LABEL").count(), 1, "{pane}");
        send("UserPromptSubmit");
        tmux.until(how, "working");
        let sent = tmux
            .cmd()
            .args(["send-keys", "-t", "w", key])
            .output()
            .unwrap();
        assert!(sent.status.success(), "{sent:?}");
        let (code, before, after) = ended(&tmux, &out);
        assert_eq!(code, "0", "{how}: {}", tmux.pane());
        assert_eq!(before, after, "{how}: the terminal's settings came back");
    }
}

// Piped: each changed list once, plainly (no escapes), ended by SIGTERM with exit 0.
#[test]
fn list_watch_piped_prints_each_change_plainly() {
    use std::io::{BufRead, BufReader};
    let repo = TestRepo::new();
    let wt = repo.create("alpha");
    let send = |event: &str| {
        let p = json!({"session_id": "agent-1", "cwd": wt, "hook_event_name": event});
        hook(&repo, &p, &[]);
    };
    send("UserPromptSubmit");
    let mut child = repo
        .cmd_in(&repo.root)
        .args(["list", "--watch"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let mut wait_for = |needle: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            if let Ok(line) = rx.recv_timeout(Duration::from_millis(100)) {
                let found = line.contains(needle);
                seen.push(line);
                if found {
                    return;
                }
            }
        }
        panic!("no {needle:?} in {seen:#?}");
    };
    wait_for("working");
    send("Stop");
    wait_for("waiting");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let text = seen.join("\n");
    assert!(!text.contains('\u{1b}'), "escapes in a pipe: {text:?}");
    assert_eq!(
        text.matches("LABEL").count(),
        2,
        "one list per change: {text}"
    );
}
