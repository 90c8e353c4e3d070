//! Warnings earn their line: what holds for the main worktree and every session alike (a
//! submodule never initialised) is no per-session warning, and on a terminal every warning and
//! hint fits its width (wrapped, the continuation under the text), piped it stays one line.

use crate::common;
use common::{hermetic, TestRepo};
use std::process::Command;

/// A committed `.gitmodules` naming `lib`, with a gitlink for it, and `lib` not initialised.
fn with_uninitialised_submodule() -> TestRepo {
    let repo = TestRepo::new();
    repo.run(["hooks", "install"]).ok();
    repo.write(
        ".gitmodules",
        "[submodule \"lib\"]\n\tpath = lib\n\turl = ../lib\n",
    );
    let head = repo.git(["rev-parse", "HEAD"]);
    repo.git([
        "update-index",
        "--add",
        "--cacheinfo",
        &format!("160000,{},lib", head.trim()),
    ]);
    repo.git(["add", ".gitmodules"]);
    repo.git(["commit", "-q", "-m", "a submodule, never initialised"]);
    repo
}

#[test]
fn a_submodule_uninitialised_in_main_too_is_no_per_session_warning() {
    let repo = with_uninitialised_submodule();
    repo.create("one");
    repo.create("two");
    let list = repo.run(["list"]).ok();
    assert_eq!(list.stderr, "", "list warns: {}", list.stderr);
    let json = repo.run(["info", "one", "--json"]).ok().json();
    assert_eq!(json["warnings"], serde_json::json!([]), "{json}");
    let info = repo.run(["info", "one"]).ok();
    assert!(!info.stdout.contains("submodule"), "{}", info.stdout);
    // Initialised in main and not in a session: that is about the session, and said.
    std::fs::create_dir_all(repo.root.join("lib")).unwrap();
    std::fs::write(repo.root.join("lib/.git"), "gitdir: ../.git/modules/lib\n").unwrap();
    let list = repo.run(["list"]).ok();
    assert_eq!(
        list.stderr,
        "warning: session \"one\": submodule lib not initialized\n\
         warning: session \"two\": submodule lib not initialized\n"
    );
    let info = repo.run(["info", "two"]).ok();
    assert!(
        info.stdout
            .contains("warning   submodule lib not initialized"),
        "{}",
        info.stdout
    );
}

/// stderr of `git session ARGS` on a pty `cols` wide (stdout discarded), or `None` without
/// `script`.
fn stderr_on_terminal(repo: &TestRepo, cols: u16, args: &str) -> Option<String> {
    if !common::installed("script") {
        return None;
    }
    let mut cmd = Command::new("script");
    hermetic(&mut cmd, &repo.home);
    cmd.current_dir(&repo.root).env("NO_COLOR", "1").args([
        "-qec",
        &format!("stty rows 40 cols {cols}; git session {args} >/dev/null"),
        "/dev/null",
    ]);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    Some(String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n"))
}

#[test]
fn warnings_fit_an_80_column_terminal_and_stay_one_line_when_piped() {
    // No guard installed: the warning that it is not in force is the long one.
    let repo = TestRepo::new();
    repo.run(["create", "fix-login"]).ok();
    let piped = repo.run(["list"]).ok().stderr;
    assert!(
        piped.lines().any(|l| l.chars().count() > 80),
        "nothing to wrap: {piped}"
    );
    let Some(shown) = stderr_on_terminal(&repo, 80, "list") else {
        return;
    };
    for line in shown.lines() {
        assert!(line.chars().count() <= 80, "wider than 80: {line:?}");
    }
    assert!(
        shown.lines().any(|l| l.starts_with("         ")),
        "no continuation under a warning's text: {shown}"
    );
    // The same words: each continuation joins the line before it with one space.
    let mut joined = String::new();
    for line in shown.lines() {
        if line.starts_with(' ') {
            joined.push(' ');
            joined.push_str(line.trim_start());
        } else {
            if !joined.is_empty() {
                joined.push('\n');
            }
            joined.push_str(line);
        }
    }
    assert_eq!(joined, piped.trim_end());
}
