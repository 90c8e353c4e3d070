//! The words a new user meets on an ordinary day (issue 19's list): each says what happened in
//! plain terms, and a dry run reports instead of failing.

use crate::common;
use common::{write_in, TestRepo};

#[test]
fn create_in_a_repository_without_commits_says_so() {
    let repo = TestRepo::new();
    let empty = repo.base().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    repo.git_in(&empty, ["init", "-q", "-b", "master"]);
    let out = repo.run_in(&empty, ["create", "x"]).fails(1);
    repo.insta().bind(|| insta::assert_snapshot!(out.stderr, @r#"
    error: this repository has no commits yet, so a session has nothing to start from
    hint: make the first commit (git commit --allow-empty -m "Initial commit"), then create the session
    "#));
    assert!(!repo.base().join("empty.sessions").exists());
}

#[test]
fn a_dash_word_where_a_label_goes_gets_no_dash_dash_tip() {
    let repo = TestRepo::new();
    let out = repo.run(["create", "-x"]).fails(2);
    insta::assert_snapshot!(out.stderr, @r"
    error: unexpected argument '-x' found

      tip: a session label never starts with '-'; `git session create --help` lists the options

    Usage: git-session create [OPTIONS] [LABEL] [-- <CMD>...]

    For more information, try '--help'.
    ");
    // Where a value may start with `-` (a path to claim), clap's tip stands.
    let out = repo.run(["claim", "-x"]).fails(2);
    assert!(out.stderr.contains("use '-- -x'"), "{}", out.stderr);
}

#[test]
fn prune_dry_run_says_just_now_and_cleanup_hints_read_as_one_sentence() {
    let repo = TestRepo::new();
    let wt = repo.create("c");
    let out = repo.run(["prune", "--dry-run"]).ok();
    assert!(
        out.stdout.contains("kept c: active just now, within 7d"),
        "{}",
        out.stdout
    );
    write_in(&wt, "notes.txt", "x\n");
    let out = repo.run(["cleanup", "c"]).fails(1);
    assert!(
        out.stderr.contains(" commit) or remove them"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("  remove them"), "{}", out.stderr);
}

#[test]
fn cleanup_dry_run_reports_held_work_and_succeeds() {
    let repo = TestRepo::new();
    let wt = repo.create("held");
    repo.commit_file(&wt, "f.txt", "x\n", "work");
    write_in(&wt, "notes.txt", "x\n");
    let out = repo.run(["cleanup", "--dry-run", "held"]).ok();
    repo.insta().bind(|| {
        insta::assert_snapshot!(format!("{}--- stderr\n{}", out.stdout, out.stderr), @r#"
        would not remove session "held" without --force:
          branch session/held has 1 commit not in main:
              [SHORT] work
          worktree has 1 uncommitted or untracked file:
              notes.txt
        --- stderr
        hint: merge it into main (git session merge held) or rebase it there; commit the files (git -C [TMP]/repo.sessions/held add -A && git -C [TMP]/repo.sessions/held commit) or remove them; or pass --force to archive everything under refs/session-archive/ and remove it
        "#)
    });
    assert!(wt.join("notes.txt").is_file());
    assert_eq!(repo.labels(), ["held"]);
}

#[test]
fn info_calls_a_fresh_session_new_as_list_does() {
    let repo = TestRepo::new();
    repo.create("fresh");
    let info = repo.run(["info", "fresh"]).ok();
    assert!(
        info.stdout
            .contains("merged    new (no commits of its own yet)  ahead 0, behind 0"),
        "{}",
        info.stdout
    );
    let list = repo.run(["list"]).ok();
    assert!(list.stdout.contains(" new "), "{}", list.stdout);
}

#[test]
fn the_worktrees_directory_goes_with_the_last_session() {
    let repo = TestRepo::new();
    repo.create("one");
    repo.create("two");
    repo.run(["cleanup", "one"]).ok();
    assert!(
        repo.sessions_dir().is_dir(),
        "another session is still there"
    );
    repo.run(["cleanup", "two"]).ok();
    assert!(!repo.sessions_dir().exists());
    // Something else in it keeps it.
    repo.create("three");
    write_in(&repo.sessions_dir(), "README", "mine\n");
    repo.run(["cleanup", "three"]).ok();
    assert!(repo.sessions_dir().join("README").is_file());
}
