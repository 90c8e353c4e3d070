//! Config-based hooks (`hook.<name>.command`, git 2.54 and later), against a real git of that
//! age: `.ci/git-new.sh` builds Debian's git 2.55 source package into a cache, and the tests
//! find it through `GIT_SESSION_TEST_NEW_GIT` (the `git` binary), else at that cache's path.
//! Missing, each test is skipped with its reason printed; under CI (`CI=true`) it fails.
//!
//! What they show: with such a git, `hooks install` puts the guard into the repository's config,
//! which every worktree reads whatever `core.hooksPath` says and which no hooks-directory
//! manager rewrites; and `hooks status` reads git's switches for it.

use crate::common::{self, TestRepo};
use std::path::{Path, PathBuf};
use std::process::Command;

fn new_git() -> Option<PathBuf> {
    let git = match std::env::var_os("GIT_SESSION_TEST_NEW_GIT") {
        Some(g) if !g.is_empty() => PathBuf::from(g),
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".cache/git-session-ci/git-new/bin/git"),
    };
    let version = Command::new(&git).arg("--version").output().ok();
    let ok = version.as_ref().is_some_and(|v| {
        let text = String::from_utf8_lossy(&v.stdout);
        text.trim()
            .strip_prefix("git version 2.")
            .and_then(|rest| rest.split('.').next()?.parse::<u32>().ok())
            .is_some_and(|minor| minor >= 54)
    });
    if ok {
        return Some(git);
    }
    let why = format!(
        "a git of 2.54 or later is needed at {} (.ci/git-new.sh builds one)",
        git.display()
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{why}");
    }
    eprintln!("!!!! SKIPPED: {why} !!!!");
    None
}

/// `program` in `dir`, hermetic, with the new git first on PATH (so the hooks, `git session`
/// and the commits all see it).
fn cmd(repo: &TestRepo, git: &Path, program: &Path, dir: &Path) -> Command {
    let mut cmd = Command::new(program);
    common::hermetic(&mut cmd, &repo.home);
    let path = format!(
        "{}:{}:{}",
        common::bin().parent().unwrap().display(),
        git.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.env("PATH", path).current_dir(dir);
    cmd
}

fn run(repo: &TestRepo, git: &Path, program: &Path, dir: &Path, args: &[&str]) -> common::Run {
    common::to_run(cmd(repo, git, program, dir).args(args).output().unwrap())
}

#[test]
fn config_hooks_guard_every_worktree_whatever_the_hooks_directory() {
    let Some(git) = new_git() else {
        return;
    };
    let repo = TestRepo::new();
    let root = repo.root.clone();
    let gs = common::bin();
    repo.commit_file(&root, "shared.txt", "shared\n", "shared");
    // A relative hooks directory that exists in no worktree, as husky's `.husky/_` in a session
    // worktree: no hook file would ever run.
    repo.git(["config", "core.hooksPath", ".hooks-generated"]);
    let out = run(&repo, &git, &gs, &root, &["hooks", "install"]).ok();
    assert!(out.stderr.contains("config-based hook"), "{}", out.stderr);
    assert!(
        !root.join(".hooks-generated").exists(),
        "no hook file is written"
    );
    let config = std::fs::read_to_string(root.join(".git/config")).unwrap();
    assert!(
        config.contains("[hook \"git-session-guard-pre-commit\"]"),
        "{config}"
    );
    // Idempotent.
    let again = run(&repo, &git, &gs, &root, &["hooks", "install"]).ok();
    assert!(
        again.stderr.contains("already in place"),
        "{}",
        again.stderr
    );
    assert_eq!(
        std::fs::read_to_string(root.join(".git/config")).unwrap(),
        config
    );

    let a = repo.create("a");
    let b = repo.create("b");
    run(&repo, &git, &gs, &a, &["claim", "shared.txt"]).ok();
    for (i, dir) in [&b, &root].into_iter().enumerate() {
        let status = run(&repo, &git, &gs, dir, &["hooks", "status"]).ok();
        assert!(
            status.stdout.contains("pre-commit: in force (config"),
            "{}",
            status.stdout
        );
        common::write_in(dir, "shared.txt", "over\n");
        run(&repo, &git, &git, dir, &["add", "shared.txt"]).ok();
        let refused = run(&repo, &git, &git, dir, &["commit", "-q", "-m", "over"]).fails(1);
        assert!(
            refused.stderr.contains("owned by session \"a\""),
            "{}",
            refused.stderr
        );
        run(&repo, &git, &git, dir, &["reset", "-q", "--hard"]).ok();
        let free = format!("free-{i}.txt");
        common::write_in(dir, &free, "free\n");
        run(&repo, &git, &git, dir, &["add", &free]).ok();
        run(&repo, &git, &git, dir, &["commit", "-q", "-m", "free"]).ok();
    }

    // git's own switch for every pre-commit hook: the status says the guard is off.
    repo.git(["config", "hook.pre-commit.enabled", "false"]);
    let off = run(&repo, &git, &gs, &b, &["hooks", "status"]).fails(1);
    assert!(off.stderr.contains("would not run"), "{}", off.stderr);
    repo.git(["config", "--unset", "hook.pre-commit.enabled"]);

    // With an older git on PATH the same configuration runs nothing: the status says so.
    let old = common::to_run(
        repo.cmd_in(&b)
            .args(["hooks", "status"])
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", gs.parent().unwrap().display()),
            )
            .output()
            .unwrap(),
    );
    let old_git = Command::new("/usr/bin/git")
        .arg("--version")
        .output()
        .unwrap();
    if !String::from_utf8_lossy(&old_git.stdout).contains("2.5") {
        assert_eq!(old.code, 1, "{}\n{}", old.stdout, old.stderr);
    }

    // `core.hooksPath=/dev/null` stops git's hook files, not its config-based hooks (the
    // claim the hint for /dev/null makes): still in force, and still refusing.
    repo.git(["config", "core.hooksPath", "/dev/null"]);
    let status = run(&repo, &git, &gs, &b, &["hooks", "status"]).ok();
    assert!(
        status.stdout.contains("pre-commit: in force (config"),
        "{}",
        status.stdout
    );
    common::write_in(&b, "shared.txt", "over\n");
    run(&repo, &git, &git, &b, &["add", "shared.txt"]).ok();
    let refused = run(&repo, &git, &git, &b, &["commit", "-q", "-m", "over"]).fails(1);
    assert!(
        refused.stderr.contains("owned by session \"a\""),
        "{}",
        refused.stderr
    );
    run(&repo, &git, &git, &b, &["reset", "-q", "--hard"]).ok();

    run(&repo, &git, &gs, &root, &["hooks", "uninstall"]).ok();
    let config = std::fs::read_to_string(root.join(".git/config")).unwrap();
    assert!(!config.contains("git-session-guard"), "{config}");
}
