//! Creations under way, and what a failed one must leave: a post-checkout hook that keeps
//! `create` inside its transaction, the check that a failed creation left nothing behind, and
//! the facts of the process behind a creation or a lock (its host, its start time) as the binary
//! records them. Shared by the create, cleanup and recovery suites.
use super::TestRepo;
use std::path::PathBuf;

/// Everything a failed creation must not leave behind.
#[track_caller]
pub fn assert_nothing_left(repo: &TestRepo, label: &str) {
    let path = repo.sessions_dir().join(label);
    assert!(!path.exists(), "directory {} left behind", path.display());
    // The worktrees directory the first create made goes too, when nothing else is in it.
    let others = std::fs::read_dir(repo.sessions_dir())
        .map(|d| d.count())
        .unwrap_or(0);
    if others == 0 {
        assert!(
            !repo.sessions_dir().exists(),
            "empty {} left behind",
            repo.sessions_dir().display()
        );
    }
    let admin = repo.root.join(".git/worktrees");
    let entries: Vec<_> = std::fs::read_dir(&admin)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(
        entries.is_empty(),
        "worktree admin entries left: {entries:?}"
    );
    let branches = repo.git(["for-each-ref", "--format=%(refname)", "refs/heads/session/"]);
    assert_eq!(branches, "", "branch left behind");
    let state = repo.store().join(format!("sessions/{label}.toml"));
    assert!(!state.exists(), "state file left behind");
    let list = repo.run(["list", "--json"]).ok().json();
    assert_eq!(
        list.as_array().unwrap().len(),
        0,
        "list still shows it: {list}"
    );
}

/// Polls `done` every 20 ms; fails the test when it has not happened within 20 s.
#[track_caller]
pub fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let started = std::time::Instant::now();
    while !done() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{what} never happened"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// `create LABEL` started in the background from the main worktree (its output piped), returned
/// once git has checked out the worktree, with that worktree's path: with a post-checkout hook
/// that holds it ([`slow_post_checkout`]), the creation is then still under way.
#[track_caller]
pub fn create_in_background(repo: &TestRepo, label: &str) -> (std::process::Child, PathBuf) {
    let child = repo
        .cmd_in(&repo.root)
        .args(["create", label])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let wt = repo.sessions_dir().join(label);
    wait_for("the checkout", || wt.join("README.md").exists());
    (child, wt)
}

pub fn slow_post_checkout(repo: &TestRepo, seconds: u32) {
    let hook = repo.root.join(".git/hooks/post-checkout");
    std::fs::write(&hook, format!("#!/bin/sh\nsleep {seconds}\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// This host's name as the kernel gives it (what the binary records).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap()
        .trim()
        .to_string()
}

/// A `sleep 60` standing in `dir`, once it shows as that command (between fork and the end of
/// exec the child briefly shows the test binary's, then an empty, argv), so that a message naming
/// it is deterministic.
pub fn sleeper_in(dir: &std::path::Path) -> std::process::Child {
    let child = std::process::Command::new("sleep")
        .arg("60")
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let cmdline = format!("/proc/{}/cmdline", child.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::fs::read(&cmdline).unwrap_or_default() != b"sleep\x0060\x00" {
        assert!(std::time::Instant::now() < deadline, "sleep never started");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child
}

/// A running process's start time as `/proc/<pid>/stat` gives it (what the binary records).
pub fn start_of(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat[stat.rfind(')').unwrap() + 1..]
        .split_whitespace()
        .nth(19)
        .unwrap()
        .parse()
        .unwrap()
}

/// Filters for messages naming a pid and this host.
pub fn pid_host_filters(repo: &TestRepo) -> insta::Settings {
    let mut s = repo.insta();
    s.add_filter(&format!(r"\b{}\b", hostname()), "[HOST]");
    s.add_filter(r"pid \d+", "pid [PID]");
    s
}

/// Rewrites a session's record as `creating`, by the given creator.
pub fn mark_creating(repo: &TestRepo, label: &str, pid: u32, start: u64, host: &str) {
    let record = repo.store().join(format!("sessions/{label}.toml"));
    let text = std::fs::read_to_string(&record)
        .unwrap()
        .replace("state = \"active\"", "state = \"creating\"");
    std::fs::write(
        &record,
        format!("{text}\n[creator]\npid = {pid}\nstart = {start}\nhost = \"{host}\"\n"),
    )
    .unwrap();
}
