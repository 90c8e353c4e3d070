//! `git session merge [LABEL] [--keep]`: the session's work lands on its base branch in one
//! step, the base's worktree follows, and the session is cleaned up; or nothing changes at all
//! (a conflict, a dirty base, uncommitted work in the session, Ctrl-C, the deadline).

use crate::common;
use common::{write_in, TestRepo};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn rev(repo: &TestRepo, name: &str) -> String {
    repo.git(["rev-parse", name]).trim().to_string()
}

/// Everything a merge may change: refs, the main worktree's status and files, git's operation
/// state files.
fn snapshot(repo: &TestRepo) -> String {
    let refs = repo.git(["for-each-ref", "--format=%(refname) %(objectname)"]);
    let status = repo.git(["status", "--porcelain", "--untracked-files=all"]);
    let mut files: Vec<String> = std::fs::read_dir(&repo.root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let git = repo.root.join(".git");
    let states: Vec<&str> = ["MERGE_HEAD", "rebase-merge", "rebase-apply", "index.lock"]
        .into_iter()
        .filter(|f| git.join(f).exists())
        .collect();
    format!("{refs}\n{status}\n{files:?}\n{states:?}")
}

#[test]
fn a_session_ahead_of_its_base_fast_forwards_and_is_cleaned_up() {
    let repo = TestRepo::new();
    let wt = repo.create("feat");
    repo.commit_file(&wt, "feat.txt", "x\n", "add feature");
    let tip = rev(&repo, "session/feat");
    repo.run_as_in(&wt, "feat", ["claim", "feat.txt"]).ok();
    let out = repo.run(["merge", "feat"]).ok();
    repo.insta().bind(|| insta::assert_snapshot!(out.stderr, @r#"
    merged session "feat" into main (fast-forward): main is at [SHORT]; updated the worktree [TMP]/repo
    removed session "feat": worktree [TMP]/repo.sessions/feat, branch session/feat, state
    "#));
    assert_eq!(out.stdout, "");
    assert_eq!(rev(&repo, "main"), tip);
    assert_eq!(
        std::fs::read_to_string(repo.root.join("feat.txt")).unwrap(),
        "x\n"
    );
    assert_eq!(repo.git(["status", "--porcelain"]), "");
    assert!(!wt.exists());
    assert_eq!(repo.git(["branch", "--list", "session/feat"]), "");
    assert_eq!(repo.labels(), Vec::<String>::new());
    assert_eq!(repo.claims(), Vec::<serde_json::Value>::new());
}

#[test]
fn by_default_the_session_is_rebased_onto_a_moved_base_and_keeps_its_authors() {
    let repo = TestRepo::new();
    let wt = repo.create("feat");
    repo.commit_file(&wt, "a.txt", "a\n", "first");
    repo.commit_file(&wt, "b.txt", "b\n", "second");
    repo.commit_file(&repo.root.clone(), "main.txt", "m\n", "on main");
    // Merged from inside the session's worktree, as an agent would: it is the acting one.
    let out = repo.run_in(&wt, ["merge"]).ok();
    assert!(
        out.stderr.contains(
            "merged session \"feat\" into main (2 commits rebased onto main, then fast-forward)"
        ),
        "{}",
        out.stderr
    );
    let log = repo.git(["log", "--format=%s|%an|%P", "main"]);
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 4, "{log}");
    assert!(lines[0].starts_with("second|Test Author|"), "{log}");
    assert!(lines[1].starts_with("first|Test Author|"), "{log}");
    assert!(lines[2].starts_with("on main|"), "{log}");
    // Linear: no commit has two parents.
    assert!(lines
        .iter()
        .all(|l| !l.split('|').nth(2).unwrap().contains(' ')));
    for f in ["a.txt", "b.txt", "main.txt"] {
        assert!(repo.root.join(f).is_file(), "{f}");
    }
    assert_eq!(repo.git(["status", "--porcelain"]), "");
    assert!(!wt.exists());
}

#[test]
fn the_team_may_choose_a_merge_commit_or_a_squash() {
    let repo = TestRepo::new();
    repo.write(".git-session.toml", "[merge]\nstrategy = \"merge\"\n");
    let wt = repo.create("m");
    repo.commit_file(&wt, "m.txt", "m\n", "m work");
    repo.run(["merge", "m"]).ok();
    assert_eq!(
        repo.git(["log", "-1", "--format=%P", "main"])
            .split(' ')
            .count(),
        2,
        "a merge commit has two parents"
    );
    assert!(repo
        .git(["log", "-1", "--format=%s", "main"])
        .starts_with("Merge branch 'session/m' into main"));

    repo.write(".git-session.toml", "[merge]\nstrategy = \"squash\"\n");
    let before = rev(&repo, "main");
    let wt = repo.create("s");
    repo.commit_file(&wt, "s1.txt", "1\n", "s one");
    repo.commit_file(&wt, "s2.txt", "2\n", "s two");
    let out = repo.run(["merge", "s"]).ok();
    assert!(
        out.stderr.contains("(2 commits squashed into one)"),
        "{}",
        out.stderr
    );
    assert_eq!(
        repo.git(["log", "-1", "--format=%B", "main"]),
        "Squash session/s (2 commits)\n\n* s one\n* s two\n\n"
    );
    assert_eq!(rev(&repo, "main~1"), before);
    assert!(repo.root.join("s1.txt").is_file() && repo.root.join("s2.txt").is_file());
    assert!(
        !wt.exists(),
        "a squashed session is merged, so it is cleaned up"
    );

    repo.write(".git-session.toml", "[merge]\nstrategy = \"octopus\"\n");
    let out = repo.run(["list"]).fails(1);
    assert!(
        out.stderr.contains(
            "bad value for `merge.strategy`: expected \"rebase\", \"merge\" or \"squash\""
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn a_conflict_names_the_paths_and_changes_nothing() {
    let repo = TestRepo::new();
    let wt = repo.create("clash");
    repo.commit_file(&wt, "README.md", "session\n", "session edit");
    repo.commit_file(&repo.root.clone(), "README.md", "main\n", "main edit");
    std::fs::write(repo.root.join(".git/info/exclude"), ".git-session.toml\n").unwrap();
    repo.write(".git-session.toml", "");
    let before = snapshot(&repo);
    for strategy in ["rebase", "merge", "squash"] {
        repo.write(
            ".git-session.toml",
            &format!("[merge]\nstrategy = \"{strategy}\"\n"),
        );
        let out = repo.run(["merge", "clash"]).fails(1);
        if strategy == "rebase" {
            repo.insta().bind(|| insta::assert_snapshot!(out.stderr, @r#"
            error: session "clash" conflicts with main in 1 file (at commit [SHORT] "session edit"); nothing was changed
              README.md
            hint: resolve it in the session's worktree (git rebase main or git merge main, then commit), and run the merge again
            "#));
        } else {
            assert!(
                out.stderr.starts_with(
                    "error: session \"clash\" conflicts with main in 1 file; nothing was changed\n  \
                     README.md\n"
                ),
                "{strategy}: {}",
                out.stderr
            );
        }
        assert_eq!(snapshot(&repo), before, "{strategy}");
        assert!(wt.exists());
        assert_eq!(repo.git_in(&wt, ["status", "--porcelain"]), "");
    }
}

#[test]
fn a_dirty_base_worktree_or_uncommitted_session_work_refuses_and_changes_nothing() {
    let repo = TestRepo::new();
    let wt = repo.create("feat");
    repo.commit_file(&wt, "feat.txt", "x\n", "add feature");
    write_in(&wt, "README.md", "edited by feat\n");
    repo.git_in(&wt, ["commit", "-q", "-am", "edit the readme"]);
    // An uncommitted change to a file the merge changes is in its way (git's rule).
    repo.write("README.md", "edited on main, not committed\n");
    let before = snapshot(&repo);
    let out = repo.run(["merge", "feat"]).fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr, @r#"
    error: the worktree of main has uncommitted changes in files the merge changes; nothing was merged
      in [TMP]/repo:
      README.md
    hint: commit, stash or move them there first (git -C [TMP]/repo stash -u), then merge again
    "#)
    });
    assert_eq!(snapshot(&repo), before);
    repo.git(["checkout", "--", "README.md"]);

    write_in(&wt, "notes.txt", "not committed\n");
    let before = snapshot(&repo);
    let out = repo.run(["merge", "feat"]).fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr, @r#"
    error: session "feat" holds uncommitted work; nothing was merged
      worktree has 1 uncommitted or untracked file:
          notes.txt
    hint: commit it (or stash it) in [TMP]/repo.sessions/feat, then merge again
    "#)
    });
    assert_eq!(snapshot(&repo), before);
    assert!(wt.join("notes.txt").is_file());

    // An untracked file of the base's worktree in the merge's way: git refuses the update, and
    // the base branch is put back.
    std::fs::remove_file(wt.join("notes.txt")).unwrap();
    repo.write("feat.txt", "someone else's\n");
    let before = snapshot(&repo);
    let out = repo.run(["merge", "feat"]).fails(1);
    assert!(out.stderr.contains("feat.txt"), "{}", out.stderr);
    assert_eq!(snapshot(&repo), before);
    assert_eq!(
        std::fs::read_to_string(repo.root.join("feat.txt")).unwrap(),
        "someone else's\n"
    );
}

#[test]
fn keep_leaves_the_session_on_the_merged_base_and_ends_its_claims() {
    let repo = TestRepo::new();
    let wt = repo.create("kept");
    repo.commit_file(&wt, "k.txt", "k\n", "kept work");
    repo.commit_file(&repo.root.clone(), "main.txt", "m\n", "on main");
    repo.run_as_in(&wt, "kept", ["claim", "k.txt"]).ok();
    let out = repo.run(["merge", "kept", "--keep"]).ok();
    assert!(
        out.stderr.contains("released the 1 claim of \"kept\""),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("kept session \"kept\" (--keep)"));
    assert!(wt.is_dir());
    // Rebased: the session continues from the merged base, with a clean worktree.
    assert_eq!(rev(&repo, "session/kept"), rev(&repo, "main"));
    assert_eq!(repo.git_in(&wt, ["status", "--porcelain"]), "");
    assert!(wt.join("main.txt").is_file());
    assert_eq!(repo.claims(), Vec::<serde_json::Value>::new());
    // Merged, so a plain cleanup goes through; a second merge has nothing to do.
    let again = repo.run(["merge", "kept", "--keep"]).ok();
    assert!(
        again
            .stderr
            .contains("main holds all of session \"kept\" already"),
        "{}",
        again.stderr
    );
    repo.run(["cleanup", "kept"]).ok();
}

#[test]
fn merge_refuses_what_it_cannot_merge() {
    let repo = TestRepo::new();
    let out = repo.run(["merge", "nope"]).fails(1);
    assert!(
        out.stderr.starts_with("error: no session named \"nope\""),
        "{}",
        out.stderr
    );
    let out = repo.run(["merge"]).fails(1);
    assert!(
        out.stderr.starts_with("error: no session here"),
        "{}",
        out.stderr
    );
    let out = repo.run(["merge", "../x"]).fails(2);
    assert!(
        out.stderr.starts_with("error: invalid label"),
        "{}",
        out.stderr
    );
    // A worktree that left its branch: its HEAD would not follow the merge.
    let off = repo.create("off");
    repo.commit_file(&off, "o.txt", "o\n", "o");
    repo.git_in(&off, ["switch", "-q", "--detach"]);
    let before = snapshot(&repo);
    let out = repo.run(["merge", "off"]).fails(1);
    assert!(
        out.stderr
            .starts_with("error: the worktree of \"off\" is not on its branch session/off"),
        "{}",
        out.stderr
    );
    assert_eq!(snapshot(&repo), before);
    // A base that is no local branch.
    let head = rev(&repo, "HEAD");
    let wt = repo.run(["create", "detached", "--base", &head]).ok();
    let wt = Path::new(wt.stdout.trim()).to_path_buf();
    repo.commit_file(&wt, "d.txt", "d\n", "d");
    let out = repo.run(["merge", "detached"]).fails(1);
    assert!(
        out.stderr
            .contains("which is not a local branch to merge into"),
        "{}",
        out.stderr
    );
}

/// A smudge filter that says when it starts and then takes `secs`: the base's worktree update
/// runs it for `slow.txt`, which gives a test its moment to interrupt the merge.
fn slow_checkout(repo: &TestRepo, secs: u32) -> (std::path::PathBuf, std::path::PathBuf) {
    let marker = repo.base().join("smudging");
    repo.git([
        "config",
        "filter.slow.smudge",
        &format!("touch '{}'; sleep {secs}; cat", marker.display()),
    ]);
    std::fs::write(
        repo.root.join(".git/info/attributes"),
        "*.slow filter=slow\n",
    )
    .unwrap();
    let wt = repo.create("slow");
    repo.commit_file(&wt, "a.slow", "slow\n", "slow work");
    (wt, marker)
}

#[test]
fn ctrl_c_during_the_merge_rolls_it_back() {
    let repo = TestRepo::new();
    let (wt, marker) = slow_checkout(&repo, 2);
    let before = snapshot(&repo);
    let child = repo
        .cmd_in(&repo.root)
        .args(["merge", "slow"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !marker.exists() {
        assert!(started.elapsed() < Duration::from_secs(60), "no checkout");
        std::thread::sleep(Duration::from_millis(20));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = common::to_run(child.wait_with_output().unwrap());
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "error: merging session \"slow\" was interrupted; rolled back, nothing was changed\n"
    );
    assert_eq!(snapshot(&repo), before);
    assert!(!repo.root.join("a.slow").exists());
    assert!(wt.join("a.slow").is_file());
    assert_eq!(repo.labels(), ["slow"]);
}

#[test]
fn the_deadline_rolls_the_merge_back() {
    let repo = TestRepo::new();
    std::fs::write(repo.root.join(".git/info/exclude"), ".git-session.toml\n").unwrap();
    repo.write(".git-session.toml", "[merge]\ntimeout = \"1s\"\n");
    let (wt, _marker) = slow_checkout(&repo, 2);
    let before = snapshot(&repo);
    let out = repo.run(["merge", "slow"]).fails(1);
    repo.insta().bind(|| {
        insta::assert_snapshot!(out.stderr, @r#"
    error: merging session "slow" did not finish within 1s; rolled back, nothing was changed
    hint: raise `[merge] timeout` in .git-session.toml if the repository needs longer
    "#)
    });
    assert_eq!(snapshot(&repo), before);
    assert!(wt.join("a.slow").is_file());
}
