//! A session `create` finished whose record was lost (a machine crash: it is written without
//! fsync) or damaged and set aside: the next command registers it again from git's state, with
//! the dates git kept, and never takes over a worktree `create` did not make.

use crate::common::{to_run, TestRepo};

/// A session `create` finished, whose record a machine crash lost (it is written without
/// fsync) or that was damaged and set aside: git's state says all the record must, so the next
/// command registers it again, and `list`, `cleanup` and `prune` see it as before. A person's
/// own worktree on a session-like branch is never taken over.
#[test]
fn a_finished_session_whose_record_was_lost_is_registered_again_from_git() {
    for damage in ["missing", "empty", "garbage"] {
        let repo = TestRepo::new();
        let wt = repo.create("kept");
        repo.git_in(&wt, ["commit", "-q", "--allow-empty", "-m", "work"]);
        std::fs::write(wt.join("notes.txt"), "uncommitted\n").unwrap();
        let record = repo.store().join("sessions/kept.toml");
        let before: toml::Value =
            toml::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
        match damage {
            "missing" => std::fs::remove_file(&record).unwrap(),
            "empty" => std::fs::write(&record, "").unwrap(),
            _ => std::fs::write(&record, [0xffu8, 0, 1, b'=', 7]).unwrap(),
        }

        let out = repo.run(["list", "--json"]).ok();
        assert!(
            out.stderr.contains(&format!(
                "registered session \"kept\" again from its worktree {}: its record was lost",
                wt.display()
            )),
            "{damage}: {}",
            out.stderr
        );
        let rows = out.json();
        let row = &rows.as_array().unwrap()[0];
        assert_eq!(row["label"], "kept", "{damage}");
        assert_eq!(row["state"], "active", "{damage}");
        assert_eq!(row["ahead"], 1, "{damage}: {row}");
        assert_eq!(row["dirty"], 1, "{damage}: {row}");
        let after: toml::Value =
            toml::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
        for key in ["branch", "path", "base", "base_commit", "custom_path"] {
            assert_eq!(after.get(key), before.get(key), "{damage}: {key}");
        }
        // Managed again: cleanup refuses to lose the work, and says why.
        let refused = repo.run(["cleanup", "kept"]).fails(1);
        assert!(refused.stderr.contains("uncommitted"), "{}", refused.stderr);
        // Once.
        let again = repo.run(["info", "kept"]).ok();
        assert!(
            !again.stderr.contains("again"),
            "{damage}: {}",
            again.stderr
        );
        let audit = std::fs::read_to_string(repo.store().join("audit.log")).unwrap();
        assert!(audit.contains("\"readopt\""), "{audit}");
    }

    // Another session attached to the worktree does not stand in for the one that made it.
    let repo = TestRepo::new();
    let wt = repo.create("maker");
    repo.run_in(&wt, ["create", "--attach", "guest"]).ok();
    std::fs::remove_file(repo.store().join("sessions/maker.toml")).unwrap();
    let out = repo.run(["list", "--json"]).ok();
    assert!(
        out.stderr.contains("registered session \"maker\" again"),
        "{}",
        out.stderr
    );
    assert_eq!(repo.labels(), ["guest", "maker"]);

    // Not made by `create`: a person's worktree on session/mine, and one on a branch that is no
    // session's, are left as they are.
    let repo = TestRepo::new();
    for (name, branch) in [("mine", "session/mine"), ("feature", "feature")] {
        let wt = repo.sessions_dir().join(name);
        repo.git(["worktree", "add", "-q", "-b", branch, wt.to_str().unwrap()]);
    }
    let out = repo.run(["list", "--json"]).ok();
    assert!(!out.stderr.contains("registered"), "{}", out.stderr);
    assert_eq!(out.json().as_array().unwrap().len(), 0);
}

/// A session whose record was lost is registered again with the dates git kept: created when
/// its branch was, last active when its index or HEAD reflog last changed. Idle for 9 days, it
/// stays idle: its lapsed claim does not come back into force, and prune removes it.
#[test]
fn a_lost_record_is_registered_again_with_its_true_dates() {
    let repo = crate::common::guarded();
    repo.create("idle");
    repo.run_as("idle", ["claim", "src/config.rs"]).ok();
    repo.attach("B");
    std::fs::remove_file(repo.store().join("sessions/idle.toml")).unwrap();
    let later = (chrono::Utc::now() + chrono::Duration::days(9)).to_rfc3339();

    let out = to_run(
        repo.cmd_in(&repo.root)
            .env("GIT_SESSION_NOW", &later)
            .args(["list", "--json"])
            .output()
            .unwrap(),
    );
    assert!(
        out.stderr.contains("registered session \"idle\" again"),
        "{}",
        out.stderr
    );
    let rows = out.json();
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["label"] == "idle")
        .unwrap();
    assert_eq!(row["state"], "idle", "{row}");
    assert_eq!(row["live"], false, "{row}");
    // `git worktree add -b` made the branch under the fixed committer date.
    assert!(
        row["created"]
            .as_str()
            .unwrap()
            .starts_with("2026-01-01T00:00:00"),
        "{row}"
    );
    let last: chrono::DateTime<chrono::Utc> =
        row["last_activity"].as_str().unwrap().parse().unwrap();
    assert!(
        chrono::Utc::now() - last < chrono::Duration::hours(1),
        "last activity is the worktree's, not the readoption's: {row}"
    );

    // Its claim lapsed with its activity: B's commit of that path goes through.
    crate::common::write_in(&repo.root, "src/config.rs", "B's change\n");
    repo.git(["add", "-A"]);
    let commit = to_run(
        repo.git_cmd_as(&repo.root, "B")
            .env("GIT_SESSION_NOW", &later)
            .args(["commit", "-q", "-m", "B over a lapsed claim"])
            .output()
            .unwrap(),
    );
    assert_eq!(commit.code, 0, "{commit:?}");
    assert_eq!(repo.head_subject(&repo.root), "B over a lapsed claim");

    // And prune still removes it: merged (no commits of its own), clean, idle 9 days.
    let pruned = to_run(
        repo.cmd_in(&repo.root)
            .env("GIT_SESSION_NOW", &later)
            .args(["prune"])
            .output()
            .unwrap(),
    );
    assert!(pruned.stdout.contains("removed idle"), "{pruned:?}");
    assert!(!repo.sessions_dir().join("idle").exists());
}
