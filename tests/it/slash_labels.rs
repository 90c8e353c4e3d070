//! Labels with `/` (`fix/login`, as git branch names and Claude Code's `--worktree
//! feature/login` have them): branch `session/fix/login`, worktree `<sessions>/fix+login` (one
//! component, so it cannot leave the worktrees directory, nest in another session's worktree or
//! meet `fix-login`), through create, list, info, switch, completion, cleanup and prune.

use crate::common;
use common::TestRepo;

#[test]
fn a_slash_label_goes_through_every_command() {
    let repo = TestRepo::new();
    let wt = repo.create("fix/login");
    assert_eq!(wt, repo.sessions_dir().join("fix+login"));
    assert_eq!(
        repo.git_in(&wt, ["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/session/fix/login"
    );
    // Two labels that a flattening with `-` would send to one place stay apart.
    let ab = repo.create("a/b");
    let a_b = repo.create("a-b");
    assert_eq!(ab, repo.sessions_dir().join("a+b"));
    assert_eq!(a_b, repo.sessions_dir().join("a-b"));
    assert_eq!(repo.labels(), ["a-b", "a/b", "fix/login"]);

    let info = repo.run(["info", "fix/login", "--json"]).ok().json();
    assert_eq!(info["label"], "fix/login");
    assert_eq!(info["branch"], "session/fix/login");
    assert_eq!(info["path"], wt.display().to_string());
    let info = repo.run_in(&wt, ["info"]).ok();
    assert!(
        info.stdout.starts_with("session   fix/login\n"),
        "{}",
        info.stdout
    );
    let list = repo.run(["list"]).ok();
    assert!(list.stdout.contains("fix/login"), "{}", list.stdout);
    assert_eq!(
        repo.run(["switch", "fix/login"]).ok().stdout,
        format!("{}\n", wt.display())
    );
    assert_eq!(
        repo.run(["__complete-labels"]).ok().stdout,
        "a-b\na/b\nfix/login\n"
    );
    // switch and merge take labels at TAB as info does.
    for sub in ["switch", "merge", "info"] {
        let out = repo
            .run(["__complete-labels", "--", "git-session", sub, ""])
            .ok();
        assert_eq!(out.stdout, "a-b\na/b\nfix/login\n", "{sub}");
    }
    // Acting through GIT_SESSION and claiming works as for any label.
    repo.run_as_in(&wt, "fix/login", ["claim", "README.md"])
        .ok();
    assert_eq!(repo.claims()[0]["label"], "fix/login");

    // A branch and a folder of branches of one name cannot both exist in git: refused first.
    let out = repo.run(["create", "fix"]).fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr, @r"
    error: branch session/fix/login exists, and git cannot keep session/fix beside it
    hint: choose another label (a branch cannot also be a folder of branches)
    ")
    });
    let out = repo.run(["create", "a/b/c"]).fails(1);
    assert!(
        out.stderr
            .starts_with("error: branch session/a/b exists, and git cannot keep session/a/b/c"),
        "{}",
        out.stderr
    );
    // The flattened look-alike of fix/login is a session of its own.
    let fix_login = repo.create("fix-login");
    assert_eq!(fix_login, repo.sessions_dir().join("fix-login"));

    // Cleanup of one leaves its look-alike alone.
    repo.run(["cleanup", "a/b"]).ok();
    assert!(!ab.exists() && a_b.is_dir());
    assert_eq!(repo.git(["branch", "--list", "session/a/b"]), "");
    // Forced, its archive ref is its own (`a+b`), never listed as another label's.
    std::fs::write(a_b.join("scratch.txt"), "x\n").unwrap();
    repo.run(["cleanup", "--force", "--yes", "a-b"]).ok();
    assert!(repo
        .git([
            "for-each-ref",
            "--format=%(refname)",
            "refs/session-archive/"
        ])
        .starts_with("refs/session-archive/a-b/"));

    // Merged and idle: prune removes it like any other.
    repo.run(["merge", "fix/login"]).ok();
    assert!(!wt.exists());
    let kept = repo.create("old/one");
    let mut cmd = repo.cmd_in(&repo.root);
    cmd.env(
        "GIT_SESSION_NOW",
        (chrono::Utc::now() + chrono::Duration::days(30)).to_rfc3339(),
    )
    .args(["prune"]);
    let out = common::to_run(cmd.output().unwrap());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!kept.exists(), "{}", out.stderr);
    assert!(out.stdout.contains("old/one"), "{}", out.stdout);
    assert!(!fix_login.exists());
    assert_eq!(repo.labels(), Vec::<String>::new());
}

#[test]
fn the_worktree_hook_keeps_a_slash_name_as_its_label() {
    let repo = TestRepo::new();
    let out = repo.worktree_hook(
        "create",
        serde_json::json!({
            "session_id": "agent-1",
            "hook_event_name": "WorktreeCreate",
            "cwd": repo.root.display().to_string(),
            "name": "feature/login",
        }),
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout.trim(),
        repo.sessions_dir().join("feature+login").to_str().unwrap()
    );
    assert_eq!(repo.labels(), ["feature/login"]);
}
