//! Cleanups racing: two cleanups or two prunes of one session at once, and cleanup racing
//! `create` of the same label. A running `create` holds the session's op lock until it has
//! handed out the path; `cleanup` never waits behind it (that removed the session right after
//! `create` printed its path) but refuses at once, naming the creator.

use crate::common::{
    assert_nothing_left, create_in_background, hostname, mark_creating, pid_host_filters, start_of,
    write_in, TestRepo,
};
use std::process::{Command, Stdio};

/// Two cleanups (or two prunes) of one session at once: one does the work, the other says the
/// session is gone or busy, cleanly: no raw git error, never "holds work that would be lost".
#[test]
fn concurrent_cleanups_and_prunes_of_one_session_are_clean() {
    for round in 0..3 {
        let repo = TestRepo::new();
        let wt = repo.create("race");
        // Enough files that removal takes a moment.
        for i in 0..300 {
            write_in(&wt, &format!("d{}/f{i}.txt", i % 10), "x\n");
        }
        repo.git_in(&wt, ["add", "-A"]);
        repo.git_in(&wt, ["commit", "-qm", "many files"]);
        repo.git(["merge", "-q", "--no-edit", "session/race"]);
        let spawn = |args: &[&str]| {
            let mut cmd = repo.cmd_in(&repo.root);
            cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
            if args[0] == "prune" {
                cmd.env(
                    "GIT_SESSION_NOW",
                    (chrono::Utc::now() + chrono::Duration::days(30)).to_rfc3339(),
                );
            }
            cmd.spawn().unwrap()
        };
        let (a, b) = if round == 2 {
            (spawn(&["prune"]), spawn(&["prune"]))
        } else {
            (spawn(&["cleanup", "race"]), spawn(&["cleanup", "race"]))
        };
        let outs = [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()];
        let mut ok = 0;
        for o in &outs {
            let err = String::from_utf8_lossy(&o.stderr);
            for bad in [
                "fatal:",
                "cannot lock ref",
                "is not a working tree",
                "would be lost",
                "git exited",
            ] {
                assert!(!err.contains(bad), "round {round}: {err}");
            }
            if o.status.success() {
                ok += 1;
            } else {
                assert!(err.contains("busy"), "round {round}: {err}");
            }
        }
        assert!(ok >= 1, "round {round}: neither succeeded");
        assert!(!wt.exists(), "round {round}: the worktree is still there");
        assert_eq!(repo.git(["branch", "--list", "session/race"]), "");
    }
}

/// A post-checkout hook that holds `create` inside its transaction until `release` exists
/// (at most 30 s, so a failed test cannot hang).
fn held_post_checkout(repo: &TestRepo) -> std::path::PathBuf {
    let release = repo.base().join("release-hook");
    let hook = repo.root.join(".git/hooks/post-checkout");
    std::fs::write(
        &hook,
        format!(
            "#!/bin/sh\ni=0\nwhile [ ! -e '{}' ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n",
            release.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    release
}

/// `create LABEL` started in the background and held in its post-checkout hook.
fn create_held(repo: &TestRepo, label: &str) -> (std::process::Child, std::path::PathBuf) {
    let release = held_post_checkout(repo);
    let (child, _) = create_in_background(repo, label);
    (child, release)
}

#[test]
fn cleanup_during_a_create_refuses_at_once_and_create_hands_out_a_path_that_exists() {
    let repo = TestRepo::new();
    let (child, release) = create_held(&repo, "racing");
    let wt = repo.sessions_dir().join("racing");
    for args in [
        vec!["cleanup", "racing"],
        vec!["cleanup", "--force", "--yes", "racing"],
    ] {
        let started = std::time::Instant::now();
        let out = repo.run(&args).fails(1);
        let took = started.elapsed();
        // Before: 60 s of waiting behind create's op lock, then "is removing it".
        assert!(took.as_secs() < 5, "{args:?} took {took:?}");
        eprintln!("{args:?} refused in {took:?}");
        assert!(
            out.stderr.contains(&format!("pid {}", child.id())),
            "{}",
            out.stderr
        );
        pid_host_filters(&repo).bind(|| {
            insta::assert_snapshot!("cleanup_during_create", out.stderr);
        });
    }
    std::fs::write(&release, "").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end(),
        wt.display().to_string()
    );
    assert!(wt.join("README.md").exists());
    let list = repo.run(["list", "--json"]).ok().json();
    assert_eq!(list[0]["state"], "active", "{list}");
    // Once the creation is done, cleanup works as ever.
    repo.run(["cleanup", "racing"]).ok();
    assert!(!wt.exists());
}

#[test]
fn cleanup_and_create_of_one_label_at_once_never_hand_out_a_removed_path() {
    // Both orders, by chance: an existing session "x" cleaned up while "x" is created again.
    // Whoever wins, a create that exits 0 printed a path that exists, on an active session.
    let repo = TestRepo::new();
    for round in 0..4 {
        repo.create("x");
        let cleanup = repo
            .cmd_in(&repo.root)
            .args(["cleanup", "x"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if round % 2 == 1 {
            std::thread::sleep(std::time::Duration::from_millis(30 * round));
        }
        let create = repo.run(["create", "x"]);
        let cleanup = cleanup.wait_with_output().unwrap();
        assert!(cleanup.status.success(), "{cleanup:?}");
        let list = repo.run(["list", "--json"]).ok().json();
        if create.code == 0 {
            let path = std::path::PathBuf::from(create.stdout.trim_end());
            assert!(path.join("README.md").exists(), "round {round}: {create:?}");
            assert_eq!(list[0]["state"], "active", "round {round}: {list}");
            repo.run(["cleanup", "x"]).ok();
        } else {
            assert!(
                create.stderr.contains("already exists")
                    || create.stderr.contains("another git-session command"),
                "round {round}: {}",
                create.stderr
            );
            assert_eq!(list.as_array().unwrap().len(), 0, "round {round}: {list}");
            // The cleanup's removal stands whole, and the failed create left nothing.
            assert!(!repo.sessions_dir().join("x").exists(), "round {round}");
            assert_eq!(
                repo.git(["for-each-ref", "--format=%(refname)", "refs/heads/session/"]),
                "",
                "round {round}"
            );
            assert!(
                !repo.root.join(".git/worktrees/x").exists(),
                "round {round}"
            );
        }
    }
}

#[test]
fn create_while_a_removal_of_its_label_holds_the_op_lock_refuses_and_leaves_nothing() {
    // The other order: a cleanup (here: a process standing in for one) holds the op lock of
    // "late" when `create late` arrives; create refuses and makes nothing, and once the holder
    // is gone (here killed with -9, its lock left behind) create goes ahead.
    let repo = TestRepo::new();
    let mut holder = Command::new("sleep")
        .arg("60")
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let start = start_of(holder.id());
    let lock = repo.store().join("sessions/late.op.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, format!("{} {start} {}\n", holder.id(), hostname())).unwrap();
    let out = repo.run(["create", "late"]).fails(1);
    pid_host_filters(&repo).bind(|| {
        insta::assert_snapshot!("create_while_op_lock_held", out.stderr);
    });
    assert_eq!(out.stdout, "");
    assert_nothing_left(&repo, "late");
    holder.kill().unwrap(); // SIGKILL
    holder.wait().unwrap();
    let wt = repo.create("late");
    assert!(wt.join("README.md").exists());
}

#[test]
fn a_create_killed_during_its_hook_is_rolled_back_by_the_cleanup_that_follows() {
    let repo = TestRepo::new();
    let (mut child, _release) = create_held(&repo, "killed");
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    // The recovery every command runs first rolls it back; the session named is then gone, and
    // cleanup says so (exit 1), after the rollback's own line.
    let out = repo.run(["cleanup", "killed"]).fails(1);
    assert!(out.stderr.contains("no session"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("rolled back the interrupted creation of session \"killed\""),
        "{}",
        out.stderr
    );
    assert_nothing_left(&repo, "killed");
    // A second cleanup finds nothing, and says so.
    repo.run(["cleanup", "killed"]).fails(1);
}

#[test]
fn a_cleanup_killed_while_create_runs_costs_the_creation_nothing() {
    let repo = TestRepo::new();
    let (child, release) = create_held(&repo, "survives");
    let mut cleanup = repo
        .cmd_in(&repo.root)
        .args(["cleanup", "survives"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(50));
    let _ = cleanup.kill(); // SIGKILL, wherever it was
    cleanup.wait().unwrap();
    std::fs::write(&release, "").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let wt = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim_end());
    assert!(wt.join("README.md").exists());
    assert_eq!(
        repo.run(["list", "--json"]).ok().json()[0]["state"],
        "active"
    );
}

#[test]
fn forced_cleanup_of_another_hosts_creation_names_the_host_and_breaks_nothing() {
    let repo = TestRepo::new();
    let wt = repo.create("remote");
    mark_creating(&repo, "remote", 4242, 17, "build-7.example");
    let out = repo.run(["cleanup", "--force", "--yes", "remote"]).fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!("cleanup_other_host_creating", out.stderr);
    });
    assert!(!out.stderr.contains("rolled back"), "{}", out.stderr);
    assert!(wt.join("README.md").exists());
    let record = std::fs::read_to_string(repo.store().join("sessions/remote.toml")).unwrap();
    assert!(record.contains("state = \"creating\""), "{record}");
}
