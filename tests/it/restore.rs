//! `restore`: what a forced cleanup archived comes back as a session (worktree, branch, every
//! kind of file state, the record with the base it had), and a restore that cannot be made, or
//! is killed while it is made, changes nothing the archive does not still hold (issue 30, item 7).

use crate::common;
use common::{write_in, TestRepo};
use std::path::Path;

/// Every file of the worktree but `.git`, with its content, sorted: what a restore must give back.
fn files_of(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// A session with two commits, a modified, a deleted, an untracked file, one in a new directory
/// and one with a space in its name; base moves on after it was created.
fn session_with_every_kind_of_work(repo: &TestRepo, label: &str) -> std::path::PathBuf {
    let wt = repo.create(label);
    repo.commit_file(&wt, "one.txt", "1\n", "one");
    repo.commit_file(&wt, "dir/two.txt", "2\n", "two");
    write_in(&wt, "README.md", "modified\n");
    std::fs::remove_file(wt.join("dir/two.txt")).unwrap();
    write_in(&wt, "new dir/untracked file.txt", "u\n");
    repo.commit_file(&repo.root, "main.txt", "m\n", "main moves on");
    wt
}

#[test]
fn what_a_forced_cleanup_archived_comes_back_as_the_session_it_was() {
    let repo = TestRepo::new();
    let wt = session_with_every_kind_of_work(&repo, "lost");
    let status = repo.git_in(&wt, ["status", "--porcelain", "--untracked-files=all"]);
    let files = files_of(&wt);
    let tip = repo.git(["rev-parse", "session/lost"]);
    let before = repo.run(["info", "lost", "--json"]).ok().json();
    repo.run(["cleanup", "lost", "--force"]).ok();
    assert!(!wt.exists());
    assert!(repo.run(["list", "--json"]).ok().json()[0].is_null());

    let out = repo.run(["restore", "lost"]).ok();
    assert_eq!(out.stdout.trim(), wt.display().to_string());
    assert_eq!(repo.git(["rev-parse", "session/lost"]), tip);
    assert_eq!(files_of(&wt), files);
    assert_eq!(
        repo.git_in(&wt, ["status", "--porcelain", "--untracked-files=all"]),
        status
    );
    let after = repo.run(["info", "lost", "--json"]).ok().json();
    for key in ["base", "ahead", "behind", "merged", "branch", "path"] {
        assert_eq!(after[key], before[key], "{key}: {after}");
    }
    assert_eq!(
        (after["ahead"].as_u64(), after["behind"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(after["state"], "active");
    let mut settings = repo.insta();
    settings.add_filter(r"\d{8}T\d{6}Z", "[STAMP]");
    settings.bind(|| {
        insta::assert_snapshot!(out.stderr.lines().last().unwrap(), @r#"restored session "lost" from refs/session-archive/lost/[STAMP]: 2 commits ahead of main, its files as they were (the archive stays until prune expires it)"#)
    });
    // The session is a session again: its work commits under the guard and merges.
    repo.git_in(&wt, ["add", "-A"]);
    repo.git_in(&wt, ["commit", "-qm", "the rest"]);
    repo.run(["merge", "lost"]).ok();
    assert_eq!(repo.git(["show", "main:new dir/untracked file.txt"]), "u\n");
}

#[test]
fn a_restore_that_cannot_be_made_is_refused_and_changes_nothing() {
    let repo = TestRepo::new();
    repo.create("first");
    let out = repo.run(["restore", "first"]).fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr, @r#"
        error: no archive of session "first"
        hint: archives are written by `git session cleanup --force` and `prune`; `git for-each-ref refs/session-archive/` lists them
        "#)
    });
    let wt = session_with_every_kind_of_work(&repo, "kept");
    repo.run(["cleanup", "kept", "--force"]).ok();
    let archives = || repo.git(["for-each-ref", "refs/session-archive/"]);
    let archived = archives();
    let stamp = repo
        .git([
            "for-each-ref",
            "--format=%(refname:lstrip=3)",
            "refs/session-archive/kept/",
        ])
        .trim()
        .to_string();
    let out = repo.run(["restore", "kept", "1999"]).fails(1);
    let mut settings = repo.insta();
    settings.add_filter(r"\d{8}T\d{6}Z", "[STAMP]");
    settings.bind(|| {
        insta::assert_snapshot!(out.stderr, @r#"
        error: session "kept" has no archive 1999
        hint: its archives, oldest first: [STAMP]; `git session restore kept` takes the newest
        "#)
    });
    let out = repo.run(["restore", "kep"]).fails(1);
    assert!(
        out.stderr.contains("archives there are of: kept"),
        "{}",
        out.stderr
    );
    // The branch name is taken by someone else's branch: nothing is made.
    repo.git(["branch", "session/kept", "main"]);
    let out = repo.run(["restore", "kept"]).fails(1);
    assert!(out.stderr.contains("session/kept"), "{}", out.stderr);
    assert!(!wt.exists());
    assert_eq!(
        repo.git(["rev-parse", "session/kept"]),
        repo.git(["rev-parse", "main"])
    );
    repo.git(["branch", "-D", "session/kept"]);
    // Restored once; a second restore of the same label is refused.
    repo.run(["restore", "kept", &stamp]).ok();
    let out = repo.run(["restore", "kept"]).fails(1);
    assert!(out.stderr.contains("already"), "{}", out.stderr);
    assert_eq!(archives(), archived, "an archive ref moved");
}

#[test]
fn a_restore_killed_while_it_is_made_is_rolled_back_and_can_be_run_again() {
    let repo = TestRepo::new();
    let wt = session_with_every_kind_of_work(&repo, "again");
    let tip = repo.git(["rev-parse", "session/again"]);
    repo.run(["cleanup", "again", "--force"]).ok();
    // A duration no other test uses, to be inside the checkout when the kill comes.
    common::slow_post_checkout(&repo, 41);
    let mut child = repo
        .cmd_in(&repo.root)
        .args(["restore", "again"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !wt.join("one.txt").exists() {
        assert!(started.elapsed().as_secs() < 20, "checkout never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    std::fs::remove_file(repo.root.join(".git/hooks/post-checkout")).unwrap();
    let out = repo.run(["list", "--json"]).ok();
    assert!(out.stderr.contains("rolled back"), "{}", out.stderr);
    assert_eq!(out.json().as_array().unwrap().len(), 0);
    assert!(!wt.exists());
    assert_eq!(repo.git(["branch", "--list", "session/again"]), "");
    repo.run(["restore", "again"]).ok();
    assert_eq!(repo.git(["rev-parse", "session/again"]), tip);
    assert_eq!(
        std::fs::read_to_string(wt.join("new dir/untracked file.txt")).unwrap(),
        "u\n"
    );
}

// The way back by hand (a worktree on the archived tip, then `create --attach`): the attached
// session says how far its branch is from base, and its removal says that only the registration
// went, the worktree and branch it was attached to staying.
#[test]
fn an_attached_session_shows_its_distance_from_base_and_its_removal_says_what_stays() {
    let repo = TestRepo::new();
    let wt = repo.create("by-hand");
    repo.commit_file(&wt, "one.txt", "1\n", "one");
    repo.commit_file(&wt, "two.txt", "2\n", "two");
    repo.commit_file(&repo.root, "main.txt", "m\n", "main moves on");
    repo.run(["cleanup", "by-hand", "--force"]).ok();
    let archive = repo.git([
        "for-each-ref",
        "--format=%(refname)",
        "refs/session-archive/",
    ]);
    let back = repo.base().join("back");
    repo.git([
        "worktree",
        "add",
        "-q",
        "-b",
        "session/by-hand",
        back.to_str().unwrap(),
        &format!("{}^1", archive.trim()),
    ]);
    repo.run_in(&back, ["create", "--attach", "by-hand"]).ok();
    let info = repo.run(["info", "by-hand", "--json"]).ok().json();
    assert_eq!(
        (info["ahead"].as_u64(), info["behind"].as_u64()),
        (Some(2), Some(1)),
        "{info}"
    );
    assert_eq!(
        info["unmerged_commits"].as_array().unwrap().len(),
        2,
        "{info}"
    );
    // prune, a week on, says the same of an attached session it drops.
    let mut cmd = repo.cmd_in(&repo.root);
    cmd.env(
        "GIT_SESSION_NOW",
        (chrono::Utc::now() + chrono::Duration::days(8)).to_rfc3339(),
    )
    .args(["prune", "--dry-run"]);
    let pruned = common::to_run(cmd.output().unwrap());
    assert!(
        pruned
            .stdout
            .contains("would unregister by-hand: attached session inactive for")
            && pruned.stdout.contains("its worktree")
            && !pruned.stdout.contains("would remove by-hand"),
        "{pruned:?}"
    );
    let out = repo.run(["cleanup", "by-hand"]).ok();
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr.lines().last().unwrap(), @r#"unregistered session "by-hand" (attached): its worktree [TMP]/back and branch session/by-hand stay as they are"#)
    });
    assert!(back.join("two.txt").exists());
    assert_ne!(repo.git(["branch", "--list", "session/by-hand"]), "");
}
