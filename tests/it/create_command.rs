//! `git session create [LABEL] -- CMD`: everything after `--` is the command (a label goes
//! before it), with no label one is generated and said so, and a command that cannot start
//! leaves no session behind.

use crate::common;
use common::{assert_nothing_left, TestRepo};

/// A repository with the guard in force, so no warning about it joins the lines under test.
fn guarded() -> TestRepo {
    let repo = TestRepo::new();
    repo.run(["hooks", "install"]).ok();
    repo
}

fn label_filter(repo: &TestRepo) -> insta::Settings {
    let mut s = repo.insta();
    s.add_filter(r"s-\d{4}-[0-9a-f]{4}", "[LABEL]");
    s
}

/// Nothing of any session is left: no worktree directory, branch, admin entry or record.
#[track_caller]
fn no_session_left(repo: &TestRepo) {
    assert!(!repo.sessions_dir().exists(), "worktrees directory left");
    assert_eq!(repo.git(["for-each-ref", "refs/heads/session/"]), "");
    assert_eq!(repo.labels(), Vec::<String>::new());
    assert!(
        !repo.root.join(".git/worktrees").exists() || {
            std::fs::read_dir(repo.root.join(".git/worktrees"))
                .unwrap()
                .next()
                .is_none()
        }
    );
}

#[test]
fn with_no_label_before_the_double_dash_a_label_is_generated_and_the_command_runs() {
    let repo = guarded();
    // The issue's own case: `create -- bash -c "..."` made a session `bash` and failed on `-c`.
    let out = repo
        .run([
            "create",
            "--",
            "sh",
            "-c",
            "echo \"$GIT_SESSION $PWD\"; exit 3",
        ])
        .fails(3);
    let labels = repo.labels();
    assert_eq!(labels.len(), 1, "{labels:?}");
    let label = &labels[0];
    let shape = label.len() == 11
        && label.starts_with("s-")
        && label[2..6].bytes().all(|b| b.is_ascii_digit())
        && &label[6..7] == "-"
        && label[7..]
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    assert!(shape, "not a generated label: {label}");
    let path = repo.sessions_dir().join(label);
    // The command ran inside the new worktree, with the environment `LABEL -- CMD` gives.
    assert_eq!(out.stdout, format!("{label} {}\n", path.display()));
    // One line says what was done: the label was generated, and what runs.
    label_filter(&repo).bind(|| {
        insta::assert_snapshot!(out.stderr, @r#"session "[LABEL]" (label generated) is at [TMP]/repo.sessions/[LABEL]; running sh"#)
    });
    // A label given before `--` is used, and nothing is said about it beyond where and what.
    let out = repo
        .run(["create", "named", "--", "sh", "-c", "echo $GIT_SESSION"])
        .ok();
    assert_eq!(out.stdout, "named\n");
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr, @r#"session "named" is at [TMP]/repo.sessions/named; running sh"#)
    });
}

#[test]
fn a_label_looking_first_word_is_a_command_and_one_not_on_path_creates_nothing() {
    let repo = guarded();
    // `create -- claude` with no `claude` installed: the word is never taken for a label.
    let out = repo.run(["create", "--", "fix-login"]).fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr, @r"
        error: cannot run fix-login: no such command on PATH
        hint: nothing was created; a label goes before --: git session create LABEL -- CMD
        ")
    });
    assert!(out.stdout.is_empty());
    no_session_left(&repo);
    // The old `create -- LABEL -- CMD` form is a command too, refused the same way.
    let out = repo
        .run(["create", "--", "late", "--", "sh", "-c", "echo hi"])
        .fails(1);
    assert!(
        out.stderr
            .starts_with("error: cannot run late: no such command on PATH"),
        "{}",
        out.stderr
    );
    no_session_left(&repo);
}

#[test]
fn a_command_that_cannot_start_rolls_the_session_back() {
    let repo = guarded();
    // A path resolves in the new worktree, so it is tried there: exec fails, and the creation
    // is undone.
    let out = repo
        .run(["create", "nope", "--", "/nonexistent/agent", "--flag"])
        .fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr, @r#"
        session "nope" is at [TMP]/repo.sessions/nope; running /nonexistent/agent
        error: cannot run /nonexistent/agent: No such file or directory (os error 2)
        hint: session "nope" was rolled back: no worktree, branch or record is left
        "#)
    });
    assert_nothing_left(&repo, "nope");
    // A file of the worktree that is not executable: the same, with a generated label.
    repo.write("tool.sh", "echo hi\n");
    repo.git(["add", "tool.sh"]);
    repo.git(["commit", "-q", "-m", "a script, not executable"]);
    let out = repo.run(["create", "--", "./tool.sh"]).fails(1);
    label_filter(&repo).bind(|| {
        insta::assert_snapshot!(out.stderr, @r#"
        session "[LABEL]" (label generated) is at [TMP]/repo.sessions/[LABEL]; running ./tool.sh
        error: cannot run ./tool.sh: Permission denied (os error 13)
        hint: session "[LABEL]" was rolled back: no worktree, branch or record is left
        "#)
    });
    no_session_left(&repo);
    // The same label can be created again at once: nothing of the first attempt is in the way.
    repo.run(["create", "nope"]).ok();
    assert_eq!(repo.labels(), ["nope"]);
}
