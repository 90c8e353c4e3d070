use crate::common;
use common::{
    assert_nothing_left, hostname, mark_creating, pid_host_filters, start_of, write_in, TestRepo,
};
use std::process::{Command, Stdio};

#[test]
fn cleanup_refuses_unmerged_commits_and_names_them() {
    let repo = TestRepo::new();
    let wt = repo.create("feat");
    repo.commit_file(&wt, "feat.txt", "x\n", "add feature");
    let out = repo.run(["cleanup", "feat"]).fails(1);
    repo.insta().bind(|| insta::assert_snapshot!(out.stderr, @r#"
    error: session "feat" holds work that would be lost
      branch session/feat has 1 commit not in main:
          [SHORT] add feature
    hint: merge it into main (git merge session/feat) or rebase it there; or pass --force to archive everything under refs/session-archive/ and remove it
    "#));
    assert!(wt.exists());
    // Merged right after the work is done: no flag needed.
    repo.git(["merge", "-q", "--no-edit", "session/feat"]);
    repo.run(["cleanup", "feat"]).ok();
    assert!(!wt.exists());
    assert_eq!(repo.git(["branch", "--list", "session/feat"]), "");
    assert!(!repo.store().join("sessions/feat.toml").exists());
}

#[test]
fn cleanup_refuses_uncommitted_and_untracked_files() {
    let repo = TestRepo::new();
    let wt = repo.create("dirty");
    write_in(&wt, "README.md", "changed\n");
    write_in(&wt, "new/untracked.txt", "u\n");
    let out = repo.run(["cleanup", "dirty"]).fails(1);
    assert!(
        out.stderr
            .contains("worktree has 2 uncommitted or untracked files:"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("    README.md\n"), "{}", out.stderr);
    hint_speaks_to_each_reason(&out.stderr);
    assert!(!out.stderr.contains("git merge"), "{}", out.stderr);
    assert!(
        out.stderr.contains("    new/untracked.txt\n"),
        "{}",
        out.stderr
    );
    assert!(wt.join("new/untracked.txt").exists());
    // Ignored files are not work: they do not block.
    std::fs::remove_dir_all(wt.join("new")).unwrap();
    repo.git_in(&wt, ["checkout", "--", "README.md"]);
    write_in(&wt, ".gitignore", "*.log\n");
    repo.git_in(&wt, ["add", ".gitignore"]);
    repo.git_in(&wt, ["commit", "-qm", "ignore logs"]);
    repo.git(["merge", "-q", "session/dirty"]);
    write_in(&wt, "build.log", "noise\n");
    repo.run(["cleanup", "dirty"]).ok();
    assert!(!wt.exists());
}

#[test]
fn cleanup_refuses_while_another_process_works_inside() {
    let repo = TestRepo::new();
    let wt = repo.create("busy");
    let mut sleeper = Command::new("sleep")
        .arg("60")
        .current_dir(wt.join("."))
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    // Between fork and the end of exec the child briefly shows the test binary's, then an
    // empty, argv; wait until it is `sleep 60` so the message below is deterministic.
    let cmdline = format!("/proc/{}/cmdline", sleeper.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::fs::read(&cmdline).unwrap_or_default() != b"sleep\x0060\x00" {
        assert!(std::time::Instant::now() < deadline, "sleep never started");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let out = repo.run(["cleanup", "busy"]).fails(1);
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert!(
        out.stderr
            .contains("1 process is working inside the worktree:"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains(&format!("pid {}: sleep 60", sleeper.id())),
        "{}",
        out.stderr
    );
    assert!(wt.exists());
    repo.run(["cleanup", "busy"]).ok();
}

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
    hint: `git session list` shows the sessions of this repository
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

// ---- Work only the worktree itself holds: HEAD, operations in progress, submodules ----------
//
// The class: a plain `cleanup` removes nothing while the worktree holds work that exists nowhere
// else, whatever git state carries it; `--force` first writes one archive ref that keeps all of
// it reachable.

/// A session whose branch is merged (so the branch alone would let cleanup through).
fn merged_session(repo: &TestRepo, label: &str) -> std::path::PathBuf {
    let wt = repo.create(label);
    repo.commit_file(&wt, &format!("{label}.txt"), "x\n", "work");
    repo.git(["merge", "-q", "--no-edit", &format!("session/{label}")]);
    wt
}

fn refused_keeps(repo: &TestRepo, label: &str, wt: &std::path::Path, expect: &str) -> String {
    let out = repo.run(["cleanup", label]).fails(1);
    assert!(
        out.stderr.contains("holds work that would be lost") && out.stderr.contains(expect),
        "expected refusal naming {expect:?}:\n{}",
        out.stderr
    );
    assert!(wt.exists(), "the worktree was removed");
    assert!(repo.store().join(format!("sessions/{label}.toml")).exists());
    hint_speaks_to_each_reason(&out.stderr);
    out.stderr
}

/// The class behind every refusal's hint: it offers a remedy for each reason the refusal lists,
/// and none for a reason it does not list.
fn hint_speaks_to_each_reason(stderr: &str) {
    let (reasons, hint) = stderr.split_once("\nhint: ").expect("a hint");
    let reason_for = |starts: &str, has: &str| {
        reasons
            .lines()
            .any(|l| l.trim_start().starts_with(starts) && l.contains(has))
    };
    let pairs = [
        (reason_for("branch ", " not in "), "merge it into"),
        (
            reason_for("HEAD is detached", ""),
            "put the detached commits on a branch",
        ),
        (
            reason_for("the worktree's HEAD reflog", ""),
            "keep the listed commits",
        ),
        (reason_for("a ", " is in progress"), "finish or abandon the"),
        (
            reason_for("worktree has ", "uncommitted"),
            "commit the files",
        ),
        (reason_for("submodule ", " commit"), "push submodule"),
        (reason_for("submodule ", "uncommitted"), "in submodule"),
        (
            reason_for("", "working inside the worktree"),
            "stop those processes",
        ),
    ];
    for (listed, remedy) in pairs {
        assert_eq!(
            listed,
            hint.contains(remedy),
            "reason listed: {listed}, remedy {remedy:?} offered: {}\n{stderr}",
            !listed
        );
    }
    assert!(hint.contains("--force"), "{stderr}");
}

#[test]
fn detached_head_with_commits_no_ref_holds_is_refused_and_archived_by_force() {
    let repo = TestRepo::new();
    let wt = merged_session(&repo, "det");
    repo.git_in(&wt, ["checkout", "-q", "--detach"]);
    repo.commit_file(&wt, "lonely.txt", "only here\n", "lonely commit");
    let lonely = repo.git_in(&wt, ["rev-parse", "HEAD"]).trim().to_string();
    let err = refused_keeps(&repo, "det", &wt, "HEAD is detached at");
    assert!(err.contains("lonely commit"), "{err}");
    // Detached at a commit a ref does hold: nothing is lost, cleanup goes ahead.
    let out = repo.run(["cleanup", "--force", "--yes", "det"]).ok();
    assert!(!wt.exists());
    let archive = repo
        .git([
            "for-each-ref",
            "--format=%(refname)",
            "refs/session-archive/det/",
        ])
        .trim()
        .to_string();
    assert!(!archive.is_empty(), "{}", out.stderr);
    // The archive commit's parents: the branch tip and the detached HEAD.
    let parents = repo.git(["rev-list", "--parents", "-n1", &archive]);
    assert!(parents.contains(&lonely), "{parents}");
    assert_eq!(
        repo.git(["cat-file", "-t", &lonely]).trim(),
        "commit",
        "the detached commit must stay in the repository"
    );
}

#[test]
fn detached_head_at_a_commit_a_ref_holds_is_not_work() {
    let repo = TestRepo::new();
    let wt = merged_session(&repo, "det2");
    repo.git_in(&wt, ["checkout", "-q", "--detach", "main"]);
    repo.run(["cleanup", "det2"]).ok();
    assert!(!wt.exists());
}

#[test]
fn operations_in_progress_are_refused() {
    // rebase stopped on a conflict, merge with a conflict, cherry-pick, revert, bisect.
    let repo = TestRepo::new();
    let cases: [(&str, &str); 5] = [
        ("rb", "rebase is in progress"),
        ("mg", "merge is in progress"),
        ("cp", "cherry-pick is in progress"),
        ("rv", "revert is in progress"),
        ("bi", "bisect is in progress"),
    ];
    // A commit on main that conflicts with each session's edit of README.md.
    repo.write("README.md", "main's line\n");
    repo.git(["commit", "-qam", "main edits README"]);
    let main_tip = repo.git(["rev-parse", "HEAD"]).trim().to_string();
    for (label, expect) in cases {
        let wt = repo.run(["create", label, "--base", "main~1"]).ok();
        let wt = std::path::PathBuf::from(wt.stdout.trim());
        repo.commit_file(
            &wt,
            "README.md",
            &format!("{label}'s line\n"),
            "session edit",
        );
        let conflict = |args: &[&str]| {
            let r = repo.git_try(&wt, args);
            assert_ne!(r.code, 0, "expected a conflict from {args:?}");
        };
        match label {
            "rb" => conflict(&["rebase", "-q", "main"]),
            "mg" => conflict(&["merge", "-q", "main"]),
            "cp" => conflict(&["cherry-pick", &main_tip]),
            "rv" => {
                // Reverting main's README edit conflicts with the session's own edit of it.
                repo.git_in(&wt, ["reset", "-q", "--hard", &main_tip]);
                repo.commit_file(&wt, "README.md", "again\n", "edit after main");
                conflict(&["revert", "--no-edit", &main_tip]);
            }
            "bi" => {
                repo.git_in(&wt, ["bisect", "start"]);
            }
            _ => unreachable!(),
        }
        refused_keeps(&repo, label, &wt, expect);
    }
}

#[test]
fn bisect_in_a_clean_merged_worktree_still_blocks() {
    let repo = TestRepo::new();
    let wt = merged_session(&repo, "bis");
    repo.git_in(&wt, ["bisect", "start"]);
    repo.git_in(&wt, ["bisect", "bad"]);
    let err = refused_keeps(&repo, "bis", &wt, "bisect is in progress");
    assert!(err.contains("git bisect reset"), "{err}");
    repo.git_in(&wt, ["bisect", "reset"]);
    repo.run(["cleanup", "bis"]).ok();
    assert!(!wt.exists());
}

/// A repository to use as a submodule, with one commit.
fn submodule_source(repo: &TestRepo) -> std::path::PathBuf {
    let src = repo.base().join("libsrc");
    std::fs::create_dir_all(&src).unwrap();
    repo.git_in(&src, ["init", "-q", "-b", "main"]);
    write_in(&src, "lib.txt", "lib\n");
    repo.git_in(&src, ["add", "lib.txt"]);
    repo.git_in(&src, ["commit", "-qm", "lib"]);
    src
}

/// A merged session whose worktree has `lib` initialised as a submodule.
fn session_with_submodule(repo: &TestRepo, label: &str) -> std::path::PathBuf {
    let src = submodule_source(repo);
    repo.git([
        "-c",
        "protocol.file.allow=always",
        "submodule",
        "add",
        "-q",
        src.to_str().unwrap(),
        "lib",
    ]);
    repo.git(["commit", "-qm", "add lib"]);
    let wt = repo.create(label);
    repo.git_in(
        &wt,
        [
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "update",
            "-q",
            "--init",
        ],
    );
    wt
}

#[test]
fn submodule_commits_on_a_local_branch_are_refused_and_archived_by_force() {
    let repo = TestRepo::new();
    let wt = session_with_submodule(&repo, "sub");
    let lib = wt.join("lib");
    repo.git_in(&lib, ["checkout", "-q", "-b", "local"]);
    repo.commit_file(&lib, "mine.txt", "mine\n", "submodule-only commit");
    let mine = repo.git_in(&lib, ["rev-parse", "HEAD"]).trim().to_string();
    let err = refused_keeps(&repo, "sub", &wt, "submodule lib has 1 commit");
    assert!(err.contains("submodule-only commit"), "{err}");
    // Deinit keeps the submodule's repository under the worktree's admin entry: still refused.
    repo.git_in(&wt, ["submodule", "deinit", "-q", "-f", "lib"]);
    refused_keeps(&repo, "sub", &wt, "submodule lib has 1 commit");
    // Forced: the archive holds the submodule's commit in this repository.
    let out = repo.run(["cleanup", "--force", "--yes", "sub"]).ok();
    assert!(!wt.exists(), "{}", out.stderr);
    assert!(!out.stderr.contains("not archived"), "{}", out.stderr);
    assert_eq!(repo.git(["cat-file", "-t", &mine]).trim(), "commit");
    let archive = repo
        .git([
            "for-each-ref",
            "--format=%(refname)",
            "refs/session-archive/sub/",
        ])
        .trim()
        .to_string();
    let parents = repo.git(["rev-list", "--parents", "-n1", &archive]);
    assert!(parents.contains(&mine), "{parents}");
}

#[test]
fn submodule_dirt_is_refused_and_snapshotted_by_force() {
    let repo = TestRepo::new();
    let wt = session_with_submodule(&repo, "subdirt");
    write_in(&wt.join("lib"), "draft.txt", "draft\n");
    refused_keeps(
        &repo,
        "subdirt",
        &wt,
        "submodule lib has 1 uncommitted or untracked file:",
    );
    let out = repo.run(["cleanup", "--force", "--yes", "subdirt"]).ok();
    assert!(!wt.exists(), "{}", out.stderr);
    let archive = repo
        .git([
            "for-each-ref",
            "--format=%(refname)",
            "refs/session-archive/subdirt/",
        ])
        .trim()
        .to_string();
    // One parent is the submodule snapshot, whose tree holds the draft.
    let parents = repo.git(["rev-list", "--parents", "-n1", &archive]);
    let found = parents.split_whitespace().skip(1).any(|p| {
        repo.git_try(&repo.root, ["cat-file", "-e", &format!("{p}:draft.txt")])
            .code
            == 0
    });
    assert!(found, "no parent holds the submodule's draft: {parents}");
}

#[test]
fn clean_submodule_is_no_hazard_but_git_refusal_stands_without_force() {
    let repo = TestRepo::new();
    let wt = session_with_submodule(&repo, "subclean");
    let out = repo.run(["cleanup", "subclean"]).fails(1);
    assert!(
        out.stderr.contains("git refused to remove the worktree"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--force"), "{}", out.stderr);
    assert!(wt.join("lib/lib.txt").exists());
    repo.run(["cleanup", "--force", "--yes", "subclean"]).ok();
    assert!(!wt.exists());
}

#[test]
fn broken_git_link_is_refused_even_with_force() {
    let repo = TestRepo::new();
    let wt = merged_session(&repo, "broken");
    std::fs::write(wt.join(".git"), "gitdir: /nowhere/at/all\n").unwrap();
    let out = repo.run(["cleanup", "--force", "--yes", "broken"]).fails(1);
    assert!(out.stderr.contains("git worktree repair"), "{}", out.stderr);
    assert!(wt.join("broken.txt").exists());
}

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

/// Commits only the worktree's HEAD reflog holds (made on a detached HEAD, then checked out
/// away) die with its admin entry: refused, and archived by force. Commits rewritten on the
/// session branch itself (an amend) are a deliberate replacement, not work at risk.
#[test]
fn commits_only_the_head_reflog_holds_are_refused_and_archived() {
    let repo = TestRepo::new();
    let wt = repo.create("left");
    repo.commit_file(&wt, "a.txt", "a\n", "first");
    repo.commit_file(&wt, "a.txt", "amended\n", "first, amended");
    repo.git_in(&wt, ["commit", "-q", "--amend", "-m", "first (amended)"]);
    repo.git(["merge", "-q", "--no-edit", "session/left"]);
    repo.git_in(&wt, ["checkout", "-q", "--detach"]);
    repo.commit_file(&wt, "lost.txt", "only here\n", "made detached");
    let lost = repo.git_in(&wt, ["rev-parse", "HEAD"]).trim().to_string();
    repo.git_in(&wt, ["checkout", "-q", "session/left"]);
    let err = refused_keeps(&repo, "left", &wt, "HEAD reflog holds 1 commit");
    assert!(err.contains("made detached"), "{err}");
    assert!(!err.contains("first, amended"), "{err}");
    repo.run(["cleanup", "--force", "--yes", "left"]).ok();
    let archive = repo
        .git([
            "for-each-ref",
            "--format=%(refname)",
            "refs/session-archive/left/",
        ])
        .trim()
        .to_string();
    let parents = repo.git(["rev-list", "--parents", "-n1", &archive]);
    assert!(parents.contains(&lost), "{parents}");
}

// Cleanup racing create. A running `create` holds the session's op lock until it has handed
// out the path; `cleanup` never waits behind it (that removed the session right after `create`
// printed its path) but refuses at once, naming the creator.

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

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = std::time::Instant::now();
    while !done() {
        assert!(started.elapsed().as_secs() < 20, "{what} never happened");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `create LABEL` started in the background and held in its post-checkout hook.
fn create_held(repo: &TestRepo, label: &str) -> (std::process::Child, std::path::PathBuf) {
    let release = held_post_checkout(repo);
    let child = repo
        .cmd_in(&repo.root)
        .args(["create", label])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let wt = repo.sessions_dir().join(label);
    wait_until("the checkout", || wt.join("README.md").exists());
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
