mod common;
use common::{write_in, TestRepo};

fn in_days(days: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now() + chrono::Duration::days(days)
}

#[test]
fn prune_removes_exactly_the_merged_clean_inactive_sessions() {
    let repo = TestRepo::new();
    let old = repo.create("old");
    let locked = repo.create("locked");
    let dirty = repo.create("dirty");
    let unmerged = repo.create("unmerged");
    let recent = repo.create("recent");
    let gone = repo.create("gone");
    let other = repo.base().join("other-worktree");
    repo.git([
        "worktree",
        "add",
        "-q",
        "-b",
        "feature",
        other.to_str().unwrap(),
    ]);

    repo.git([
        "worktree",
        "lock",
        "--reason",
        "keep me",
        locked.to_str().unwrap(),
    ]);
    write_in(&dirty, "scratch.txt", "wip\n");
    repo.commit_file(&unmerged, "u.txt", "u\n", "not merged");
    std::fs::remove_dir_all(&gone).unwrap();
    // `recent` was active a day ago in the future clock's terms.
    let touched = std::process::Command::new("touch")
        .arg("-d")
        .arg(format!("@{}", in_days(29).timestamp()))
        .arg(repo.root.join(".git/worktrees/recent/index"))
        .status()
        .unwrap();
    assert!(touched.success());

    let now = in_days(30).to_rfc3339();
    let prune = |extra: &[&str]| {
        let mut cmd = repo.cmd_in(&repo.root);
        cmd.env("GIT_SESSION_NOW", &now)
            .arg("prune")
            .args(["--older-than", "7d"])
            .args(extra);
        common::to_run(cmd.output().unwrap())
    };

    let dry = prune(&["--dry-run"]).ok();
    repo.insta()
        .bind(|| insta::assert_snapshot!("prune_dry_run", dry.stdout));
    for p in [&old, &locked, &dirty, &unmerged, &recent] {
        assert!(p.exists(), "dry run removed {}", p.display());
    }
    assert_eq!(
        repo.run(["list", "--json"])
            .ok()
            .json()
            .as_array()
            .unwrap()
            .len(),
        6
    );

    let out = prune(&[]).ok();
    repo.insta()
        .bind(|| insta::assert_snapshot!("prune_run", out.stdout));
    assert!(!old.exists());
    assert_eq!(repo.git(["branch", "--list", "session/old"]), "");
    for p in [&locked, &dirty, &unmerged, &recent, &other] {
        assert!(p.exists(), "prune removed {}", p.display());
    }
    assert!(dirty.join("scratch.txt").exists());
    assert_ne!(repo.git(["branch", "--list", "session/unmerged"]), "");
    assert_ne!(repo.git(["branch", "--list", "feature"]), "");
    let mut labels: Vec<String> = repo
        .run(["list", "--json"])
        .ok()
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap().to_string())
        .collect();
    labels.sort();
    assert_eq!(labels, ["dirty", "locked", "recent", "unmerged"]);
    let worktrees = repo.git(["worktree", "list", "--porcelain"]);
    assert!(!worktrees.contains("repo.sessions/gone"), "{worktrees}");
    assert!(worktrees.contains("other-worktree"), "{worktrees}");

    // --quiet prints nothing at all when there is nothing wrong.
    let quiet = prune(&["--quiet"]).ok();
    assert_eq!(quiet.stdout, "");
    assert_eq!(quiet.stderr, "");
}

#[test]
fn prune_expires_archive_refs_past_archive_keep_only() {
    let repo = TestRepo::new();
    let wt = repo.create("arch");
    repo.commit_file(&wt, "a.txt", "a\n", "archived work");
    repo.run(["cleanup", "arch", "--force"]).ok();
    let refs = || {
        repo.git([
            "for-each-ref",
            "--format=%(refname)",
            "refs/session-archive/",
        ])
    };
    assert_eq!(refs().lines().count(), 1);
    let run = |days: i64| {
        let mut cmd = repo.cmd_in(&repo.root);
        cmd.env("GIT_SESSION_NOW", in_days(days).to_rfc3339())
            .arg("prune");
        common::to_run(cmd.output().unwrap()).ok()
    };
    run(29);
    assert_eq!(refs().lines().count(), 1, "expired too early");
    let out = run(31);
    assert!(
        out.stdout
            .contains("expired archive refs/session-archive/arch/"),
        "{}",
        out.stdout
    );
    assert_eq!(refs(), "");
}
