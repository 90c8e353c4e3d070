use crate::common;
use common::{assert_nothing_left, slow_post_checkout, TestRepo};

#[test]
fn create_prints_the_path_alone_and_lists_it_active() {
    let repo = TestRepo::new();
    let out = repo.run(["create", "fix-login"]).ok();
    let path = repo.sessions_dir().join("fix-login");
    assert_eq!(out.stdout, format!("{}\n", path.display()));
    assert!(path.join("README.md").is_file());
    assert_eq!(
        repo.git_in(&path, ["symbolic-ref", "HEAD"]).trim(),
        "refs/heads/session/fix-login"
    );
    // `cd "$(git session create x)"` as a shell would do it.
    let shell = repo
        .git_cmd(&repo.root)
        .args(["session", "create", "second"])
        .output()
        .unwrap();
    assert!(
        shell.status.success(),
        "{}",
        String::from_utf8_lossy(&shell.stderr)
    );
    let list = repo.run(["list", "--json"]).ok().json();
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    let row = rows.iter().find(|r| r["label"] == "fix-login").unwrap();
    assert_eq!(row["state"], "active");
    assert_eq!(row["live"], true);
    assert_eq!(row["branch"], "session/fix-login");
    assert_eq!(row["merged"], "ancestor");
    assert_eq!(row["dirty"], 0);
}

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
fn bad_labels_are_refused_before_anything_is_created() {
    let repo = TestRepo::new();
    let long = "x".repeat(300);
    for label in [
        "../x",
        "/abs",
        "-rf",
        "--orphan",
        "",
        "..",
        "a..b",
        "x.lock",
        "@",
        "HEAD",
        "a b",
        "a\nb",
        long.as_str(),
    ] {
        let out = repo.run(["create", "--", label]);
        assert_eq!(out.code, 2, "{label:?} was accepted: {out:?}");
        assert!(
            out.stderr.starts_with("error: invalid label"),
            "{label:?}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains("hint: a label is 1 to 64 characters"),
            "{}",
            out.stderr
        );
        assert_eq!(out.stderr.lines().count(), 2, "{label:?}: {}", out.stderr);
    }
    assert!(!repo.sessions_dir().exists());
    assert!(
        !repo.store().join("sessions").exists()
            || std::fs::read_dir(repo.store().join("sessions"))
                .unwrap()
                .next()
                .is_none()
    );
    assert_eq!(repo.git(["for-each-ref", "refs/heads/session/"]), "");
    // And without `--`, an option-looking label is clap's to refuse, also with exit 2.
    repo.run(["create", "-rf"]).fails(2);
}

#[test]
fn sixteen_creates_at_once_all_succeed() {
    let repo2 = TestRepo::new();
    let spawned: Vec<_> = (0..16)
        .map(|i| {
            repo2
                .cmd_in(&repo2.root)
                .args(["create", &format!("par-{i}")])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in spawned {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let list = repo2.run(["list", "--json"]).ok().json();
    let mut labels: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap().to_string())
        .collect();
    labels.sort();
    let mut want: Vec<String> = (0..16).map(|i| format!("par-{i}")).collect();
    want.sort();
    assert_eq!(labels, want);
    let worktrees = repo2.git(["worktree", "list", "--porcelain"]);
    assert_eq!(
        worktrees
            .matches("\nbranch refs/heads/session/par-")
            .count(),
        16,
        "{worktrees}"
    );
    assert_eq!(worktrees.matches("worktree ").count(), 17);
    assert!(!worktrees.contains("locked"), "{worktrees}");
}

#[test]
fn corrupt_state_file_is_set_aside_and_the_rest_still_listed() {
    let repo = TestRepo::new();
    repo.create("good");
    repo.create("bad");
    let file = repo.store().join("sessions/bad.toml");
    std::fs::write(&file, "version = 1\nlabel = \"bad\n").unwrap();
    let out = repo.run(["list", "--json"]).ok();
    let rows = out.json();
    // The session itself is not lost with its record: git's state registers it again.
    let labels: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["bad", "good"]);
    assert!(
        out.stderr
            .contains("registered session \"bad\" again from its worktree"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("sessions/bad.toml does not parse"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("set aside as"), "{}", out.stderr);
    let aside: Vec<_> = std::fs::read_dir(repo.store().join("sessions"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| n.starts_with("bad.toml.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1);
    // Nothing was lost: the bad file's bytes are kept.
    let kept = std::fs::read_to_string(repo.store().join("sessions").join(&aside[0])).unwrap();
    assert_eq!(kept, "version = 1\nlabel = \"bad\n");
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

#[test]
fn create_copies_configured_files_and_runs_setup_only_once_approved() {
    let repo = TestRepo::new();
    repo.write(".gitignore", ".env\n");
    repo.git(["add", ".gitignore"]);
    repo.git(["commit", "-qm", "ignore .env"]);
    repo.write(".env", "SECRET=1\n");
    repo.write(
        ".git-session.toml",
        "[create]\ncopy = [\".env\"]\nrun = [\"echo ran > setup-ran.txt\"]\n",
    );
    // No terminal, no approval: the repository's commands do not run.
    let out = repo.run(["create", "first"]).ok();
    let first = repo.sessions_dir().join("first");
    assert_eq!(out.stdout.trim_end(), first.display().to_string());
    assert_eq!(
        std::fs::read_to_string(first.join(".env")).unwrap(),
        "SECRET=1\n"
    );
    assert!(!first.join("setup-ran.txt").exists());
    assert!(
        out.stderr.contains("are not approved, so they did not run: `echo ran > setup-ran.txt`")
            && out
                .stderr
                .contains("hint: read them, then run them in this session with: git session setup first --approve-run"),
        "{}",
        out.stderr
    );
    // Approved once, they run, and keep running for the same list.
    let out = repo.run(["create", "second", "--approve-run"]).ok();
    assert_eq!(
        out.stdout.lines().count(),
        1,
        "setup output leaked to stdout: {}",
        out.stdout
    );
    assert!(repo.sessions_dir().join("second/setup-ran.txt").exists());
    repo.run(["create", "third"]).ok();
    assert!(repo.sessions_dir().join("third/setup-ran.txt").exists());
    // A changed list needs approval again.
    repo.write(
        ".git-session.toml",
        "[create]\nrun = [\"echo changed > changed.txt\"]\n",
    );
    repo.run(["create", "fourth"]).ok();
    assert!(!repo.sessions_dir().join("fourth/changed.txt").exists());
    // The user's own configuration needs no approval.
    repo.write(".git-session.toml", "");
    let user = repo.home.join(".config/git-session");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(
        user.join("config.toml"),
        "[create]\nrun = [\"echo mine > mine.txt\"]\n",
    )
    .unwrap();
    repo.run(["create", "fifth"]).ok();
    assert!(repo.sessions_dir().join("fifth/mine.txt").exists());
}

#[test]
fn fifty_concurrent_updates_of_one_session_all_survive() {
    let repo = TestRepo::new();
    repo.create("busy");
    let children: Vec<_> = (0..50)
        .map(|i| {
            repo.cmd_in(&repo.root)
                .env("GIT_SESSION", "busy")
                .args(["claim", &format!("src/file{i:02}.rs")])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let record = std::fs::read_to_string(repo.store().join("claims/busy.toml")).unwrap();
    for i in 0..50 {
        assert!(
            record.contains(&format!("path = \"src/file{i:02}.rs\"")),
            "claim {i} lost:\n{record}"
        );
    }
    let claims = repo.run(["claims", "--json"]).ok().json();
    assert_eq!(claims.as_array().unwrap().len(), 50);
    // No lock or temporary file is left behind.
    let leftovers: Vec<_> = ["sessions", "claims"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(repo.store().join(dir)).unwrap())
        .flatten()
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| !n.ends_with(".toml"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
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

/// `core.worktree` naming a directory with no `.git` in it (the work tree apart from the
/// repository): git run there finds no repository, so porcelain runs where git finds it; the
/// session goes next to the work tree, and create and cleanup both work.
#[test]
fn core_worktree_apart_from_the_repository() {
    let repo = TestRepo::new();
    let x = repo.base().join("x");
    let y = repo.base().join("y");
    std::fs::create_dir_all(&y).unwrap();
    repo.git_in(
        &repo.base(),
        ["init", "-q", "-b", "main", x.to_str().unwrap()],
    );
    repo.git_in(&x, ["config", "core.worktree", y.to_str().unwrap()]);
    common::write_in(&y, "file.txt", "y\n");
    repo.git_in(&x, ["add", "file.txt"]);
    repo.git_in(&x, ["commit", "-qm", "first"]);
    let out = repo.run_in(&x, ["create", "s1"]).ok();
    let wt = std::path::PathBuf::from(out.stdout.trim());
    assert_eq!(wt, repo.base().join("y.sessions/s1"));
    assert!(wt.join("file.txt").exists());
    assert_eq!(
        repo.git_in(&wt, ["rev-parse", "--show-toplevel"]).trim(),
        wt.to_str().unwrap()
    );
    repo.run_in(&x, ["cleanup", "s1"]).ok();
    assert!(!wt.exists());
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
