//! `cleanup`: what it removes and what it never touches. A merged session goes without a flag
//! (merged by a merge, a squash or a rebase); `--force` archives what would be lost under
//! `refs/session-archive/` and prints the command that restores it; a locked worktree and a
//! record pointing outside the worktrees directory are refused even forced.
//!
//! The refusals that keep work are in `cleanup_refusals`, cleanups racing each other or a
//! `create` in `cleanup_races`.

use crate::common;
use common::{write_in, TestRepo};
use std::process::Command;

#[test]
fn forced_cleanup_archives_and_the_printed_command_restores_everything() {
    let repo = TestRepo::new();
    let wt = repo.create("lost");
    repo.commit_file(&wt, "committed.txt", "c\n", "committed work");
    write_in(&wt, "README.md", "modified\n");
    write_in(&wt, "untracked.txt", "u\n");
    let tip = repo.git(["rev-parse", "session/lost"]);
    let out = repo.run(["cleanup", "lost", "--force"]).ok();
    assert!(!wt.exists());
    assert_eq!(repo.git(["branch", "--list", "session/lost"]), "");
    let restore = out
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("restore with: "))
        .unwrap_or_else(|| panic!("no restore command in {}", out.stderr))
        .to_string();
    let archives = repo.git([
        "for-each-ref",
        "--format=%(refname)",
        "refs/session-archive/lost/",
    ]);
    assert_eq!(archives.lines().count(), 1, "{archives}");
    let audit = std::fs::read_to_string(repo.store().join("audit.log")).unwrap();
    assert!(audit.contains("\"event\":\"forced-cleanup\""), "{audit}");

    let sh = repo
        .git_cmd(&repo.root)
        .args(["-c", "true"])
        .output()
        .unwrap();
    drop(sh);
    let mut cmd = Command::new("sh");
    common::hermetic(&mut cmd, &repo.home);
    let restored = cmd
        .arg("-c")
        .arg(&restore)
        .current_dir(&repo.root)
        .output()
        .unwrap();
    assert!(
        restored.status.success(),
        "{}",
        String::from_utf8_lossy(&restored.stderr)
    );
    assert_eq!(repo.git(["rev-parse", "session/lost"]), tip);
    assert_eq!(
        std::fs::read_to_string(wt.join("committed.txt")).unwrap(),
        "c\n"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("README.md")).unwrap(),
        "modified\n"
    );
    assert_eq!(
        std::fs::read_to_string(wt.join("untracked.txt")).unwrap(),
        "u\n"
    );
    let status = repo.git_in(&wt, ["status", "--porcelain"]);
    assert_eq!(status, " M README.md\n?? untracked.txt\n");
}

#[test]
fn squash_merged_branch_is_integrated_and_cleaned_without_force() {
    let repo = TestRepo::new();
    let wt = repo.create("squashy");
    repo.commit_file(&wt, "one.txt", "1\n", "one");
    repo.commit_file(&wt, "two.txt", "2\n", "two");
    repo.commit_file(&repo.root, "unrelated.txt", "u\n", "main moves on");
    repo.git(["merge", "-q", "--squash", "session/squashy"]);
    repo.git(["commit", "-qm", "squash of squashy"]);
    let list = repo.run(["list", "--json"]).ok().json();
    assert_eq!(list[0]["merged"], "integrated");
    let info = repo.run(["info", "squashy", "--json"]).ok().json();
    assert_eq!(info["merged"], "integrated");
    assert_eq!(info["unmerged_commits"].as_array().unwrap().len(), 0);
    repo.run(["cleanup", "squashy"]).ok();
    assert!(!wt.exists());
}

#[test]
fn rebase_merged_branch_is_integrated() {
    let repo = TestRepo::new();
    let wt = repo.create("rebased");
    repo.commit_file(&wt, "r.txt", "r\n", "rebased work");
    repo.commit_file(&repo.root, "m.txt", "m\n", "main moves on");
    repo.git(["cherry-pick", "session/rebased"]);
    let info = repo.run(["info", "rebased", "--json"]).ok().json();
    assert_eq!(info["merged"], "integrated");
}

#[test]
fn branch_merged_into_its_upstream_but_not_main_is_refused() {
    let repo = TestRepo::new();
    let wt = repo.create("up");
    repo.commit_file(&wt, "u.txt", "u\n", "upstream only");
    repo.git(["branch", "staging", "session/up"]);
    repo.git(["config", "branch.session/up.remote", "."]);
    repo.git(["config", "branch.session/up.merge", "refs/heads/staging"]);
    let out = repo.run(["cleanup", "up"]).fails(1);
    assert!(
        out.stderr.contains("has 1 commit not in main"),
        "{}",
        out.stderr
    );
    assert!(wt.exists());
    let list = repo.run(["list", "--json"]).ok().json();
    assert_eq!(list[0]["merged"], "no");
    assert_eq!(list[0]["ahead"], 1);
}

#[test]
fn locked_worktree_is_never_removed_even_forced() {
    let repo = TestRepo::new();
    let wt = repo.create("locked");
    repo.git([
        "worktree",
        "lock",
        "--reason",
        "on a USB disk",
        wt.to_str().unwrap(),
    ]);
    let out = repo.run(["cleanup", "locked", "--force"]).fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr, @r#"
    error: the worktree of "locked" is locked: on a USB disk
    hint: unlock it first if that is over: git worktree unlock [TMP]/repo.sessions/locked
    "#)
    });
    assert!(wt.exists());
}

#[test]
fn missing_worktree_is_shown_and_cleanup_clears_its_records() {
    let repo = TestRepo::new();
    let wt = repo.create("gone");
    repo.commit_file(&wt, "g.txt", "g\n", "unmerged work");
    std::fs::remove_dir_all(&wt).unwrap();
    let list = repo.run(["list", "--json"]).ok().json();
    assert_eq!(list[0]["state"], "missing");
    assert_eq!(list[0]["live"], false);
    let out = repo.run(["cleanup", "gone"]).ok();
    assert!(
        out.stderr.contains("kept branch session/gone"),
        "{}",
        out.stderr
    );
    assert_ne!(repo.git(["branch", "--list", "session/gone"]), "");
    assert!(!repo.store().join("sessions/gone.toml").exists());
    assert_eq!(
        repo.git(["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
}

#[test]
fn dry_run_changes_nothing() {
    let repo = TestRepo::new();
    let wt = repo.create("dry");
    let out = repo.run(["cleanup", "dry", "--dry-run"]).ok();
    repo.insta().bind(|| insta::assert_snapshot!(out.stdout, @r#"would remove session "dry": worktree [TMP]/repo.sessions/dry, branch session/dry, state"#));
    assert!(wt.exists());
    assert!(repo.store().join("sessions/dry.toml").exists());
}

#[test]
fn cleanup_of_unknown_session_says_so() {
    let repo = TestRepo::new();
    let out = repo.run(["cleanup", "nope"]).fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr, @r#"
    error: no session named "nope"
    hint: this repository has no sessions; make one with `git session create`
    "#)
    });
}

#[test]
fn record_pointing_outside_the_worktrees_directory_is_not_followed() {
    let repo = TestRepo::new();
    repo.create("evil");
    let victim = repo.base().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("precious.txt"), "keep").unwrap();
    let file = repo.store().join("sessions/evil.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    let wt = repo.sessions_dir().join("evil");
    std::fs::write(
        &file,
        text.replace(wt.to_str().unwrap(), victim.to_str().unwrap()),
    )
    .unwrap();
    let out = repo.run(["cleanup", "evil", "--force"]).fails(1);
    assert!(out.stderr.contains("not followed"), "{}", out.stderr);
    assert!(victim.join("precious.txt").exists());
}
