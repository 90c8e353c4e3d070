//! `list` on a terminal fits its width; piped or `--wide` it is whole. Driven through a real
//! pseudo-terminal (util-linux `script`), skipped loudly where that is missing. On a narrow
//! terminal PATH goes first, and LABEL, AGENT and OWNED stay (issue 30 item 5, issue 32); paths
//! are shown from where the command runs.

use crate::common;
use crate::context_support::hook;

use common::{hermetic, TestRepo};
use serde_json::json;
use std::path::Path;
use std::process::Command;

/// Runs `git session ARGS` on a pty `cols` wide; its output, or `None` without `script`.
pub fn on_terminal(repo: &TestRepo, cols: u16, args: &str) -> Option<String> {
    on_terminal_in(repo, &repo.root, cols, args)
}

/// [`on_terminal`] from `dir`.
fn on_terminal_in(repo: &TestRepo, dir: &Path, cols: u16, args: &str) -> Option<String> {
    on_terminal_with(repo, dir, cols, args, &[])
}

/// [`on_terminal_in`] with "now" pinned.
fn on_terminal_at(repo: &TestRepo, dir: &Path, cols: u16, args: &str, now: &str) -> Option<String> {
    on_terminal_with(repo, dir, cols, args, &[("GIT_SESSION_NOW", now)])
}

fn on_terminal_with(
    repo: &TestRepo,
    dir: &Path,
    cols: u16,
    args: &str,
    env: &[(&str, &str)],
) -> Option<String> {
    if !common::installed("script") {
        eprintln!("!!!! SKIPPED: no `script` (util-linux) to run list on a terminal !!!!");
        return None;
    }
    let mut cmd = Command::new("script");
    hermetic(&mut cmd, &repo.home);
    cmd.current_dir(dir).args([
        "-qec",
        &format!("stty rows 40 cols {cols}; git session {args}"),
        "/dev/null",
    ]);
    for (k, v) in env {
        cmd.env(k, v);
    }
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
    // PATH went first; what this tool is for stays.
    let header = fitted.lines().next().unwrap();
    assert!(!header.contains("PATH"), "{fitted}");
    for kept in ["LABEL", "AGENT", "OWNED"] {
        assert!(header.contains(kept), "{kept}: {fitted}");
    }
    assert!(said[0].contains("PATH"), "{fitted}");
    // With room, a path is shown from where the command runs: from the main worktree...
    repo.run(["cleanup", long]).ok();
    let roomy = on_terminal(&repo, 120, "list").unwrap();
    assert!(roomy.contains("../repo.sessions/short\n"), "{roomy}");
    // ...and from inside a session, a sibling's path is right from there, its own is `.`.
    let sibling = repo.create("sibling");
    let from_sibling = on_terminal_in(&repo, &sibling, 120, "list").unwrap();
    assert!(from_sibling.contains("../short\n"), "{from_sibling}");
    assert!(from_sibling.contains(" .\n"), "{from_sibling}");
    let deeper = sibling.join("src/deep");
    std::fs::create_dir_all(&deeper).unwrap();
    let from_deeper = on_terminal_in(&repo, &deeper, 120, "list").unwrap();
    assert!(from_deeper.contains("../../../short\n"), "{from_deeper}");
    for shown in ["../../../short", "../../../sibling"] {
        assert!(deeper.join(shown).is_dir(), "{shown} from {deeper:?}");
    }
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

/// `git session ARGS` with "now" pinned to `now`.
fn run_at(repo: &TestRepo, now: &str, args: &[&str]) -> common::Run {
    let mut cmd = repo.cmd_in(&repo.root);
    cmd.args(args).env("GIT_SESSION_NOW", now);
    common::to_run(cmd.output().unwrap()).ok()
}

// The layouts people read, pinned: 80 columns (PATH dropped, AGENT and OWNED kept) and a wide
// terminal, with agents working, waiting for a permission and for input, gone and ended.
#[test]
fn list_layouts_at_80_columns_and_wide_with_agent_states() {
    let repo = TestRepo::new();
    repo.run(["hooks", "install"]).ok();
    // A clock a day ahead (the worktrees' files are written now, and a last activity in the
    // future would be warned about), whole minutes: the ages shown are exact.
    let base = chrono::Utc::now().timestamp() / 60 * 60 + 86_400;
    let at = |minutes: i64| {
        chrono::DateTime::from_timestamp(base + minutes * 60, 0)
            .unwrap()
            .to_rfc3339()
    };
    let now = at(0);
    let mut dirs = Vec::new();
    for label in ["api-auth", "docs", "fix-login", "parser-rewrite", "spike"] {
        let out = run_at(&repo, &at(-150), &["create", label]);
        dirs.push(std::path::PathBuf::from(out.stdout.trim()));
    }
    repo.run_in(&dirs[2], ["claim", "README.md"]).ok();
    let send = |agent: &str, dir: &Path, minutes: i64, event: &str| {
        let p = json!({"session_id": agent, "cwd": dir, "hook_event_name": event,
                       "tool_name": "Bash", "tool_input": {"command": "make"}});
        hook(&repo, &p, &[("GIT_SESSION_NOW", &at(minutes))]);
    };
    send("A", &dirs[0], -1, "UserPromptSubmit");
    send("B", &dirs[1], -30, "UserPromptSubmit");
    send("B", &dirs[1], -12, "Stop");
    send("C", &dirs[2], -30, "UserPromptSubmit");
    send("C", &dirs[2], -3, "PermissionRequest");
    send("D", &dirs[3], -90, "UserPromptSubmit");
    send("D", &dirs[3], -80, "SessionEnd");
    send("E", &dirs[4], -30, "UserPromptSubmit");
    let Some(narrow) = on_terminal_at(&repo, &repo.root, 80, "list", &now) else {
        return;
    };
    let wide = on_terminal_at(&repo, &repo.root, 160, "list --sort attention", &now).unwrap();
    repo.insta().bind(|| {
        insta::assert_snapshot!("list_80_columns", narrow);
        insta::assert_snapshot!("list_wide_by_attention", wide);
    });
}
