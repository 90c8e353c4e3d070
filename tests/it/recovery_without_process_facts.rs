//! The process module's "platform cannot tell" mode (what macOS, which has no /proc, answers),
//! run on Linux through its test knob: no start times, no current directories. Unknown is never
//! "dead" or "nobody": locks and `creating` records stay, removals are refused, saying why.

use crate::common::{to_run, TestRepo};
use std::process::Stdio;

const CANNOT_TELL: (&str, &str) = ("GIT_SESSION_PROCESS_FACTS", "existence-only");

/// Runs the binary in "platform cannot tell" mode, with the clock a day ahead (so that a
/// session just made is old enough for `prune --older-than 1h`).
fn run_cannot_tell(repo: &TestRepo, args: &[&str]) -> crate::common::Run {
    let tomorrow = (chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339();
    to_run(
        repo.cmd_in(&repo.root)
            .env(CANNOT_TELL.0, CANNOT_TELL.1)
            .env("GIT_SESSION_NOW", tomorrow)
            .args(args)
            .output()
            .unwrap(),
    )
}

#[test]
fn without_process_facts_a_removal_is_refused_saying_why_and_force_still_archives_first() {
    let repo = TestRepo::new();
    // `create` works the same there.
    let out = run_cannot_tell(&repo, &["create", "quiet"]);
    assert_eq!(out.code, 0, "{out:?}");
    let wt = std::path::PathBuf::from(out.stdout.trim_end());
    let refused = run_cannot_tell(&repo, &["cleanup", "quiet"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    repo.insta().bind(|| {
        insta::assert_snapshot!("cleanup_cannot_tell_occupants", refused.stderr);
    });
    assert!(wt.join("README.md").exists());
    let pruned = run_cannot_tell(&repo, &["prune", "--older-than", "1h"]);
    assert_eq!(pruned.code, 0, "{pruned:?}");
    repo.insta().bind(|| {
        insta::assert_snapshot!("prune_cannot_tell_occupants", pruned.stdout);
    });
    assert!(wt.join("README.md").exists());
    // The way the hint names: the user has checked, --force goes ahead.
    let forced = run_cannot_tell(&repo, &["cleanup", "--force", "--yes", "quiet"]);
    assert_eq!(forced.code, 0, "{forced:?}");
    assert!(!wt.exists());
    // With /proc the same session would simply have gone.
    let wt = repo.create("seen");
    repo.run(["cleanup", "seen"]).ok();
    assert!(!wt.exists());
}

#[test]
fn without_process_facts_a_running_pid_keeps_locks_and_creations_and_a_gone_one_does_not() {
    use crate::common::{hostname, mark_creating, start_of};
    let repo = TestRepo::new();
    let mut other = std::process::Command::new("sleep")
        .arg("60")
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    // A record naming a running pid with another start time: with /proc provably a reuse of a
    // dead creator's pid; without, nothing tells it from the creator itself.
    repo.create("held");
    let start = start_of(other.id()) + 1;
    mark_creating(&repo, "held", other.id(), start, &hostname());
    let listed = run_cannot_tell(&repo, &["list", "--json"]);
    assert_eq!(listed.code, 0, "{listed:?}");
    assert!(!listed.stderr.contains("interrupted"), "{}", listed.stderr);
    assert_eq!(listed.json()[0]["state"], "creating");
    let refused = run_cannot_tell(&repo, &["cleanup", "held"]);
    assert_eq!(refused.code, 1, "{refused:?}");
    crate::common::pid_host_filters(&repo).bind(|| {
        insta::assert_snapshot!("cleanup_cannot_tell_creator", refused.stderr);
    });
    let pruned = run_cannot_tell(&repo, &["prune", "--older-than", "1h"]);
    assert!(
        pruned.stdout.contains(&format!(
            "kept held: being created by pid {}, unless that pid was reused",
            other.id()
        )),
        "{pruned:?}"
    );
    // The store's own lock, held by that pid: kept there, broken with /proc.
    let lock = repo.store().join("sessions/held.op.lock");
    std::fs::write(&lock, format!("{} {start} {}\n", other.id(), hostname())).unwrap();
    let busy = run_cannot_tell(&repo, &["prune", "--older-than", "1h"]);
    assert!(busy.stdout.contains("kept held: busy"), "{busy:?}");
    assert!(lock.exists());
    // /proc tells the reuse apart: the creation is completed and the lock broken. (Named
    // explicitly: CI runs the lifecycle again with the tools mode as the harness's default.)
    let with_proc = |args: &[&str]| {
        to_run(
            repo.cmd_in(&repo.root)
                .env(CANNOT_TELL.0, "proc")
                .args(args)
                .output()
                .unwrap(),
        )
    };
    let out = with_proc(&["list", "--json"]).ok();
    assert!(
        out.stderr
            .contains("completed the interrupted creation of session \"held\""),
        "{}",
        out.stderr
    );
    // (A zero-wait lock, as prune's per-session one is, breaks the stale lock on this attempt
    // and is taken on the next.)
    with_proc(&["prune", "--older-than", "1s"]).ok();
    assert!(!lock.exists());
    let pruned = with_proc(&["prune", "--older-than", "1s"]).ok();
    assert!(!pruned.stdout.contains("busy"), "{pruned:?}");

    // A pid no process has is dead on every platform (kill(pid, 0) says so): recovered there too.
    repo.create("gone");
    let pid = other.id();
    other.kill().unwrap();
    other.wait().unwrap();
    mark_creating(&repo, "gone", pid, 0, &hostname());
    let out = run_cannot_tell(&repo, &["list", "--json"]);
    assert!(
        out.stderr
            .contains("completed the interrupted creation of session \"gone\""),
        "{out:?}"
    );
}
