//! `merge` as permissive as git where nothing can be lost (issue 30 item 6): uncommitted changes
//! in the base's worktree to paths the merge does not change let it through and stay exactly as
//! they were (git's rule for `read-tree -m -u`), also when a killed merge is completed; a
//! process standing in the session's worktree holds back only the removal after the merge.

use crate::common::{to_run, write_in, TestRepo};
use std::process::Command;

fn rev(repo: &TestRepo, name: &str) -> String {
    repo.git(["rev-parse", name]).trim().to_string()
}

/// main with two files; a session changing `src/a.txt` and adding `src/new.txt`, with main
/// moved on meanwhile (so the rebase rewrites it and both worktrees move).
fn setup() -> (TestRepo, std::path::PathBuf) {
    let repo = TestRepo::new();
    repo.write("src/a.txt", "a\n");
    repo.write("notes.txt", "notes\n");
    repo.git(["add", "-A"]);
    repo.git(["commit", "-q", "-m", "files"]);
    let wt = repo.create("feat");
    write_in(&wt, "src/a.txt", "a by feat\n");
    write_in(&wt, "src/new.txt", "new\n");
    repo.git_in(&wt, ["add", "-A"]);
    repo.git_in(&wt, ["commit", "-q", "-m", "feat work"]);
    repo.commit_file(&repo.root.clone(), "main.txt", "m\n", "on main");
    (repo, wt)
}

/// Unrelated uncommitted work in main's worktree: a staged edit, an unstaged edit, an untracked
/// file.
fn unrelated_dirt(repo: &TestRepo) {
    repo.write("notes.txt", "staged edit\n");
    repo.git(["add", "notes.txt"]);
    repo.write("README.md", "unstaged edit\n");
    repo.write("scratch.txt", "untracked\n");
}

#[track_caller]
fn assert_dirt_kept(repo: &TestRepo) {
    assert_eq!(
        repo.git(["status", "--porcelain"]),
        " M README.md\nM  notes.txt\n?? scratch.txt\n"
    );
    assert_eq!(
        std::fs::read_to_string(repo.root.join("notes.txt")).unwrap(),
        "staged edit\n"
    );
    assert_eq!(
        std::fs::read_to_string(repo.root.join("README.md")).unwrap(),
        "unstaged edit\n"
    );
    assert_eq!(
        repo.git(["diff", "--cached", "--name-only"]),
        "notes.txt\n",
        "the staged edit is still staged"
    );
}

#[test]
fn unrelated_uncommitted_changes_in_the_base_do_not_block_and_stay_as_they_were() {
    let (repo, wt) = setup();
    unrelated_dirt(&repo);
    let out = repo.run(["merge", "feat"]).ok();
    assert!(
        out.stderr.contains("merged session \"feat\" into main"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(repo.root.join("src/a.txt")).unwrap(),
        "a by feat\n"
    );
    assert!(repo.root.join("src/new.txt").is_file());
    assert_dirt_kept(&repo);
    assert!(!wt.exists());
}

#[test]
fn a_change_or_a_file_in_the_merge_s_way_refuses_and_changes_nothing() {
    for (what, dirty) in [
        ("a staged edit", ("src/a.txt", true)),
        ("an unstaged edit", ("src/a.txt", false)),
        (
            "an untracked file where the merge adds one",
            ("src/new.txt", false),
        ),
    ] {
        let (repo, wt) = setup();
        unrelated_dirt(&repo);
        repo.write(dirty.0, "mine\n");
        if dirty.1 {
            repo.git(["add", dirty.0]);
        }
        let (main, tip) = (rev(&repo, "main"), rev(&repo, "session/feat"));
        let status = repo.git(["status", "--porcelain"]);
        let out = repo.run(["merge", "feat"]).fails(1);
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(
            lines[0],
            "error: the worktree of main has uncommitted changes in files the merge changes; \
             nothing was merged",
            "{what}"
        );
        assert_eq!(
            lines[2],
            format!("  {}", dirty.0),
            "{what}: only it is named"
        );
        assert_eq!(lines.len(), 4, "{what}: {}", out.stderr);
        assert_eq!(rev(&repo, "main"), main, "{what}");
        assert_eq!(rev(&repo, "session/feat"), tip, "{what}");
        assert_eq!(repo.git(["status", "--porcelain"]), status, "{what}");
        assert_eq!(
            std::fs::read_to_string(repo.root.join(dirty.0)).unwrap(),
            "mine\n"
        );
        assert!(wt.is_dir());
    }
}

#[test]
fn a_merge_killed_after_the_base_moved_is_completed_around_unrelated_changes() {
    for step in [
        "merge:base-moved",
        "merge:base-worktree-updated",
        "merge:session-moved",
    ] {
        let (repo, wt) = setup();
        unrelated_dirt(&repo);
        let out = to_run(
            repo.cmd_in(&repo.root)
                .env("GIT_SESSION_TEST_KILL_AT", step)
                .args(["merge", "feat"])
                .output()
                .unwrap(),
        );
        assert_eq!(out.code, -1, "{step}: killed, {out:?}");
        let list = repo.run(["list"]).ok();
        assert!(
            list.stderr
                .contains("completed the interrupted merge of session \"feat\""),
            "{step}: {}",
            list.stderr
        );
        assert_eq!(
            std::fs::read_to_string(repo.root.join("src/a.txt")).unwrap(),
            "a by feat\n",
            "{step}"
        );
        assert!(repo.root.join("src/new.txt").is_file(), "{step}");
        assert_dirt_kept(&repo);
        assert_eq!(rev(&repo, "session/feat"), rev(&repo, "main"), "{step}");
        assert_eq!(repo.git_in(&wt, ["status", "--porcelain"]), "", "{step}");
    }
}

#[test]
fn a_process_inside_the_session_holds_back_only_its_removal() {
    let (repo, wt) = setup();
    let mut sleeper = Command::new("sleep")
        .arg("60")
        .current_dir(&wt)
        .spawn()
        .unwrap();
    let out = repo.run(["merge", "feat"]);
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    let out = out.ok();
    let stderr = out.stderr.replace(&sleeper.id().to_string(), "[PID]");
    repo.insta().bind(|| insta::assert_snapshot!(stderr));
    assert_eq!(
        repo.git(["log", "--format=%s", "main"]),
        "feat work\non main\nfiles\ninitial\n"
    );
    assert!(wt.is_dir(), "kept");
    assert_eq!(repo.labels(), vec!["feat".to_string()]);
    assert_eq!(rev(&repo, "session/feat"), rev(&repo, "main"));
    // Once it has left, the hint's command removes it.
    repo.run(["cleanup", "feat"]).ok();
    assert!(!wt.exists());
}
