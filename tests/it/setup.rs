//! `git session setup [LABEL] [--approve-run]`: the setup `create` skipped or failed, completed
//! later in the existing session, never overwriting what the session already has.

use crate::common;
use common::TestRepo;

fn repo_with_setup(run: &str) -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".gitignore", ".env\n");
    repo.git(["add", ".gitignore"]);
    repo.git(["commit", "-qm", "ignore .env"]);
    repo.write(".env", "SECRET=main\n");
    repo.write(
        ".git-session.toml",
        &format!("[create]\ncopy = [\".env\"]\nrun = [{run:?}]\n"),
    );
    repo
}

#[test]
fn an_unapproved_list_skipped_at_create_runs_later_once_approved() {
    let repo = repo_with_setup("echo ran >> setup-ran.txt");
    let wt = repo.create("late");
    assert!(!wt.join("setup-ran.txt").exists());
    // The session edits its copy meanwhile; setup must not put the main worktree's back.
    std::fs::write(wt.join(".env"), "SECRET=session\n").unwrap();

    // Still no terminal and no approval: refused, naming the commands and the way on.
    let out = repo.run(["setup", "late"]).fails(1);
    repo.insta().bind(|| insta::assert_snapshot!(out.stderr, @r#"
    error: the [create] run commands of .git-session.toml are not approved, so they did not run: `echo ran >> setup-ran.txt`
    hint: read them, then: git session setup late --approve-run
    "#));
    assert!(!wt.join("setup-ran.txt").exists());

    // From inside the worktree, the label is the session's own.
    let out = repo.run_in(&wt, ["setup", "--approve-run"]).ok();
    assert!(
        out.stderr.contains("running: echo ran >> setup-ran.txt"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("setup-ran.txt")).unwrap(),
        "ran\n"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join(".env")).unwrap(),
        "SECRET=session\n",
        "setup overwrote the session's own file"
    );
    assert_eq!(out.stdout, "", "setup prints nothing on stdout");

    // Approved now: the next create and a second setup run it without asking.
    let other = repo.create("next");
    assert_eq!(
        std::fs::read_to_string(other.join("setup-ran.txt")).unwrap(),
        "ran\n"
    );
    repo.run(["setup", "late"]).ok();
    assert_eq!(
        std::fs::read_to_string(wt.join("setup-ran.txt")).unwrap(),
        "ran\nran\n"
    );
}

#[test]
fn a_failing_command_fails_setup_and_a_missing_file_is_filled_in() {
    let repo = repo_with_setup("exit 3");
    let wt = repo.create("broken");
    std::fs::remove_file(wt.join(".env")).unwrap();
    let out = repo.run(["setup", "broken", "--approve-run"]).fails(1);
    assert!(
        out.stderr
            .contains("error: the setup of session \"broken\" failed")
            && out.stderr.contains("`exit 3` failed"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(wt.join(".env")).unwrap(),
        "SECRET=main\n",
        "the missing copy is filled in"
    );
}

#[test]
fn setup_refuses_bad_labels_and_sessions_it_cannot_set_up() {
    let repo = repo_with_setup("true");
    let out = repo.run(["setup", "../../x"]).fails(2);
    assert_eq!(
        out.stderr
            .lines()
            .filter(|l| l.starts_with("error:"))
            .count(),
        1
    );
    let out = repo.run(["setup", "nope"]).fails(1);
    assert!(
        out.stderr.starts_with("error: no session named \"nope\""),
        "{}",
        out.stderr
    );
    let out = repo.run(["setup"]).fails(1);
    assert!(
        out.stderr.starts_with("error: no session here"),
        "{}",
        out.stderr
    );
    let wt = repo.create("gone");
    std::fs::remove_dir_all(&wt).unwrap();
    let out = repo.run(["setup", "gone"]).fails(1);
    assert!(out.stderr.contains("is missing"), "{}", out.stderr);
    assert!(!wt.exists(), "setup recreated a missing worktree");
}
