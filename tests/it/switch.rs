//! `git session switch LABEL`: the path of a session's worktree on stdout (so
//! `cd "$(git session switch x)"` works), the shell integration entering it, and an unknown
//! label refused with the closest ones.

use crate::common;
use common::TestRepo;

#[test]
fn switch_prints_the_worktree_path_and_asks_the_shell_integration_to_enter_it() {
    let repo = TestRepo::new();
    let wt = repo.create("fix-login");
    let out = repo.run(["switch", "fix-login"]).ok();
    assert_eq!(out.stdout, format!("{}\n", wt.display()));
    assert_eq!(out.stderr, "");
    // From another session's worktree, the same answer.
    let other = repo.create("docs");
    let out = repo.run_in(&other, ["switch", "fix-login"]).ok();
    assert_eq!(out.stdout, format!("{}\n", wt.display()));

    let file = repo.base().join("cd-request");
    std::fs::write(&file, "").unwrap();
    let out = repo
        .cmd_in(&repo.root)
        .env("GIT_SESSION_CD_FILE", &file)
        .args(["switch", "docs"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        format!("{}\n", other.display())
    );
}

#[test]
fn an_unknown_label_is_refused_with_the_closest_ones() {
    let repo = TestRepo::new();
    let out = repo.run(["switch", "fix-login"]).fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr, @r#"
    error: no session named "fix-login"
    hint: this repository has no sessions; make one with `git session create`
    "#)
    });
    for label in ["fix-login", "fix-logout", "docs"] {
        repo.create(label);
    }
    let out = repo.run(["switch", "fix-log"]).fails(1);
    assert_eq!(out.stdout, "");
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr, @r#"
    error: no session named "fix-log"
    hint: did you mean fix-login, fix-logout? (`git session list` shows them all)
    "#)
    });
    let out = repo.run(["switch", "zzzzzz"]).fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr, @r#"
    error: no session named "zzzzzz"
    hint: the sessions here: docs, fix-login, fix-logout
    "#)
    });
    let out = repo.run(["switch", "../x"]).fails(2);
    assert!(
        out.stderr.starts_with("error: invalid label"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_session_whose_worktree_is_gone_is_refused_with_what_to_do() {
    let repo = TestRepo::new();
    let wt = repo.create("gone");
    std::fs::remove_dir_all(&wt).unwrap();
    let out = repo.run(["switch", "gone"]).fails(1);
    assert_eq!(out.stdout, "");
    repo.insta().bind(|| insta::assert_snapshot!(out.stderr, @r#"
    error: the worktree of "gone" is gone: [TMP]/repo.sessions/gone
    hint: `git session info gone` shows what it held; `git session cleanup gone` removes what is left
    "#));
}
