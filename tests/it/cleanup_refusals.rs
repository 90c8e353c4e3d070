//! What a plain `cleanup` refuses to remove: a worktree holding work that exists nowhere else
//! (commits not in main, uncommitted or untracked files, a process working inside, a detached
//! HEAD or HEAD reflog with commits of their own, an operation in progress, submodule commits or
//! dirt), each reason named with its remedy in the hint; `--force` first writes one archive ref
//! that keeps all of it reachable. A broken git link is refused even forced.

use crate::common::{write_in, TestRepo};

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
    hint: merge it into main (git session merge feat) or rebase it there; or pass --force to archive everything under refs/session-archive/ and remove it
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
    let mut sleeper = crate::common::sleeper_in(&wt.join("."));
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
