//! Ownership true at every instant (issue 27), tested by class: first claim wins whatever the
//! route (explicit, a commit's pre-commit, an agent's edit) and whatever the speeds, with real
//! concurrent processes; a claim is in force from the moment it is recorded (a commit in flight
//! owns its paths) until an event ends it, and an ended claim never comes back; integrating the
//! owner's own content into base is no collision; the losing writer hears it at once; a path
//! staged while the pre-commit runs is named by the post-commit.

use crate::common::{self, guarded, to_run, write_in, TestRepo};
use crate::context_support::{file_tool, hook};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// A commit-msg hook that sleeps `SLOW_MSG` seconds (a slow message linter) and fails when
/// `FAIL_MSG` is set (a rejected message: the commit is abandoned after its pre-commit ran).
fn commit_msg_hook(repo: &TestRepo) {
    let hooks = repo.root.join(".git/hooks");
    let path = hooks.join("commit-msg");
    std::fs::write(
        &path,
        "#!/bin/sh\n[ -n \"$SLOW_MSG\" ] && sleep \"$SLOW_MSG\"\n[ -n \"$FAIL_MSG\" ] && exit 1\nexit 0\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn spawn(mut cmd: Command) -> Child {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The labels holding an in-force claim on `path`, as `claims --json` says.
fn live_owners(repo: &TestRepo, path: &str) -> Vec<String> {
    repo.claims()
        .iter()
        .filter(|c| c["path"] == path && c["live"] == true)
        .map(|c| c["label"].as_str().unwrap().to_string())
        .collect()
}

enum Route {
    Explicit,
    Commit { slow: bool },
    Edit,
}

/// Six sessions claim one new path at the same moment, two by each route, one commit slowed
/// by a commit-msg hook: exactly one wins, whatever the order, and `claims` names that one as
/// the only owner. Repeated, so the order varies.
#[test]
fn every_route_at_once_leaves_exactly_one_owner() {
    for round in 0..4 {
        let repo = guarded();
        commit_msg_hook(&repo);
        let routes = [
            ("c1", Route::Commit { slow: true }),
            ("x1", Route::Explicit),
            ("e1", Route::Edit),
            ("c2", Route::Commit { slow: false }),
            ("x2", Route::Explicit),
            ("e2", Route::Edit),
        ];
        let trees: Vec<PathBuf> = routes.iter().map(|(l, _)| repo.create(l)).collect();
        let mut racers = Vec::new();
        for ((label, route), wt) in routes.iter().zip(&trees) {
            write_in(wt, "f.txt", &format!("{label}'s f\n"));
            let child = match route {
                Route::Commit { slow } => {
                    repo.git_in(wt, ["add", "f.txt"]);
                    let mut cmd = repo.git_cmd(wt);
                    cmd.args(["commit", "-q", "-m", label]);
                    if *slow {
                        cmd.env("SLOW_MSG", "2");
                    }
                    spawn(cmd)
                }
                Route::Explicit => {
                    let mut cmd = repo.cmd_in(wt);
                    cmd.args(["claim", "f.txt"]);
                    spawn(cmd)
                }
                Route::Edit => {
                    let payload = file_tool(
                        "PostToolUse",
                        &format!("agent-{label}"),
                        wt,
                        "Write",
                        &wt.join("f.txt"),
                    );
                    let mut cmd = repo.cmd_in(wt);
                    cmd.args(["context", "hook"]).stdin(Stdio::piped());
                    let mut child = cmd
                        .stdout(Stdio::piped())
                        .stderr(Stdio::piped())
                        .spawn()
                        .unwrap();
                    use std::io::Write;
                    let mut stdin = child.stdin.take().unwrap();
                    stdin.write_all(payload.to_string().as_bytes()).unwrap();
                    drop(stdin);
                    child
                }
            };
            racers.push((label.to_string(), route, child));
        }
        let mut winners = Vec::new();
        for (label, route, child) in racers {
            let out = to_run(child.wait_with_output().unwrap());
            let won = match route {
                Route::Commit { .. } => out.code == 0,
                Route::Explicit => out.code == 0,
                Route::Edit => {
                    assert_eq!(out.code, 0, "the hook exits 0: {out:?}");
                    !out.stdout.contains("lost the race")
                }
            };
            if won {
                winners.push(label);
            }
        }
        assert_eq!(winners.len(), 1, "round {round}: winners {winners:?}");
        assert_eq!(live_owners(&repo, "f.txt"), winners, "round {round}");
    }
}

/// A commit in flight owns its paths from its pre-commit on: while its commit-msg hook runs,
/// another session's commit of the path is refused; a commit abandoned after its pre-commit
/// (the message rejected) ends its claims, and the path is free again.
#[test]
fn a_commit_in_flight_owns_its_paths_and_an_abandoned_one_lets_go() {
    let repo = guarded();
    commit_msg_hook(&repo);
    let a = repo.create("A");
    let b = repo.create("B");
    write_in(&a, "f.txt", "A\n");
    repo.git_in(&a, ["add", "f.txt"]);
    let mut slow = repo.git_cmd(&a);
    slow.env("SLOW_MSG", "3").args(["commit", "-q", "-m", "A"]);
    let slow = spawn(slow);
    common::wait_for("A's pre-commit to claim f.txt", || {
        live_owners(&repo, "f.txt") == ["A"]
    });
    write_in(&b, "f.txt", "B\n");
    repo.git_in(&b, ["add", "f.txt"]);
    let refused = repo.git_try(&b, ["commit", "-q", "-m", "B"]).fails(1);
    assert!(
        refused.stderr.contains("session \"A\""),
        "{}",
        refused.stderr
    );
    let landed = to_run(slow.wait_with_output().unwrap());
    assert_eq!(landed.code, 0, "{landed:?}");
    assert_eq!(live_owners(&repo, "f.txt"), ["A"]);

    // Abandoned: the pre-commit claims g.txt, the message is rejected, nothing lands.
    write_in(&a, "g.txt", "A\n");
    repo.git_in(&a, ["add", "g.txt"]);
    let mut rejected = repo.git_cmd(&a);
    rejected
        .env("FAIL_MSG", "1")
        .args(["commit", "-q", "-m", "A g"]);
    assert_ne!(to_run(rejected.output().unwrap()).code, 0);
    assert!(
        live_owners(&repo, "g.txt").is_empty(),
        "{:?}",
        repo.claims()
    );
    repo.run_in(&b, ["claim", "g.txt"]).ok();
    assert_eq!(live_owners(&repo, "g.txt"), ["B"]);
}

/// Without git around it (the pre-commit run by hand), a claim recorded by the pre-commit is in
/// force until the worktree's HEAD moves: nothing can tell that the commit was given up.
#[test]
fn a_pre_commit_run_by_hand_owns_what_it_checked() {
    let repo = guarded();
    let x = repo.create("X");
    let y = repo.create("Y");
    write_in(&x, "f.txt", "X\n");
    repo.git_in(&x, ["add", "f.txt"]);
    repo.run_in(&x, ["guard", "pre-commit"]).ok();
    assert_eq!(live_owners(&repo, "f.txt"), ["X"]);
    write_in(&y, "f.txt", "Y\n");
    repo.git_in(&y, ["add", "f.txt"]);
    repo.git_try(&y, ["commit", "-q", "-m", "Y"]).fails(1);
}

/// However a commit claim ends (the branch merged by hand, the branch reset, released), it
/// never comes back: the next owner keeps the path, and the old owner's new commit of it is a
/// new claim that loses.
#[test]
fn an_ended_claim_never_comes_back() {
    for end in ["merged by hand", "reset", "released"] {
        let repo = guarded();
        let a = repo.create("A");
        let b = repo.create("B");
        repo.commit_file(&a, "q.txt", "A's q\n", "A q");
        assert_eq!(live_owners(&repo, "q.txt"), ["A"], "{end}");
        match end {
            "merged by hand" => {
                repo.git(["merge", "-q", "--no-edit", "session/A"]);
            }
            "reset" => {
                repo.git_in(&a, ["reset", "-q", "--hard", "main"]);
            }
            _ => {
                repo.run_in(&a, ["release", "q.txt"]).ok();
            }
        }
        assert!(live_owners(&repo, "q.txt").is_empty(), "{end}");
        repo.run_in(&b, ["claim", "q.txt"]).ok();
        assert_eq!(live_owners(&repo, "q.txt"), ["B"], "{end}");
        // A changes q.txt again: refused, B owns it.
        write_in(&a, "q.txt", "A's q again\n");
        repo.git_in(&a, ["add", "q.txt"]);
        let refused = repo.git_try(&a, ["commit", "-q", "-m", "A again"]).fails(1);
        assert!(
            refused.stderr.contains("session \"B\""),
            "{end}: {}",
            refused.stderr
        );
        assert_eq!(live_owners(&repo, "q.txt"), ["B"], "{end}");
        // And B's own commit of it goes through.
        repo.commit_file(&b, "q.txt", "B's q\n", "B q");
        assert_eq!(live_owners(&repo, "q.txt"), ["B"], "{end}");
        assert!(
            repo.claims()
                .iter()
                .all(|c| !(c["path"] == "q.txt" && c["label"] == "A")),
            "{end}: the ended record is gone: {:?}",
            repo.claims()
        );
    }
}

/// Taking the owner's exact content into base (a squash merge, a conflicted merge resolved,
/// a cherry-pick) is no collision: no bypass, no warning, and the integrated claims end. A
/// change of the owner's path with other content is still refused.
#[test]
fn integrating_the_owners_content_into_base_needs_no_bypass() {
    let repo = guarded();
    let root = repo.root.clone();
    let x = repo.create("x");
    repo.commit_file(&root, "c.txt", "base c\n", "base c");
    let x2 = repo.create("x2");
    repo.commit_file(&x, "a.txt", "x's a\n", "x a");
    repo.commit_file(&x, "src/lib.rs", "x's lib\n", "x lib");
    assert_eq!(live_owners(&repo, "src/lib.rs"), ["x"]);

    // Other content over x's path, in main: refused.
    write_in(&root, "src/lib.rs", "main's lib\n");
    repo.git(["add", "src/lib.rs"]);
    repo.git_try(&root, ["commit", "-q", "-m", "main lib"])
        .fails(1);
    repo.git(["checkout", "-q", "--", "."]);
    repo.git(["reset", "-q", "--hard"]);

    // A squash merge: x's exact content, committed by nobody's session.
    repo.git(["merge", "-q", "--squash", "session/x"]);
    let out = repo.git_try(&root, ["commit", "-q", "-m", "squash x"]).ok();
    assert!(!out.stderr.contains("warning"), "{}", out.stderr);
    assert!(
        live_owners(&repo, "src/lib.rs").is_empty(),
        "{:?}",
        repo.claims()
    );
    assert!(live_owners(&repo, "a.txt").is_empty());

    // A conflicted merge of x2's work, resolved by hand, concluded without a bypass: main
    // changed c.txt before x2 claimed it by its commit.
    repo.commit_file(&root, "c.txt", "main's c\n", "main c");
    repo.commit_file(&x2, "c.txt", "x2's c\n", "x2 c");
    assert_eq!(live_owners(&repo, "c.txt"), ["x2"]);
    let _ = repo.git_try(&root, ["merge", "-q", "--no-edit", "session/x2"]);
    write_in(&root, "c.txt", "both\n");
    repo.git(["add", "c.txt"]);
    repo.git_try(&root, ["commit", "-q", "--no-edit"]).ok();
    assert_eq!(repo.head_subject(&root), "Merge branch 'session/x2'");

    // A cherry-pick of a session's commit: no pre-commit runs, and the post-commit warns of
    // nothing, since it is the owner's content.
    let y = repo.create("y");
    repo.commit_file(&y, "y.txt", "y's y\n", "y y");
    let pick = repo.git(["rev-parse", "session/y"]).trim().to_string();
    let out = repo.git_try(&root, ["cherry-pick", &pick]).ok();
    assert!(
        !out.stderr.contains("without the ownership guard"),
        "{}",
        out.stderr
    );
}

/// Two agents write one new file at once; the one whose claim is recorded second is told in
/// that same PostToolUse answer who owns the file and what to do, and it is audited.
#[test]
fn the_losing_writer_hears_it_in_the_same_call() {
    let repo = guarded();
    let a = repo.create("A");
    let b = repo.create("B");
    write_in(&b, "n.txt", "B\n");
    let first = hook(
        &repo,
        &file_tool("PostToolUse", "agent-b", &b, "Write", &b.join("n.txt")),
        &[],
    );
    assert!(first.stdout.trim().is_empty(), "{first:?}");
    write_in(&a, "n.txt", "A\n");
    let second = hook(
        &repo,
        &file_tool("PostToolUse", "agent-a", &a, "Write", &a.join("n.txt")),
        &[],
    );
    let answer: serde_json::Value = serde_json::from_str(&second.stdout).unwrap();
    crate::context_support::assert_schema(&answer, "PostToolUse");
    let text = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap()
        .to_string();
    let filtered = text.replace(&repo.root.display().to_string(), "[ROOT]");
    let since = regex_since(&filtered);
    repo.insta()
        .bind(|| insta::assert_snapshot!("losing_writer", since));
    let audit = std::fs::read_to_string(repo.store().join("audit.log")).unwrap();
    assert!(
        audit.contains("\"event\":\"context-claim-lost\""),
        "{audit}"
    );
    assert_eq!(live_owners(&repo, "n.txt"), ["B"]);
}

/// The claim's time, which the clock decides, as a placeholder.
fn regex_since(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("since ") {
        out.push_str(&rest[..at + 6]);
        rest = &rest[at + 6..];
        let end = rest.find(')').unwrap_or(rest.len());
        out.push_str("[TIME]");
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// A claim of several paths is all or nothing: one of them owned, none is claimed.
#[test]
fn a_claim_of_several_paths_is_all_or_nothing() {
    let repo = guarded();
    let a = repo.create("A");
    let b = repo.create("B");
    repo.run_in(&a, ["claim", "b.txt"]).ok();
    let out = repo.run_in(&b, ["claim", "a.txt", "b.txt"]).fails(1);
    assert!(out.stderr.contains("b.txt"), "{}", out.stderr);
    assert!(
        live_owners(&repo, "a.txt").is_empty(),
        "{:?}",
        repo.claims()
    );
}

/// A path another process stages while the pre-commit runs goes into the commit unchecked
/// (git reads the index again after the hook): the post-commit judges it, names the race, and
/// never blames `--no-verify`.
#[test]
fn a_path_staged_during_the_pre_commit_is_named_by_the_post_commit() {
    let repo = guarded();
    let a = repo.create("A");
    let b = repo.create("B");
    repo.run_in(&a, ["claim", "late.txt"]).ok();
    // After the guard's block, the pre-commit hook stages late.txt: another process's `git
    // add` landing in that moment.
    let hook_path = repo.root.join(".git/hooks/pre-commit");
    let mut text = std::fs::read_to_string(&hook_path).unwrap();
    text.push_str("\ngit add late.txt\n");
    std::fs::write(&hook_path, text).unwrap();
    write_in(&b, "late.txt", "B's late\n");
    write_in(&b, "ok.txt", "B's ok\n");
    repo.git_in(&b, ["add", "ok.txt"]);
    let out = repo.git_try(&b, ["commit", "-q", "-m", "B"]).ok();
    let files = repo.git_in(&b, ["show", "--name-only", "--format=", "HEAD"]);
    assert!(files.contains("late.txt"), "{files}");
    assert!(
        out.stderr.contains("staged while its pre-commit hook ran"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("late.txt: owned by session \"A\""),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("--no-verify"), "{}", out.stderr);
}

/// A session record stays a few hundred bytes however many new paths its commits in flight
/// claim (every reader of a record, the guard naming an owner first, parses it whole): their
/// path lists live in `in-flight/<label>.toml`. A store from before that, whose record embeds
/// them, is honoured as it is and moved out by the next write of claims.
#[test]
fn commits_in_flight_keep_the_session_record_small_and_old_stores_are_moved_out() {
    let repo = guarded();
    let x = repo.create("X");
    let y = repo.create("Y");
    for i in 0..2000 {
        write_in(&x, &format!("new/f{i:04}.txt"), "X\n");
    }
    repo.git_in(&x, ["add", "new"]);
    // Run by hand: in flight until HEAD moves, which it never does here.
    repo.run_in(&x, ["guard", "pre-commit"]).ok();
    let record = repo.store().join("sessions/X.toml");
    let flights = repo.store().join("in-flight/X.toml");
    let size = |p: &std::path::Path| std::fs::metadata(p).unwrap().len();
    assert!(size(&record) < 1024, "{} bytes", size(&record));
    let listed = std::fs::read_to_string(&flights).unwrap();
    assert_eq!(listed.matches("new/f").count(), 2000);
    let refused = |why: &str| {
        write_in(&y, "new/f1999.txt", "Y\n");
        repo.git_in(&y, ["add", "new/f1999.txt"]);
        let out = repo.git_try(&y, ["commit", "-q", "-m", "Y"]).fails(1);
        assert!(
            out.stderr.contains("session \"X\""),
            "{why}: {}",
            out.stderr
        );
        repo.git_in(&y, ["reset", "-q"]);
    };
    refused("in flight");

    // The same store as an older version wrote it: the entry embedded in the record.
    let entry = listed
        .split_once("[[commits]]")
        .map(|(_, rest)| rest)
        .unwrap();
    let old = format!(
        "{}\n[[in_flight]]{entry}",
        std::fs::read_to_string(&record).unwrap()
    );
    std::fs::write(&record, old).unwrap();
    std::fs::remove_file(&flights).unwrap();
    refused("embedded in an old record");
    assert!(!flights.exists(), "a reader wrote the store");

    // The next claim of X moves it out, and it still holds.
    repo.run_in(&x, ["claim", "other.txt"]).ok();
    assert!(size(&record) < 1024, "{} bytes", size(&record));
    assert_eq!(
        std::fs::read_to_string(&flights)
            .unwrap()
            .matches("new/f")
            .count(),
        2000
    );
    refused("moved out");

    // Cleanup takes the file with the session.
    repo.run(["cleanup", "--force", "X"]).ok();
    assert!(!flights.exists());
}
