//! Creations whose process died, and what the next command makes of them: undone while git's
//! state shows them unfinished (our `git worktree add --lock` still held, or no registration),
//! completed once git registered the worktree and `create` removed its lock, so that a lost final
//! record update (a kill in the instant before it, or a machine crash: it is not fsync'd) never
//! costs the worktree someone was handed.

use crate::common::TestRepo;
use crate::create::{assert_nothing_left, slow_post_checkout};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Polls `what` every 20 ms for up to 20 s.
fn wait_for(description: &str, mut what: impl FnMut() -> bool) {
    let started = Instant::now();
    while !what() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{description} never happened"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Pids of processes whose command line is exactly `cmdline`.
fn processes(cmdline: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_str()?.parse().ok()?;
            let c = std::fs::read(e.path().join("cmdline")).ok()?;
            (String::from_utf8_lossy(&c).replace('\0', " ").trim() == cmdline).then_some(pid)
        })
        .collect()
}

#[test]
fn a_finished_creation_whose_final_record_was_lost_is_completed_not_undone() {
    let repo = TestRepo::new();
    slow_post_checkout(&repo, 2);
    let label = "handed-out";
    let record = repo.store().join(format!("sessions/{label}.toml"));
    let child = repo
        .cmd_in(&repo.root)
        .args(["create", label])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The record exactly as the store holds it while git checks out (creator and worker pids
    // included): what a machine crash before the final update reached the disk leaves.
    let wt = repo.sessions_dir().join(label);
    wait_for("the checkout", || wt.join("README.md").exists());
    let creating = std::fs::read_to_string(&record).unwrap();
    assert!(creating.contains("state = \"creating\""), "{creating}");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end(),
        wt.display().to_string()
    );
    // The path was handed out, and someone works there.
    repo.git_in(&wt, ["commit", "-q", "--allow-empty", "-m", "first step"]);
    std::fs::write(wt.join("notes.txt"), "uncommitted\n").unwrap();
    std::fs::write(&record, &creating).unwrap();

    let out = repo.run(["list", "--json"]).ok();
    assert!(
        out.stderr.contains(&format!(
            "completed the interrupted creation of session \"{label}\": git had made its worktree"
        )),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("rolled back"), "{}", out.stderr);
    let rows = out.json();
    let row = &rows.as_array().unwrap()[0];
    assert_eq!(row["label"], label);
    assert_eq!(row["state"], "active", "{row}");
    assert_eq!(
        std::fs::read_to_string(wt.join("notes.txt")).unwrap(),
        "uncommitted\n"
    );
    assert_eq!(
        repo.git(["log", "-1", "--format=%s", &format!("session/{label}")])
            .trim_end(),
        "first step"
    );
    let state = std::fs::read_to_string(&record).unwrap();
    assert!(
        state.contains("state = \"active\"")
            && !state.contains("creator")
            && !state.contains("worker"),
        "{state}"
    );
    // Once is enough: the next command has nothing to recover.
    let again = repo.run(["info", label]).ok();
    assert!(!again.stderr.contains("interrupted"), "{}", again.stderr);
    let audit = std::fs::read_to_string(repo.store().join("audit.log")).unwrap();
    assert!(audit.contains("\"roll-forward\""), "{audit}");
}

#[test]
fn a_creation_killed_during_its_setup_commands_is_rolled_back() {
    let repo = TestRepo::new();
    // A duration no other test uses, to find the command below.
    repo.write(".git-session.toml", "[create]\nrun = [\"sleep 43\"]\n");
    let mut child = repo
        .cmd_in(&repo.root)
        .args(["create", "mid-setup", "--approve-run"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for("the setup command", || !processes("sleep 43").is_empty());
    child.kill().unwrap(); // SIGKILL: no handler runs
    child.wait().unwrap();
    let out = repo.run(["list", "--json"]).ok();
    assert!(
        out.stderr
            .contains("rolled back the interrupted creation of session \"mid-setup\""),
        "{}",
        out.stderr
    );
    assert_eq!(out.json().as_array().unwrap().len(), 0);
    assert_nothing_left(&repo, "mid-setup");
    wait_for("the setup command to be stopped", || {
        processes("sleep 43").is_empty()
    });
}
