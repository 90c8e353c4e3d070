//! git's own lock files left by a killed git (issue 28): the next command names each one, and
//! removes it when no live git process works in the repository; one a live git may hold is kept
//! and the process named (src/lifecycle/git_locks.rs).

use crate::common::TestRepo;
use std::path::Path;
use std::process::Stdio;

fn backdate(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "").unwrap();
    let ok = std::process::Command::new("touch")
        .args(["-d", "1 minute ago"])
        .arg(path)
        .status()
        .unwrap();
    assert!(ok.success());
}

#[test]
fn stale_git_locks_are_named_and_removed_and_branch_deletion_works_again() {
    let repo = TestRepo::new();
    let wt = repo.create("x");
    repo.git(["pack-refs", "--all"]);
    let git = repo.root.join(".git");
    let locks = [
        git.join("packed-refs.lock"),
        git.join("refs/heads/session/x.lock"),
        git.join("worktrees/x/index.lock"),
    ];
    for lock in &locks {
        backdate(lock);
    }
    // A lock a git is taking right now is young: left alone, not named.
    let young = git.join("HEAD.lock");
    std::fs::write(&young, "").unwrap();
    // What the killed git's locks do: no branch can be deleted, no index written.
    assert_ne!(
        repo.git_try(&repo.root, ["branch", "-D", "session/x"]).code,
        0
    );
    let out = repo.run(["list"]).ok();
    for lock in &locks {
        assert!(
            out.stderr
                .contains(&format!("removed git's lock {}", lock.display())),
            "{}: {out:?}",
            lock.display()
        );
        assert!(!lock.exists());
    }
    assert!(young.exists(), "{out:?}");
    assert!(!out.stderr.contains("HEAD.lock"), "{out:?}");
    std::fs::remove_file(&young).unwrap();
    repo.git_in(&wt, ["status", "--porcelain"]);
    repo.run(["cleanup", "x"]).ok();
    assert_eq!(repo.git(["branch", "--list", "session/x"]), "");
}

#[test]
fn a_lock_a_live_git_may_hold_is_kept_and_the_git_named() {
    let repo = TestRepo::new();
    let lock = repo.root.join(".git/packed-refs.lock");
    backdate(&lock);
    // A git that runs in the repository (waiting on its input).
    let mut live = repo
        .git_cmd(&repo.root)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let out = repo.run(["list"]).ok();
    let line = out
        .stderr
        .lines()
        .find(|l| l.contains("packed-refs.lock"))
        .unwrap_or_default()
        .to_string();
    assert!(
        line.contains("is kept: a git process works in this repository: pid "),
        "{out:?}"
    );
    assert!(line.contains(&format!("pid {} (", live.id())), "{out:?}");
    assert!(lock.exists());
    drop(live.stdin.take());
    live.wait().unwrap();
    let out = repo.run(["list"]).ok();
    assert!(out.stderr.contains("removed git's lock"), "{out:?}");
    assert!(!lock.exists());
}

#[test]
fn where_the_process_facts_cannot_tell_a_lock_is_kept_saying_so_and_lsof_sees_as_proc_does() {
    let repo = TestRepo::new();
    let lock = repo.root.join(".git/packed-refs.lock");
    backdate(&lock);
    let out = crate::common::to_run(
        repo.cmd_in(&repo.root)
            .env("GIT_SESSION_PROCESS_FACTS", "existence-only")
            .args(["list"])
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("is kept: whether a git process holds it cannot be told"),
        "{out:?}"
    );
    assert!(lock.exists());
    // With ps and lsof, as on macOS: no git runs, so it goes.
    let out = crate::common::to_run(
        repo.cmd_in(&repo.root)
            .env("GIT_SESSION_PROCESS_FACTS", "tools")
            .args(["list"])
            .output()
            .unwrap(),
    );
    assert!(out.stderr.contains("removed git's lock"), "{out:?}");
    assert!(!lock.exists());
}
