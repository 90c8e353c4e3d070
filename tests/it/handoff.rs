//! `git session handoff`: versioned kickoff notes, through the real binary in real repositories.

use crate::common;
use common::{to_run, Run, TestRepo};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

const T0: &str = "2099-01-01T00:00:00Z";
const T1: &str = "2099-01-01T10:00:00Z";
const T2: &str = "2099-01-02T08:30:00Z";
const NOW: &str = "2099-01-02T12:00:00Z";

/// Runs `git-session ARGS` in `dir` with `input` on stdin and extra environment.
fn run_with(repo: &TestRepo, dir: &Path, args: &[&str], input: &str, env: &[(&str, &str)]) -> Run {
    let mut cmd = repo.cmd_in(dir);
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A refusal may exit before reading; a closed pipe then is expected, not a failure.
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    to_run(child.wait_with_output().unwrap())
}

/// `git session create LABEL` with the clock pinned; returns the worktree.
fn create_at(repo: &TestRepo, label: &str, at: &str) -> PathBuf {
    let out = run_with(
        repo,
        &repo.root,
        &["create", label],
        "",
        &[("GIT_SESSION_NOW", at)],
    )
    .ok();
    PathBuf::from(out.stdout.trim_end())
}

fn note_file(repo: &TestRepo, label: &str, n: u32) -> PathBuf {
    repo.store().join(format!("handoffs/{label}/{n}.md"))
}

const FIRST: &str = "# Fix the login redirect\n\n## Done\nRedirect loop found in auth.rs.\n";
const SECOND: &str =
    "# Login fix, second pass\n\n## In-Flight State\nTests for SSO half written.\n";

#[test]
fn write_show_and_list_versions_in_a_session_worktree() {
    let repo = TestRepo::new();
    let wt = create_at(&repo, "fix-login", T0);

    // From a file, in the session's own worktree: the session is found from the directory.
    common::write_in(&wt, "../note1.md", FIRST);
    let out = run_with(
        &repo,
        &wt,
        &["handoff", "write", "--file", "../note1.md"],
        "",
        &[("GIT_SESSION_NOW", T1)],
    )
    .ok();
    assert_eq!(
        out.stdout,
        format!("{}\n", note_file(&repo, "fix-login", 1).display())
    );
    assert!(out
        .stderr
        .contains("stored handoff note 1 for session \"fix-login\""));

    // From stdin (`-`), from the main worktree, naming the session.
    run_with(
        &repo,
        &repo.root,
        &["handoff", "write", "--session", "fix-login", "-"],
        SECOND,
        &[("GIT_SESSION_NOW", T2)],
    )
    .ok();

    // Nothing was overwritten: both versions hold exactly what was written.
    assert_eq!(
        std::fs::read_to_string(note_file(&repo, "fix-login", 1)).unwrap(),
        FIRST
    );
    assert_eq!(
        std::fs::read_to_string(note_file(&repo, "fix-login", 2)).unwrap(),
        SECOND
    );

    let latest = repo.run_in(&wt, ["handoff", "show"]).ok();
    assert_eq!(latest.stdout, SECOND);
    let first = repo
        .run(["handoff", "show", "fix-login", "--version", "1"])
        .ok();
    assert_eq!(first.stdout, FIRST);

    // Writing a note is activity of the session.
    let sessions = run_with(
        &repo,
        &repo.root,
        &["list", "--json"],
        "",
        &[("GIT_SESSION_NOW", NOW)],
    )
    .ok()
    .json();
    assert_eq!(sessions[0]["last_activity"], T2);

    let list = repo.run_in(&wt, ["handoff", "list", "--json"]).ok().json();
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        let keys: BTreeSet<&str> = row
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            BTreeSet::from(["schema_version", "label", "version", "at", "title", "path"])
        );
    }
    assert_eq!(rows[0]["label"], "fix-login");
    assert_eq!(rows[0]["version"], 1);
    assert_eq!(rows[0]["at"], T1);
    assert_eq!(rows[0]["title"], "Fix the login redirect");
    assert_eq!(
        rows[1]["path"],
        note_file(&repo, "fix-login", 2).display().to_string()
    );
    assert_eq!(rows[1]["at"], T2);
}

#[test]
fn list_shows_every_session_from_the_main_worktree() {
    let repo = TestRepo::new();
    create_at(&repo, "fix-login", T0);
    create_at(&repo, "docs", T0);
    for (label, note, at) in [
        ("fix-login", FIRST, T1),
        ("docs", "Rewrite the README intro.\n", T1),
        ("fix-login", SECOND, T2),
    ] {
        run_with(
            &repo,
            &repo.root,
            &["handoff", "write", "-s", label],
            note,
            &[("GIT_SESSION_NOW", at)],
        )
        .ok();
    }
    let all = run_with(
        &repo,
        &repo.root,
        &["handoff", "list"],
        "",
        &[("GIT_SESSION_NOW", NOW)],
    )
    .ok();
    let one = run_with(
        &repo,
        &repo.root,
        &["handoff", "list", "docs"],
        "",
        &[("GIT_SESSION_NOW", NOW)],
    )
    .ok();
    // No paths in the table and every time pinned: snapshot it unfiltered, aligned as printed.
    insta::assert_snapshot!("list_all", all.stdout);
    insta::assert_snapshot!("list_one", one.stdout);
    // Inside a session's worktree the default is that session; --all widens it.
    let wt = repo.sessions_dir().join("docs");
    let here = repo.run_in(&wt, ["handoff", "list", "--json"]).ok().json();
    assert_eq!(here.as_array().unwrap().len(), 1);
    let wide = repo
        .run_in(&wt, ["handoff", "list", "--all", "--json"])
        .ok()
        .json();
    assert_eq!(wide.as_array().unwrap().len(), 3);
}

#[test]
fn concurrent_writers_each_get_their_own_version() {
    let repo = TestRepo::new();
    create_at(&repo, "busy", T0);
    let children: Vec<_> = (0..6)
        .map(|i| {
            let mut cmd = repo.cmd_in(&repo.root);
            cmd.args(["handoff", "write", "-"])
                .env("GIT_SESSION", "busy")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = cmd.spawn().unwrap();
            let mut stdin = child.stdin.take().unwrap();
            stdin
                .write_all(format!("note from writer {i}\n").as_bytes())
                .unwrap();
            drop(stdin);
            child
        })
        .collect();
    for child in children {
        to_run(child.wait_with_output().unwrap()).ok();
    }
    let mut seen = BTreeSet::new();
    for n in 1..=6 {
        seen.insert(std::fs::read_to_string(note_file(&repo, "busy", n)).unwrap());
    }
    let expected: BTreeSet<String> = (0..6).map(|i| format!("note from writer {i}\n")).collect();
    assert_eq!(seen, expected);
    assert!(!note_file(&repo, "busy", 7).exists());
}

#[test]
fn empty_and_unfilled_notes_are_refused() {
    let repo = TestRepo::new();
    let wt = create_at(&repo, "fix-login", T0);
    let empty = run_with(&repo, &wt, &["handoff", "write"], " \n\n", &[]).fails(1);
    let template = repo.run(["handoff", "template"]).ok().stdout;
    let unfilled = run_with(&repo, &wt, &["handoff", "write", "-"], &template, &[]).fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!("empty_refused", empty.stderr);
        insta::assert_snapshot!("unfilled_refused", unfilled.stderr);
    });
    assert!(!repo.store().join("handoffs/fix-login").exists());
}

#[test]
fn write_without_a_session_refuses_with_a_hint() {
    let repo = TestRepo::new();
    create_at(&repo, "fix-login", T0);
    // The main worktree belongs to no session.
    let none = run_with(&repo, &repo.root, &["handoff", "write"], FIRST, &[]).fails(1);
    let unknown = run_with(
        &repo,
        &repo.root,
        &["handoff", "write", "-s", "nope"],
        FIRST,
        &[],
    )
    .fails(1);
    let invalid = run_with(
        &repo,
        &repo.root,
        &["handoff", "write", "-s", "../x"],
        FIRST,
        &[],
    )
    .fails(2);
    let missing_file = repo
        .run(["handoff", "write", "-s", "fix-login", "no-such-note.md"])
        .fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!("no_session", none.stderr);
        insta::assert_snapshot!("unknown_session", unknown.stderr);
        insta::assert_snapshot!("invalid_label", invalid.stderr);
        insta::assert_snapshot!("missing_file", missing_file.stderr);
    });
    assert!(!repo.store().join("handoffs").exists());
}

#[test]
fn show_explains_what_is_missing() {
    let repo = TestRepo::new();
    create_at(&repo, "fix-login", T0);
    let no_note = repo.run(["handoff", "show", "fix-login"]).fails(1);
    run_with(
        &repo,
        &repo.root,
        &["handoff", "write", "-s", "fix-login"],
        FIRST,
        &[],
    )
    .ok();
    let no_version = repo
        .run(["handoff", "show", "fix-login", "--version", "3"])
        .fails(1);
    let nobody = repo.run(["handoff", "show"]).fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!("show_no_note", no_note.stderr);
        insta::assert_snapshot!("show_no_version", no_version.stderr);
        insta::assert_snapshot!("show_nobody", nobody.stderr);
    });
    // GIT_SESSION names the session as well as the worktree does.
    let by_env = run_with(
        &repo,
        &repo.root,
        &["handoff", "show"],
        "",
        &[("GIT_SESSION", "fix-login")],
    )
    .ok();
    assert_eq!(by_env.stdout, FIRST);
}

#[test]
fn template_has_the_sections_the_alerts_name() {
    let repo = TestRepo::new();
    // No repository needed: run it from the temp HOME.
    let out = repo
        .run_in(&repo.home.clone(), ["handoff", "template"])
        .ok();
    for section in ["## In-Flight State", "## Deferred Items", "## Next Steps"] {
        assert!(out.stdout.contains(section), "{section}");
    }
    insta::assert_snapshot!("template", out.stdout);
}
