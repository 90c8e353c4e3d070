//! Another process's `git worktree add` caught half way: its admin entry under
//! `.git/worktrees/` exists with its files only partly written. Every git command that looks at
//! all worktrees dies on it ("failed to read .git/worktrees/x/commondir: Success", "bad object
//! worktrees/x/HEAD"), which is how a merge or a create beside any other add failed. The entries
//! here are made exactly as git leaves them at each point of its write order, and finished (as
//! git would) a moment later by another thread; every command must wait it out and succeed, and
//! a command beside an entry that is never finished must fail with git's own words, not hang.

use crate::common::{write_in, TestRepo};
use crate::merge_check::{assert_no_scratch, user_config};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How far git got with the entry's files: it writes `locked`, `gitdir`, `HEAD` (a null
/// placeholder) and `commondir`, each by creating it and then writing it.
#[derive(Clone, Copy, Debug)]
enum Point {
    /// `commondir` created, not yet written.
    EmptyCommondir,
    /// `HEAD` still the placeholder, `commondir` not yet there.
    PlaceholderHead,
}

/// A worktree entry `id` that `git worktree add` of `main` has half written, at `point`; when
/// `finish_after` is given, a thread finishes it then (the files git writes last, the worktree's
/// `.git` file, the lock gone), as the real add would.
fn half_written(
    repo: &TestRepo,
    id: &str,
    point: Point,
    finish_after: Option<Duration>,
) -> PathBuf {
    let admin = repo.root.join(".git/worktrees").join(id);
    let checkout = repo.base().join(format!("other-{id}"));
    std::fs::create_dir_all(&admin).unwrap();
    std::fs::write(admin.join("locked"), "initializing").unwrap();
    std::fs::write(
        admin.join("gitdir"),
        format!("{}\n", checkout.join(".git").display()),
    )
    .unwrap();
    std::fs::write(admin.join("HEAD"), format!("{}\n", "0".repeat(40))).unwrap();
    if let Point::EmptyCommondir = point {
        std::fs::write(admin.join("commondir"), "").unwrap();
    }
    let tip = repo.git(["rev-parse", "main"]).trim().to_string();
    if let Some(after) = finish_after {
        let admin = admin.clone();
        let checkout = checkout.clone();
        std::thread::spawn(move || {
            std::thread::sleep(after);
            finish(&admin, &checkout, &tip);
        });
    }
    admin
}

fn finish(admin: &Path, checkout: &Path, tip: &str) {
    std::fs::create_dir_all(checkout).unwrap();
    std::fs::write(
        checkout.join(".git"),
        format!("gitdir: {}\n", admin.display()),
    )
    .unwrap();
    std::fs::write(admin.join("commondir"), "../..\n").unwrap();
    std::fs::write(admin.join("HEAD"), format!("{tip}\n")).unwrap();
    std::fs::remove_file(admin.join("locked")).unwrap();
}

/// Waits until the other add of entry `id` is finished (its lock gone, the last thing it
/// removes): the test's own plain git commands have no retry, and a command of ours may not have
/// needed to wait (a git that passes over the half-written entry).
fn settled(repo: &TestRepo, id: &str) {
    let lock = repo.root.join(".git/worktrees").join(id).join("locked");
    let since = Instant::now();
    while lock.exists() {
        assert!(
            since.elapsed() < Duration::from_secs(10),
            "the other add never finished"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Both points, each with a command the sessions need while the other add runs.
fn beside_an_add(run: impl Fn(&TestRepo, Point)) {
    for point in [Point::EmptyCommondir, Point::PlaceholderHead] {
        run(&TestRepo::new(), point);
    }
}

/// First, that the entry is a real hazard: git itself dies on it.
#[test]
fn git_itself_dies_on_each_half_written_entry() {
    beside_an_add(|repo, point| {
        half_written(repo, "other", point, None);
        let out = repo.git_try(&repo.root, ["rev-list", "--all"]);
        assert_eq!(out.code, 128, "{point:?}: {}", out.stderr);
        assert!(out.stderr.contains("worktrees/other/"), "{}", out.stderr);
    });
}

#[test]
fn create_waits_out_another_add_and_leaves_no_stray_branch() {
    beside_an_add(|repo, point| {
        half_written(repo, "other", point, Some(Duration::from_millis(300)));
        let wt = repo.create("a");
        assert!(wt.join("README.md").is_file(), "{point:?}");
        settled(repo, "other");
        assert_eq!(
            repo.git(["for-each-ref", "--format=%(refname)", "refs/heads/session"]),
            "refs/heads/session/a\n"
        );
        assert_eq!(repo.labels(), vec!["a"]);
    });
}

#[test]
fn merge_with_a_check_waits_out_another_add() {
    beside_an_add(|repo, point| {
        user_config(repo, "[merge]\ncheck = [\"test -f b.txt\"]\n");
        let wt = repo.create("feat");
        repo.commit_file(&wt, "b.txt", "b\n", "add b");
        repo.commit_file(&repo.root.clone(), "a.txt", "a\n", "add a");
        half_written(repo, "other", point, Some(Duration::from_millis(300)));
        let out = repo.run(["merge", "feat"]).ok();
        assert!(
            out.stderr.contains("running: test -f b.txt"),
            "{}",
            out.stderr
        );
        assert!(repo.root.join("b.txt").is_file(), "{point:?}");
        assert!(!wt.exists());
        settled(repo, "other");
        assert_no_scratch(repo);
    });
}

#[test]
fn cleanup_and_list_wait_out_another_add() {
    beside_an_add(|repo, point| {
        let wt = repo.create("done");
        let kept = repo.create("kept");
        half_written(repo, "other", point, Some(Duration::from_millis(300)));
        repo.run(["cleanup", "done"]).ok();
        assert!(!wt.exists(), "{point:?}");
        half_written(repo, "again", point, Some(Duration::from_millis(300)));
        assert_eq!(repo.labels(), vec!["kept"]);
        assert!(kept.is_dir());
    });
}

#[test]
fn a_session_branch_deleted_beside_another_add_is_gone() {
    // `git branch -D` reads every worktree's HEAD to refuse a checked-out branch.
    beside_an_add(|repo, point| {
        let wt = repo.create("gone");
        write_in(&wt, "scratch.txt", "x\n");
        half_written(repo, "other", point, Some(Duration::from_millis(300)));
        repo.run(["cleanup", "--force", "gone"]).ok();
        settled(repo, "other");
        assert_eq!(
            repo.git(["for-each-ref", "--format=%(refname)", "refs/heads/session"]),
            "",
            "{point:?}"
        );
    });
}

#[test]
fn an_entry_never_finished_fails_in_git_words_within_seconds() {
    let repo = TestRepo::new();
    half_written(&repo, "broken", Point::EmptyCommondir, None);
    let started = Instant::now();
    let out = repo.run(["create", "a"]);
    assert_ne!(out.code, 0);
    assert!(
        out.stderr.contains("failed to read") && out.stderr.contains("worktrees/broken/commondir"),
        "{}",
        out.stderr
    );
    assert!(started.elapsed() < Duration::from_secs(60));
    // Rolled back whole: no branch, no record, no directory.
    assert_eq!(
        repo.git(["for-each-ref", "--format=%(refname)", "refs/heads/session"]),
        ""
    );
    assert!(!repo.sessions_dir().join("a").exists());
}
