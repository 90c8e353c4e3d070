//! `list` on a terminal fits its width; piped or `--wide` it is whole. Driven through a real
//! pseudo-terminal (util-linux `script`), skipped loudly where that is missing.

use crate::common;

use common::{hermetic, TestRepo};
use std::process::Command;

/// Runs `git session ARGS` on a pty `cols` wide; its output, or `None` without `script`.
fn on_terminal(repo: &TestRepo, cols: u16, args: &str) -> Option<String> {
    if !common::installed("script") {
        return None;
    }
    let mut cmd = Command::new("script");
    hermetic(&mut cmd, &repo.home);
    cmd.current_dir(&repo.root).args([
        "-qec",
        &format!("stty rows 40 cols {cols}; git session {args}"),
        "/dev/null",
    ]);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let shown = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    // On a terminal the table is coloured; what fits is what the terminal shows.
    assert!(
        shown.contains("\u{1b}["),
        "no colour on a terminal: {shown:?}"
    );
    Some(common::strip_colour(&shown))
}

#[test]
fn list_fits_80_columns_on_a_terminal_and_is_whole_when_piped() {
    let repo = TestRepo::new();
    // Set up as a user would: with the guard, so no warning says it is missing.
    repo.run(["hooks", "install"]).ok();
    let long = "a-label-that-is-rather-long-for-a-list-of-sessions";
    for label in [long, "short"] {
        repo.run(["create", label]).ok();
    }
    let piped = repo.run(["list"]).ok().stdout;
    assert!(piped.lines().any(|l| l.chars().count() > 80), "{piped}");
    assert!(piped.contains(&repo.sessions_dir().join(long).display().to_string()));
    let Some(fitted) = on_terminal(&repo, 80, "list") else {
        return;
    };
    for line in fitted.lines() {
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line:?}",
            line.chars().count()
        );
    }
    assert!(
        fitted.contains(long) && fitted.contains("short"),
        "{fitted}"
    );
    // Said once, after the table: which columns were left out, and how to see them all.
    let said: Vec<&str> = fitted
        .lines()
        .filter(|l| l.starts_with("left out "))
        .collect();
    assert_eq!(said.len(), 1, "{fitted}");
    assert!(said[0].ends_with("; list --wide shows all"), "{fitted}");
    assert!(fitted.trim_end().ends_with(said[0]), "{fitted}");
    assert!(fitted.contains("/short\n"), "{fitted}");
    let absolute = repo.base().display().to_string();
    assert!(
        !fitted.contains(&absolute),
        "paths relative to the repo: {fitted}"
    );
    // With room, a path is shown from the main worktree.
    repo.run(["cleanup", long]).ok();
    let roomy = on_terminal(&repo, 80, "list").unwrap();
    assert!(roomy.contains("../repo.sessions/short\n"), "{roomy}");
    let wide = on_terminal(&repo, 80, "list --wide").unwrap();
    assert!(wide.lines().any(|l| l.chars().count() > 80), "{wide}");
    assert!(!wide.contains("left out"), "{wide}");
}

#[test]
fn a_session_without_commits_is_new_and_a_merged_one_says_so() {
    let repo = TestRepo::new();
    let path = std::path::PathBuf::from(repo.run(["create", "s"]).ok().stdout.trim());
    let row = |repo: &TestRepo| {
        repo.run(["list"])
            .ok()
            .stdout
            .lines()
            .nth(1)
            .unwrap()
            .to_string()
    };
    assert!(row(&repo).contains(" new "), "{}", row(&repo));
    assert!(!row(&repo).contains("ancestor"), "{}", row(&repo));
    common::write_in(&path, "f.txt", "x\n");
    repo.git_in(&path, ["add", "f.txt"]);
    repo.git_in(&path, ["commit", "-qm", "work"]);
    assert!(row(&repo).contains(" 1 "), "{}", row(&repo));
    repo.git(["merge", "-q", "--no-ff", "-m", "merge", "session/s"]);
    assert!(row(&repo).contains("0 (ancestor)"), "{}", row(&repo));
}
