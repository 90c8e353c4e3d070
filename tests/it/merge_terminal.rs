//! A batch of merges on a terminal (issue 31), under tmux: one progress line per session while
//! it runs, gone before the summary; an unapproved check list of the repository is asked for
//! once in the whole batch, and a "no" skips every session without asking again. Skipped loudly
//! where tmux is missing. (Through a pipe the batch prints its summary alone: merge_batch's
//! snapshots.)

use crate::common::tmux::Tmux;
use crate::common::{self, write_in, TestRepo};
use std::path::Path;
use std::time::{Duration, Instant};

/// `sessions` sessions, each committing a file of its own, in creation order.
fn sessions(repo: &TestRepo, labels: &[&str]) {
    for label in labels {
        let wt = repo.create(label);
        repo.commit_file(
            &wt,
            &format!("{label}.txt"),
            "x\n",
            &format!("{label}: work"),
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `git-session merge --all` in a tmux window 100 columns wide; its exit code goes to
/// `out/code`.
fn batch_in_tmux(repo: &TestRepo, out: &Path) -> Tmux {
    let script = format!(
        "git-session merge --all; echo $? > {o}/code; sleep 60",
        o = out.display()
    );
    Tmux::start(&repo.home, &repo.root, 100, 30, &script)
}

fn code(tmux: &Tmux, out: &Path) -> String {
    let started = Instant::now();
    while !out.join("code").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the batch did not end:\n{}",
            tmux.pane()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    std::fs::read_to_string(out.join("code"))
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn a_batch_on_a_terminal_shows_a_line_per_session_then_its_summary_alone() {
    if !common::installed("tmux") {
        eprintln!(
            "!!!! SKIPPED: tmux is not installed (the batch's progress is driven under tmux) !!!!"
        );
        return;
    }
    let repo = TestRepo::new();
    // Each check waits for its own go, so the screen can be read while one session runs.
    let gate = repo.home.join("gate");
    std::fs::create_dir_all(&gate).unwrap();
    crate::merge_check::user_config(
        &repo,
        &format!(
            "[merge]\ncheck = [\"while ! test -e {g}/$GIT_SESSION_MERGE_CHECK; do sleep 0.1; done\"]\n",
            g = gate.display()
        ),
    );
    sessions(&repo, &["a", "b", "c"]);
    let out = repo.home.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let tmux = batch_in_tmux(&repo, &out);
    tmux.until("a runs", "merging a (1 of 3)");
    write_in(&gate, "a", "");
    let pane = tmux.until("b runs", "merging b (2 of 3)");
    assert!(pane.contains("merged  a"), "a's line stays, done:\n{pane}");
    assert!(!pane.contains("merging a"), "{pane}");
    write_in(&gate, "b", "");
    let pane = tmux.until("c runs", "merging c (3 of 3)");
    assert!(
        pane.contains("merged  a") && pane.contains("merged  b"),
        "{pane}"
    );
    write_in(&gate, "c", "");
    assert_eq!(code(&tmux, &out), "0", "{}", tmux.pane());
    let pane = tmux.pane();
    // The lines are gone; the summary is as it is through a pipe, one line per session.
    assert!(!pane.contains("merging "), "{pane}");
    for label in ["a", "b", "c"] {
        assert_eq!(
            pane.matches(&format!("merged  {label}: 1 commit")).count()
                + pane
                    .matches(&format!("merged  {label}: fast-forward"))
                    .count(),
            1,
            "{pane}"
        );
    }
    assert!(repo.labels().is_empty());
}

#[test]
fn an_unapproved_check_list_is_asked_for_once_per_batch() {
    if !common::installed("tmux") {
        eprintln!(
            "!!!! SKIPPED: tmux is not installed (the approval prompt is driven under tmux) !!!!"
        );
        return;
    }
    let repo = TestRepo::new();
    repo.commit_file(
        &repo.root.clone(),
        ".git-session.toml",
        "[merge]\ncheck = [\"true\"]\n",
        "team config",
    );
    sessions(&repo, &["a", "b", "c"]);
    let tips: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|l| repo.git(["rev-parse", &format!("session/{l}")]))
        .collect();
    let main = repo.git(["rev-parse", "main"]);
    let out = repo.home.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let tmux = batch_in_tmux(&repo, &out);
    tmux.until("the prompt", "Run these checks now and on future merges?");
    let sent = tmux
        .cmd()
        .args(["send-keys", "-t", "w", "n"])
        .output()
        .unwrap();
    assert!(sent.status.success(), "{sent:?}");
    assert_eq!(code(&tmux, &out), "1", "{}", tmux.pane());
    let pane = tmux.pane();
    assert_eq!(
        pane.matches("Run these checks now and on future merges?")
            .count(),
        1,
        "asked once:\n{pane}"
    );
    for label in ["a", "b", "c"] {
        assert!(
            pane.contains(&format!("skipped {label}: the [merge] check commands")),
            "{pane}"
        );
    }
    // Nothing moved; nothing was approved.
    assert_eq!(repo.git(["rev-parse", "main"]), main);
    let now: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|l| repo.git(["rev-parse", &format!("session/{l}")]))
        .collect();
    assert_eq!(now, tips);
    assert!(!repo.store().join("approved-check.toml").exists());
}
