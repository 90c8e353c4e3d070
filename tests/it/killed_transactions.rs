//! `merge` and `cleanup` killed at every step (issue 28): the next command leaves the repository
//! as if the transaction had finished or never started. The kill lands at an exact step through
//! the test-only stop point `GIT_SESSION_TEST_KILL_AT` (src/base/failpoint.rs).

use crate::common::{to_run, write_in, Run, TestRepo};
use std::path::PathBuf;

fn rev(repo: &TestRepo, name: &str) -> String {
    repo.git(["rev-parse", name]).trim().to_string()
}

/// A session whose merge changes, adds and deletes files of base, with base moved on meanwhile
/// (so the default strategy rewrites the session's commits and moves its branch too).
fn diverged() -> (TestRepo, PathBuf) {
    let repo = TestRepo::new();
    for i in 0..6 {
        repo.write(&format!("src/f{i}.txt"), &format!("{i}\n"));
    }
    repo.git(["add", "-A"]);
    repo.git(["commit", "-q", "-m", "files"]);
    let wt = repo.create("feat");
    write_in(&wt, "src/f1.txt", "changed by feat\n");
    write_in(&wt, "src/new.txt", "new\n");
    std::fs::remove_file(wt.join("src/f3.txt")).unwrap();
    repo.git_in(&wt, ["add", "-A"]);
    repo.git_in(&wt, ["commit", "-q", "-m", "feat work"]);
    repo.commit_file(&repo.root.clone(), "main.txt", "m\n", "on main");
    (repo, wt)
}

fn killed_at(repo: &TestRepo, step: &str, args: &[&str]) -> Run {
    let out = to_run(
        repo.cmd_in(&repo.root)
            .env("GIT_SESSION_TEST_KILL_AT", step)
            .args(args)
            .output()
            .unwrap(),
    );
    assert_eq!(out.code, -1, "{step}: killed, {out:?}");
    out
}

/// The invariants every kill must leave once the next command ran: each listed session's
/// worktree is known to git and holds every tracked file; the main worktree matches main.
#[track_caller]
fn assert_whole(repo: &TestRepo, what: &str) {
    assert_eq!(
        repo.git(["status", "--porcelain", "--untracked-files=no"]),
        "",
        "{what}: the main worktree matches main"
    );
    let list = repo.run(["list", "--json"]).ok().json();
    for s in list.as_array().unwrap() {
        let path = PathBuf::from(s["path"].as_str().unwrap());
        let state = s["state"].as_str().unwrap_or_default();
        if state == "damaged" || state == "missing" {
            continue;
        }
        let status = repo.git_try(&path, ["status", "--porcelain"]);
        assert_eq!(
            status.code,
            0,
            "{what}: git knows {}: {status:?}",
            path.display()
        );
        assert!(
            !status.stdout.lines().any(|l| l.starts_with(" D")),
            "{what}: no tracked file missing in {}: {}",
            path.display(),
            status.stdout
        );
    }
}

#[test]
fn a_merge_killed_at_any_step_is_completed_or_undone_by_the_next_command() {
    for (step, completed) in [
        ("merge:journal-written", false),
        ("merge:base-moved", true),
        ("merge:base-worktree-updated", true),
        ("merge:session-moved", true),
        ("merge:session-worktree-updated", true),
        ("merge:applied", true),
    ] {
        let (repo, wt) = diverged();
        let before = rev(&repo, "main");
        killed_at(&repo, step, &["merge", "feat"]);
        // The next command, whatever it is, finishes or undoes it, in one line.
        let next = repo.run(["list"]).ok();
        let line = if completed {
            "completed the interrupted merge of session \"feat\": main is at "
        } else {
            "rolled back the interrupted merge of session \"feat\": main had not moved"
        };
        assert!(next.stderr.contains(line), "{step}: {next:?}");
        assert!(
            !repo.store().join("merges/feat.toml").exists(),
            "{step}: the record is gone"
        );
        assert_whole(&repo, step);
        if completed {
            assert_ne!(rev(&repo, "main"), before, "{step}");
            assert_eq!(
                std::fs::read_to_string(repo.root.join("src/f1.txt")).unwrap(),
                "changed by feat\n",
                "{step}"
            );
            assert!(repo.root.join("src/new.txt").is_file(), "{step}");
            assert!(!repo.root.join("src/f3.txt").exists(), "{step}");
            // The session's branch and worktree followed the rewritten commits.
            assert_eq!(rev(&repo, "session/feat"), rev(&repo, "main"), "{step}");
            assert_eq!(repo.git_in(&wt, ["status", "--porcelain"]), "", "{step}");
        } else {
            assert_eq!(rev(&repo, "main"), before, "{step}");
            assert!(!repo.root.join("src/new.txt").exists(), "{step}");
        }
        // And the merge goes on from there: merged now (or already in), the session removed.
        let again = repo.run(["merge", "feat"]).ok();
        assert!(
            again.stderr.contains("removed session \"feat\""),
            "{step}: {again:?}"
        );
        assert!(repo.root.join("src/new.txt").is_file(), "{step}");
        assert_eq!(repo.git(["status", "--porcelain"]), "", "{step}");
    }
}

#[test]
fn a_merge_killed_after_moving_the_base_never_shows_the_merge_reversed() {
    let (repo, _wt) = diverged();
    killed_at(&repo, "merge:base-moved", &["merge", "feat"]);
    // What the issue saw: main moved, its worktree not, so git shows the merge reversed.
    let reversed = repo.git(["status", "--porcelain"]);
    assert!(reversed.contains("src/new.txt"), "{reversed}");
    let next = repo.run(["info", "feat"]).ok();
    repo.insta().bind(|| {
        insta::assert_snapshot!(next.stderr.lines().next().unwrap_or_default(), @r#"completed the interrupted merge of session "feat": main is at [SHORT]; updated the worktree [TMP]/repo and [TMP]/repo.sessions/feat"#)
    });
    assert_eq!(repo.git(["status", "--porcelain"]), "");
}

/// Before any git-session command ran, a commit in the base's worktree would commit the merge
/// reversed: its pre-commit refuses it, naming the way out; after the next command finished the
/// merge, the commit goes through with the merge kept.
#[test]
fn a_commit_in_the_base_worktree_before_the_merge_is_finished_is_refused() {
    let (repo, _wt) = diverged();
    repo.run(["hooks", "install"]).ok();
    killed_at(&repo, "merge:base-moved", &["merge", "feat"]);
    let merged = rev(&repo, "main");
    repo.write("notes.txt", "mine\n");
    repo.git(["add", "notes.txt"]);
    let refused = repo
        .git_try(&repo.root.clone(), ["commit", "-q", "-m", "notes"])
        .fails(1);
    assert!(
        refused.stderr.contains("a commit now would undo the merge"),
        "{}",
        refused.stderr
    );
    assert_eq!(rev(&repo, "main"), merged);
    // Unstaged again (the index is the pre-merge tree's once more), the next command finishes
    // the merge; then the commit goes through.
    repo.git(["reset", "-q", "notes.txt"]);
    repo.run(["list"]).ok();
    repo.git(["add", "notes.txt"]);
    repo.git_try(&repo.root.clone(), ["commit", "-q", "-m", "notes"])
        .ok();
    let files = repo.git(["show", "--name-only", "--format=", "HEAD"]);
    assert_eq!(files.trim(), "notes.txt", "only the note is committed");
    assert!(repo.root.join("src/new.txt").is_file());
}

#[test]
fn edits_made_after_the_kill_are_never_overwritten_and_the_command_that_finishes_is_named() {
    let (repo, _wt) = diverged();
    let before = rev(&repo, "main");
    killed_at(&repo, "merge:base-moved", &["merge", "feat"]);
    // Someone edits the main worktree before any git-session command ran.
    repo.write("src/f5.txt", "my edit\n");
    let next = repo.run(["list"]).ok();
    repo.insta().bind(|| {
        insta::assert_snapshot!(next.stderr.lines().next().unwrap_or_default(), @"warning: the interrupted merge of session \"feat\" moved main, but the worktree [TMP]/repo has changes made since, so it was left as it is; finish it with: git -C [TMP]/repo read-tree -m -u [SHA] [SHA]")
    });
    assert_eq!(
        std::fs::read_to_string(repo.root.join("src/f5.txt")).unwrap(),
        "my edit\n"
    );
    // Said again by the next command, until it is finished.
    let again = repo.run(["list"]).ok();
    assert!(again.stderr.contains("finish it with"), "{again:?}");
    // The command it names carries the merge in and keeps the edit.
    let after = rev(&repo, "main");
    repo.git(["read-tree", "-m", "-u", &before, &after]);
    assert_eq!(
        std::fs::read_to_string(repo.root.join("src/f5.txt")).unwrap(),
        "my edit\n"
    );
    assert!(repo.root.join("src/new.txt").is_file());
    let done = repo.run(["list"]).ok();
    assert!(
        done.stderr
            .contains("completed the interrupted merge of session \"feat\""),
        "{done:?}"
    );
    assert_eq!(repo.git(["status", "--porcelain"]), " M src/f5.txt\n");
    assert!(!repo.store().join("merges/feat.toml").exists());
}

#[test]
fn a_merge_killed_while_it_removes_the_session_leaves_the_merge_and_cleanup_finishes() {
    for step in [
        "cleanup:journal-written",
        "cleanup:worktree-removed",
        "cleanup:branch-deleted",
        "cleanup:record-removed",
    ] {
        let (repo, wt) = diverged();
        killed_at(&repo, step, &["merge", "feat"]);
        // The merge itself is whole: main holds it, its worktree matches.
        assert!(repo.root.join("src/new.txt").is_file(), "{step}");
        assert_whole(&repo, step);
        let next = repo.run(["cleanup", "feat"]);
        assert!(
            next.code == 0 || next.stderr.contains("no session named"),
            "{step}: {next:?}"
        );
        assert!(!next.stderr.contains("would be lost"), "{step}: {next:?}");
        assert!(!wt.exists(), "{step}");
        assert_eq!(repo.labels(), Vec::<String>::new(), "{step}");
        assert_eq!(repo.git(["branch", "--list", "session/feat"]), "", "{step}");
        assert!(!repo.store().join("removals/feat.toml").exists(), "{step}");
    }
}

#[test]
fn finishing_a_damaged_removal_killed_at_any_step_is_finished_by_the_next_cleanup() {
    for step in [
        "cleanup-finish:journal-written",
        "cleanup-finish:directory-removed",
    ] {
        let (repo, wt) = diverged();
        repo.run(["merge", "--keep", "feat"]).ok();
        // A removal killed while git deleted the files: half of them gone.
        killed_at(&repo, "cleanup:journal-written", &["cleanup", "feat"]);
        std::fs::remove_dir_all(wt.join("src")).unwrap();
        assert_eq!(
            repo.run(["list", "--json"]).ok().json()[0]["state"],
            "damaged",
            "{step}"
        );
        killed_at(&repo, step, &["cleanup", "feat"]);
        assert_whole(&repo, step);
        let next = repo.run(["cleanup", "feat"]);
        assert!(
            next.code == 0 || next.stderr.contains("no session named"),
            "{step}: {next:?}"
        );
        assert!(!wt.exists(), "{step}");
        assert_eq!(repo.labels(), Vec::<String>::new(), "{step}");
        assert_eq!(repo.git(["branch", "--list", "session/feat"]), "", "{step}");
        assert!(!repo.store().join("removals/feat.toml").exists(), "{step}");
    }
}

/// What a `git read-tree -m -u` killed with its merge leaves: the index lock, the index still
/// the old tree's, some files already the new tree's.
fn checkout_cut_short(repo: &TestRepo, f1: &str) {
    killed_at(repo, "merge:base-moved", &["merge", "feat"]);
    write_in(&repo.root, "src/f1.txt", f1);
    std::fs::remove_file(repo.root.join("src/f3.txt")).unwrap();
    let lock = repo.root.join(".git/index.lock");
    std::fs::write(&lock, "").unwrap();
    let old = std::process::Command::new("touch")
        .args(["-d", "1 minute ago"])
        .arg(&lock)
        .status()
        .unwrap();
    assert!(old.success());
}

#[test]
fn a_checkout_killed_part_way_with_its_merge_is_finished_and_a_file_it_cannot_explain_stops_it() {
    let (repo, _wt) = diverged();
    checkout_cut_short(&repo, "changed by feat\n");
    let next = repo.run(["list"]).ok();
    assert!(next.stderr.contains("removed git's lock"), "{next:?}");
    assert!(
        next.stderr
            .contains("completed the interrupted merge of session \"feat\""),
        "{next:?}"
    );
    assert_eq!(repo.git(["status", "--porcelain"]), "");
    assert!(repo.root.join("src/new.txt").is_file());

    // A file that is neither side's: someone's, so nothing is overwritten.
    let (repo, _wt) = diverged();
    checkout_cut_short(&repo, "half writ");
    let next = repo.run(["list"]).ok();
    assert!(next.stderr.contains("has changes made since"), "{next:?}");
    assert_eq!(
        std::fs::read_to_string(repo.root.join("src/f1.txt")).unwrap(),
        "half writ"
    );
}
