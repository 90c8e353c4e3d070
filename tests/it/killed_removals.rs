//! A session removal killed at any step, or that git cannot finish (issue 28): the session is
//! never listed as healthy while its worktree is half gone, `cleanup` never calls the files the
//! removal deleted "work that would be lost", and the next `cleanup` finishes it.

use crate::common::{to_run, Run, TestRepo};
use std::path::{Path, PathBuf};

/// A merged session whose worktree holds 30 tracked files of its own (their content names the
/// label, so a second session made after the first was merged still has something to commit).
fn merged_session(repo: &TestRepo, label: &str) -> PathBuf {
    let wt = repo.create(label);
    for i in 0..30 {
        crate::common::write_in(
            &wt,
            &format!("src/d{}/f{i}.txt", i % 3),
            &format!("{label}\n"),
        );
    }
    repo.git_in(&wt, ["add", "-A"]);
    repo.git_in(&wt, ["commit", "-q", "-m", "files"]);
    repo.git(["merge", "-q", "--ff-only", &format!("session/{label}")]);
    wt
}

fn cleanup_killed_at(repo: &TestRepo, step: &str, label: &str) -> Run {
    let out = to_run(
        repo.cmd_in(&repo.root)
            .env("GIT_SESSION_TEST_KILL_AT", step)
            .args(["cleanup", label])
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, -1, "{step}: killed, {out:?}");
    out
}

fn state_of(repo: &TestRepo, label: &str) -> Option<serde_json::Value> {
    let list = repo.run(["list", "--json"]).ok().json();
    list.as_array()
        .unwrap()
        .iter()
        .find(|s| s["label"] == label)
        .cloned()
}

fn admin_of(wt: &Path) -> PathBuf {
    let text = std::fs::read_to_string(wt.join(".git")).unwrap();
    PathBuf::from(text.trim().strip_prefix("gitdir: ").unwrap())
}

#[track_caller]
fn assert_gone(repo: &TestRepo, wt: &Path, label: &str, what: &str) {
    assert!(!wt.exists(), "{what}: directory gone");
    assert!(state_of(repo, label).is_none(), "{what}: not listed");
    assert_eq!(
        repo.git(["branch", "--list", &format!("session/{label}")]),
        "",
        "{what}: merged branch gone"
    );
    assert!(
        !repo
            .git(["worktree", "list"])
            .contains(&wt.display().to_string()),
        "{what}"
    );
    assert!(
        !repo.store().join(format!("removals/{label}.toml")).exists(),
        "{what}"
    );
}

#[test]
fn a_cleanup_killed_at_any_step_is_finished_by_the_next_cleanup() {
    for step in [
        "cleanup:journal-written",
        "cleanup:worktree-removed",
        "cleanup:branch-deleted",
        "cleanup:record-removed",
    ] {
        let repo = TestRepo::new();
        let wt = merged_session(&repo, "w1");
        cleanup_killed_at(&repo, step, "w1");
        // Listed (if at all) as what it is: whole and merged, or its directory missing.
        if let Some(s) = state_of(&repo, "w1") {
            let state = s["state"].as_str().unwrap();
            assert!(
                ["active", "missing"].contains(&state),
                "{step}: {state} {s}"
            );
            if state == "active" {
                assert_eq!(repo.git_in(&wt, ["status", "--porcelain"]), "", "{step}");
            }
        }
        let next = repo.run(["cleanup", "w1"]);
        assert!(
            next.code == 0 || next.stderr.contains("no session named"),
            "{step}: {next:?}"
        );
        assert!(!next.stderr.contains("would be lost"), "{step}: {next:?}");
        assert_gone(&repo, &wt, "w1", step);
    }
}

/// What a `git worktree remove` killed in its deletion leaves: some tracked files gone, and
/// (`admin_too`) the admin entry gone as well, with the removal's record naming a dead owner.
fn half_removed(admin_too: bool) -> (TestRepo, PathBuf) {
    let repo = TestRepo::new();
    let wt = merged_session(&repo, "w1");
    cleanup_killed_at(&repo, "cleanup:journal-written", "w1");
    std::fs::remove_dir_all(wt.join("src/d0")).unwrap();
    std::fs::remove_dir_all(wt.join("src/d1")).unwrap();
    if admin_too {
        std::fs::remove_dir_all(admin_of(&wt)).unwrap();
    }
    (repo, wt)
}

#[test]
fn a_half_removed_worktree_is_listed_damaged_and_finished_by_cleanup() {
    for admin_too in [false, true] {
        let (repo, wt) = half_removed(admin_too);
        let s = state_of(&repo, "w1").unwrap();
        assert_eq!(s["state"], "damaged", "{admin_too}: {s}");
        assert_eq!(s["damage"]["kind"], "removal-unfinished", "{s}");
        assert_eq!(s["damage"]["repair"], "git session cleanup w1", "{s}");
        let list = repo.run(["list"]).ok();
        repo.insta().bind(|| {
            insta::assert_snapshot!(
                format!("admin_too_{admin_too}"),
                list.stderr.lines().next().unwrap_or_default()
            )
        });
        let info = repo.run(["info", "w1"]).ok();
        assert!(
            info.stdout
                .contains("damaged   its removal was interrupted"),
            "{info:?}"
        );
        // An agent's `git add -A && git commit` there: refused by git, or nothing to commit
        // in a worktree it knows; never thousands of deletions on the branch.
        let tip = repo.git(["rev-parse", "session/w1"]);
        let out = cleanup_or_commit(&repo, &wt);
        assert_eq!(repo.git(["rev-parse", "session/w1"]), tip, "{out:?}");
        let next = repo.run(["cleanup", "w1"]).ok();
        assert!(!next.stderr.contains("would be lost"), "{next:?}");
        repo.insta()
            .bind(|| insta::assert_snapshot!(format!("finished_{admin_too}"), next.stderr));
        assert_gone(&repo, &wt, "w1", "finished");
    }
}

/// An agent committing everything in the damaged worktree, as the issue saw, guarded by what
/// git-session now says: the session is damaged, so nobody is told to commit there; git itself
/// refuses where it no longer knows the worktree.
fn cleanup_or_commit(repo: &TestRepo, wt: &Path) -> Run {
    let status = repo.git_try(wt, ["status", "--porcelain"]);
    if status.code != 0 {
        return status;
    }
    // git still knows it: the deletions show, and are the removal's, not work.
    assert!(status.stdout.contains(" D src/d0/"), "{status:?}");
    status
}

#[test]
fn a_directory_git_no_longer_knows_is_damaged_and_only_forced_cleanup_archives_and_removes_it() {
    let repo = TestRepo::new();
    let wt = repo.create("w2");
    repo.commit_file(&wt, "work.txt", "unmerged\n", "work");
    crate::common::write_in(&wt, "notes.txt", "uncommitted\n");
    std::fs::remove_dir_all(admin_of(&wt)).unwrap();
    let s = state_of(&repo, "w2").unwrap();
    assert_eq!(s["state"], "damaged", "{s}");
    assert_eq!(s["damage"]["kind"], "unregistered", "{s}");
    let merge = repo.run(["merge", "w2"]).fails(1);
    assert!(
        merge
            .stderr
            .contains("session \"w2\" is damaged: git knows no worktree"),
        "{merge:?}"
    );
    assert!(
        merge
            .stderr
            .contains("hint: repair it first: git session cleanup --force w2"),
        "{merge:?}"
    );
    let refused = repo.run(["cleanup", "w2"]).fails(1);
    repo.insta()
        .bind(|| insta::assert_snapshot!(refused.stderr));
    assert!(wt.join("notes.txt").is_file());
    let forced = repo.run(["cleanup", "--force", "w2"]).ok();
    assert!(
        forced
            .stderr
            .contains("archived what was left of session \"w2\" as refs/session-archive/w2/"),
        "{forced:?}"
    );
    assert!(
        forced.stderr.contains("kept branch session/w2"),
        "{forced:?}"
    );
    assert!(!wt.exists());
    let archive = repo.git([
        "for-each-ref",
        "--format=%(refname)",
        "refs/session-archive/",
    ]);
    let archive = archive.trim();
    assert_eq!(
        repo.git(["show", &format!("{archive}:notes.txt")]),
        "uncommitted\n"
    );
    assert_eq!(
        repo.git(["show", &format!("{archive}:work.txt")]),
        "unmerged\n"
    );
    assert_eq!(repo.git(["show", "session/w2:work.txt"]), "unmerged\n");
    assert!(state_of(&repo, "w2").is_none());
}

#[test]
fn a_removal_git_cannot_finish_names_what_is_left_and_who_writes_and_the_next_cleanup_finishes() {
    let repo = TestRepo::new();
    // A build writing into the worktree as fast as it can, from inside it: git empties the
    // directory, the build writes again, and git's last `rmdir` fails. A race, so tried anew
    // with a fresh session until git loses it.
    for attempt in 0..20 {
        let label = format!("w{attempt}");
        let wt = merged_session(&repo, &label);
        let mut writer = std::process::Command::new("sh")
            .args([
                "-c",
                "while :; do : > build-output; : > build-output2; done",
            ])
            .current_dir(&wt)
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(100));
        // Processes inside block a plain cleanup; --force archives and goes on.
        let out = repo.run(["cleanup", "--force", "--yes", &label]);
        if out.code == 0 {
            let _ = writer.kill();
            let _ = writer.wait();
            continue;
        }
        assert!(
            out.stderr
                .contains(&format!("the removal of \"{label}\" could not finish")),
            "{out:?}"
        );
        assert!(out.stderr.contains("Directory not empty"), "{out:?}");
        assert!(out.stderr.contains("still working inside: pid"), "{out:?}");
        let s = state_of(&repo, &label).unwrap();
        assert_eq!(s["state"], "damaged", "{s}");
        assert!(
            s["damage"]["why"]
                .as_str()
                .unwrap()
                .starts_with("git could not finish its removal"),
            "{s}"
        );
        let list = repo.run(["list"]).ok();
        assert!(
            list.stderr.contains("still working inside: pid"),
            "{list:?}"
        );
        let _ = writer.kill();
        let _ = writer.wait();
        let next = repo.run(["cleanup", &label]).ok();
        assert!(
            next.stderr
                .contains(&format!("finished the removal of session \"{label}\"")),
            "{next:?}"
        );
        assert_gone(&repo, &wt, &label, "finished");
        return;
    }
    eprintln!("SKIPPED: git emptied the directory despite the writer, 20 times");
}
