//! Creations that fail (past their deadline, refused, killed, interrupted, their hook failing)
//! roll back everything they made, and only what they made: an admin entry or a directory that
//! was there before stays as it was.

use crate::common::{assert_nothing_left, slow_post_checkout, TestRepo};

#[test]
fn create_past_its_deadline_rolls_back_everything() {
    let repo = TestRepo::new();
    slow_post_checkout(&repo, 60);
    let started = std::time::Instant::now();
    let out = repo.run(["create", "slow", "--timeout", "2s"]).fails(1);
    let took = started.elapsed();
    assert!(took.as_secs() < 20, "took {took:?}");
    repo.insta().bind(|| insta::assert_snapshot!(out.stderr, @r#"
    error: creating session "slow" took longer than 2s; rolled back
    hint: a slow post-checkout hook is the usual cause; raise the deadline with --timeout or create_timeout
    "#));
    assert_eq!(out.stdout, "");
    assert_nothing_left(&repo, "slow");
    // The deadline from configuration works the same way.
    repo.write(".git-session.toml", "create_timeout = \"2s\"\n");
    repo.run(["create", "slow2"]).fails(1);
    assert_nothing_left(&repo, "slow2");
    let audit = std::fs::read_to_string(repo.store().join("audit.log")).unwrap();
    assert_eq!(
        audit.matches("\"event\":\"rollback\"").count(),
        2,
        "{audit}"
    );
}

#[test]
fn create_refuses_missing_base_existing_directory_and_existing_branch() {
    let repo = TestRepo::new();
    let out = repo
        .run(["create", "a", "--base", "no-such-branch"])
        .fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr, @r#"
    error: base "no-such-branch" does not name a commit
    hint: pass an existing branch, tag or commit with --base REV
    "#)
    });
    assert_nothing_left(&repo, "a");

    std::fs::create_dir_all(repo.sessions_dir().join("b")).unwrap();
    std::fs::write(repo.sessions_dir().join("b/keep.txt"), "mine").unwrap();
    let out = repo.run(["create", "b"]).fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr, @r"
    error: [TMP]/repo.sessions/b already exists and is not an empty directory
    hint: choose another label or --path, or remove that directory first
    ")
    });
    assert_eq!(
        std::fs::read_to_string(repo.sessions_dir().join("b/keep.txt")).unwrap(),
        "mine"
    );
    std::fs::remove_dir_all(repo.sessions_dir().join("b")).unwrap();

    repo.git(["branch", "session/c"]);
    let before = repo.git(["rev-parse", "session/c"]);
    let out = repo.run(["create", "c"]).fails(1);
    assert!(
        out.stderr.contains("branch session/c already exists"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.git(["rev-parse", "session/c"]), before);
    assert!(!repo.sessions_dir().join("c").exists());
    assert!(!repo.store().join("sessions/c.toml").exists());
}

#[test]
fn create_killed_mid_checkout_is_rolled_back_by_the_next_command() {
    let repo = TestRepo::new();
    // A duration no other test uses, to find the hook's process below.
    slow_post_checkout(&repo, 37);
    let mut child = repo
        .cmd_in(&repo.root)
        .args(["create", "doomed"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Wait until git is inside the checkout (the hook runs after the files are written).
    let wt = repo.sessions_dir().join("doomed");
    let started = std::time::Instant::now();
    while !wt.join("README.md").exists() {
        assert!(started.elapsed().as_secs() < 20, "checkout never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    let state = std::fs::read_to_string(repo.store().join("sessions/doomed.toml")).unwrap();
    assert!(state.contains("state = \"creating\""), "{state}");
    // Any command notices; `list` must never show it as usable.
    let out = repo.run(["list", "--json"]).ok();
    assert!(
        out.stderr
            .contains("rolled back the interrupted creation of session \"doomed\""),
        "{}",
        out.stderr
    );
    assert_eq!(out.json().as_array().unwrap().len(), 0);
    assert_nothing_left(&repo, "doomed");
    // The dead creator's `git worktree add` and its hook were stopped before the rollback.
    let hooks: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.trim() == "sleep 37")
        .collect();
    assert!(hooks.is_empty(), "the worker's hook still runs: {hooks:?}");
}

#[test]
fn interrupted_create_rolls_back_and_kills_the_checkout() {
    let repo = TestRepo::new();
    slow_post_checkout(&repo, 30);
    let child = repo
        .cmd_in(&repo.root)
        .args(["create", "ctrl-c"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let wt = repo.sessions_dir().join("ctrl-c");
    let started = std::time::Instant::now();
    while !wt.join("README.md").exists() {
        assert!(started.elapsed().as_secs() < 20, "checkout never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert!(started.elapsed().as_secs() < 20);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error: creating session \"ctrl-c\" was interrupted; rolled back")
            && !stderr.contains("in part"),
        "{stderr}"
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_nothing_left(&repo, "ctrl-c");
}

/// Rollback removes only the admin entry its own creation made: an entry that existed before
/// `create` ran (here a person's worktree registered at the same path, its directory gone, plain
/// or locked) survives a failed create, and so does its branch.
#[test]
fn rollback_never_removes_an_admin_entry_it_did_not_make() {
    for locked in [false, true] {
        let repo = TestRepo::new();
        let target = repo.sessions_dir().join("x");
        repo.git([
            "worktree",
            "add",
            "-q",
            "-b",
            "persons-branch",
            target.to_str().unwrap(),
        ]);
        if locked {
            repo.git([
                "worktree",
                "lock",
                "--reason",
                "mine",
                target.to_str().unwrap(),
            ]);
        }
        std::fs::remove_dir_all(&target).unwrap();
        let entries_before = std::fs::read_dir(repo.root.join(".git/worktrees"))
            .unwrap()
            .count();
        let out = repo.run(["create", "x"]).fails(1);
        assert!(out.stderr.contains("rolled back"), "{}", out.stderr);
        let entries_after = std::fs::read_dir(repo.root.join(".git/worktrees"))
            .unwrap()
            .count();
        assert_eq!(
            entries_before, entries_after,
            "locked={locked}: {}",
            out.stderr
        );
        assert!(
            repo.git(["worktree", "list", "--porcelain"])
                .contains(target.to_str().unwrap()),
            "locked={locked}"
        );
        assert!(!repo.git(["branch", "--list", "persons-branch"]).is_empty());
        assert!(!repo.store().join("sessions/x.toml").exists());
    }
}

/// An empty existing target directory is accepted, as git accepts it; a failed creation empties
/// it and leaves it. A failing post-checkout hook is named, with its exit status and all of what
/// git and the hook wrote.
#[test]
fn empty_target_directory_and_a_failing_post_checkout_hook() {
    let repo = TestRepo::new();
    let target = repo.sessions_dir().join("e");
    std::fs::create_dir_all(&target).unwrap();
    let out = repo.run(["create", "e"]).ok();
    assert_eq!(out.stdout.trim(), target.to_str().unwrap());
    assert!(target.join("README.md").exists());

    let hook = repo.root.join(".git/hooks/post-checkout");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho 'hook says: no' >&2\necho 'second line' >&2\nexit 3\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let target = repo.sessions_dir().join("f");
    std::fs::create_dir_all(&target).unwrap();
    let out = repo.run(["create", "f"]).fails(1);
    assert!(
        out.stderr.contains("git worktree add exited with 3"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("git: hook says: no"), "{}", out.stderr);
    assert!(out.stderr.contains("git: second line"), "{}", out.stderr);
    assert!(
        out.stderr.contains("the post-checkout hook") && out.stderr.contains("exit status 3"),
        "{}",
        out.stderr
    );
    // Emptied and left, as it was found.
    assert!(target.is_dir());
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0);
    assert!(!repo.store().join("sessions/f.toml").exists());
    assert_eq!(repo.git(["branch", "--list", "session/f"]), "");
}

#[test]
fn an_admin_entry_a_failed_create_rightly_left_alone_is_not_reported_as_left_over() {
    let repo = TestRepo::new();
    // A person's worktree at the path the session would take, its directory deleted by hand:
    // git still has its admin entry and refuses the new worktree there.
    let wt = repo.sessions_dir().join("y");
    repo.git(["worktree", "add", "-q", "--detach", wt.to_str().unwrap()]);
    std::fs::remove_dir_all(&wt).unwrap();
    let out = repo.run(["create", "y"]).fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!("create_leaves_foreign_entry_alone", out.stderr);
    });
    assert!(!out.stderr.contains("in part"), "{}", out.stderr);
    // That entry is the person's: still there, untouched; nothing of the session is.
    assert!(repo.root.join(".git/worktrees/y/gitdir").exists());
    assert!(!repo.store().join("sessions/y.toml").exists());
    assert_eq!(
        repo.git(["for-each-ref", "--format=%(refname)", "refs/heads/session/"]),
        ""
    );
}
