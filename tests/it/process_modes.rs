//! The lifecycle in each of the three ways process facts come (src/base/process): `/proc`
//! (Linux), the tools every Unix ships (`ps` and `lsof`: macOS's way, forced here with
//! `GIT_SESSION_PROCESS_FACTS=tools` and run with the real procps `ps` and Debian `lsof`), and
//! existence only (neither). The class: where a mode can see a fact, removals and locks are
//! decided by it exactly as with `/proc`; where it cannot, the answer is "cannot tell", never
//! "nobody" or "dead", and says which tool failed and how; the guard never runs a tool, and the
//! context hook at most one `ps` per agent process.
//!
//! The tools mode is skipped, saying so, where `lsof` is not installed (.ci/run installs it).

use crate::common::{self, hostname, sleeper_in, start_of, to_run, Run, TestRepo};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const FACTS: &str = "GIT_SESSION_PROCESS_FACTS";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Proc,
    Tools,
    ExistenceOnly,
}

impl Mode {
    fn knob(self) -> &'static str {
        match self {
            Mode::Proc => "proc",
            Mode::Tools => "tools",
            Mode::ExistenceOnly => "existence-only",
        }
    }

    /// Whether this mode sees who works in a directory and when a process started.
    fn sees(self) -> bool {
        self != Mode::ExistenceOnly
    }
}

/// The modes this machine can run: the tools mode needs `ps` and `lsof`.
fn modes() -> Vec<Mode> {
    let runs = |tool: &str, arg: &str| {
        Command::new(tool)
            .arg(arg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let mut modes = vec![Mode::Proc, Mode::ExistenceOnly];
    if runs("ps", "-A") && runs("lsof", "-v") {
        modes.insert(1, Mode::Tools);
    } else {
        eprintln!("SKIPPED: the tools mode (ps or lsof is not installed; .ci/run installs lsof)");
    }
    modes
}

/// `git-session ARGS` in `mode`, from `dir`, with any extra environment; `prune` runs with the
/// clock a day ahead, so a session made now is old enough for `--older-than 1h`.
fn run(repo: &TestRepo, mode: Mode, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = repo.cmd_in(dir);
    cmd.env(FACTS, mode.knob()).args(args);
    if args.first() == Some(&"prune") {
        let tomorrow = (chrono::Utc::now() + chrono::Duration::days(1)).to_rfc3339();
        cmd.env("GIT_SESSION_NOW", tomorrow);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    to_run(cmd.output().unwrap())
}

/// A session whose branch has one commit, made in its worktree.
fn with_work(repo: &TestRepo, label: &str) -> PathBuf {
    let wt = repo.create(label);
    repo.commit_file(&wt, &format!("{label}.txt"), "work\n", "work");
    wt
}

#[test]
fn removals_go_ahead_where_the_mode_sees_and_refuse_saying_why_where_it_cannot() {
    for mode in modes() {
        let repo = TestRepo::new();
        let root = repo.root.clone();
        // merge: the session's work reaches main, then the session goes.
        let merged = with_work(&repo, "fix");
        let out = run(&repo, mode, &root, &["merge", "fix"], &[]);
        // cleanup of a clean, merged session, without --force.
        let clean = repo.create("clean");
        let cleaned = run(&repo, mode, &root, &["cleanup", "clean"], &[]);
        // prune of an old, merged, clean one.
        let old = repo.create("old");
        let pruned = run(&repo, mode, &root, &["prune", "--older-than", "1h"], &[]);
        if mode.sees() {
            assert_eq!(out.code, 0, "{mode:?}: {out:?}");
            assert_eq!(repo.git(["show", "main:fix.txt"]), "work\n", "{mode:?}");
            assert!(!merged.exists(), "{mode:?}: merge cleans up");
            assert_eq!(cleaned.code, 0, "{mode:?}: {cleaned:?}");
            assert!(!clean.exists(), "{mode:?}");
            assert_eq!(pruned.code, 0, "{mode:?}: {pruned:?}");
            assert!(!old.exists(), "{mode:?}: {pruned:?}");
            assert!(repo
                .git(["for-each-ref", "refs/session-archive"])
                .is_empty());
        } else {
            // The merge goes ahead (a process inside holds back only the removal), and the
            // session is kept, saying why.
            assert_eq!(out.code, 0, "{mode:?}: {out:?}");
            assert_eq!(repo.git(["show", "main:fix.txt"]), "work\n", "{mode:?}");
            assert!(
                out.stderr
                    .contains("kept session \"fix\": whether other processes work inside"),
                "{mode:?}: {out:?}"
            );
            for refused in [&out, &cleaned] {
                assert!(
                    refused
                        .stderr
                        .contains("this platform does not show the current directory of a process"),
                    "{mode:?}: {refused:?}"
                );
            }
            assert_eq!(cleaned.code, 1, "{mode:?}: {cleaned:?}");
            assert!(merged.exists() && clean.exists() && old.exists());
            assert!(pruned.stdout.contains("kept old"), "{pruned:?}");
        }
    }
}

#[test]
fn a_process_inside_is_named_where_the_mode_sees_it_and_the_asking_shell_never_is() {
    for mode in modes() {
        let repo = TestRepo::new();
        let wt = repo.create("busy");
        let mut sleeper = sleeper_in(&wt);
        // Asked from a shell standing inside, as a person would: the shell is the asker.
        let mut cmd = Command::new("bash");
        common::hermetic(&mut cmd, &repo.home);
        let out = cmd
            .env(FACTS, mode.knob())
            .current_dir(&wt)
            .args(["-c", "git session cleanup busy"])
            .output()
            .unwrap();
        let _ = sleeper.kill();
        let _ = sleeper.wait();
        let out = to_run(out);
        assert_eq!(out.code, 1, "{mode:?}: {out:?}");
        assert!(wt.join("README.md").exists(), "{mode:?}");
        if mode.sees() {
            assert!(
                out.stderr
                    .contains(&format!("pid {}: sleep 60", sleeper.id())),
                "{mode:?}: {out:?}"
            );
            assert!(!out.stderr.contains("bash"), "{mode:?}: {out:?}");
        } else {
            assert!(
                out.stderr.contains("current directory of a process"),
                "{mode:?}: {out:?}"
            );
        }
        // Once it has gone, the same command goes ahead where the mode sees.
        let again = run(&repo, mode, &repo.root.clone(), &["cleanup", "busy"], &[]);
        assert_eq!(again.code, if mode.sees() { 0 } else { 1 }, "{again:?}");
    }
}

/// The start time `ps` shows for `pid` (seconds since the epoch), read as the tools mode reads it.
fn ps_start(pid: u32) -> u64 {
    let out = Command::new("ps")
        .args(["-o", "lstart=", "-p", &pid.to_string()])
        .env("LC_ALL", "C")
        .env("TZ", "UTC0")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let words: Vec<&str> = text.split_whitespace().collect();
    let at = chrono::NaiveDateTime::parse_from_str(&words[1..].join(" "), "%b %d %H:%M:%S %Y")
        .unwrap_or_else(|e| panic!("{text:?}: {e}"));
    at.and_utc().timestamp() as u64
}

#[test]
fn a_lock_of_a_running_process_is_kept_and_one_whose_pid_was_reused_is_broken() {
    for mode in modes() {
        let repo = TestRepo::new();
        let mut other = Command::new("sleep")
            .arg("60")
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let pid = other.id();
        repo.create("held");
        let lock = repo.store().join("sessions/held.op.lock");
        // The owner line each mode writes: `/proc`'s ticks, or a wall-clock bound `@<secs>`
        // at or after the start (what the tools and existence-only modes record).
        let (running, reused) = match mode {
            Mode::Proc => (start_of(pid).to_string(), (start_of(pid) + 1).to_string()),
            Mode::Tools => (
                format!("@{}", chrono::Utc::now().timestamp()),
                format!("@{}", ps_start(pid) - 3600),
            ),
            Mode::ExistenceOnly => {
                let now = chrono::Utc::now().timestamp();
                (format!("@{now}"), format!("@{}", now - 3600))
            }
        };
        let root = repo.root.clone();
        std::fs::write(&lock, format!("{pid} {running} {}\n", hostname())).unwrap();
        let busy = run(&repo, mode, &root, &["prune", "--older-than", "1h"], &[]);
        assert!(
            busy.stdout.contains("kept held: busy"),
            "{mode:?}: {busy:?}"
        );
        assert!(lock.exists(), "{mode:?}");
        std::fs::write(&lock, format!("{pid} {reused} {}\n", hostname())).unwrap();
        // (prune's lock takes no wait: it breaks a stale lock on one attempt, takes it on the next)
        run(&repo, mode, &root, &["prune", "--older-than", "1h"], &[]);
        assert_eq!(!lock.exists(), mode.sees(), "{mode:?}");
        // Once the process has gone, every mode breaks it.
        other.kill().unwrap();
        other.wait().unwrap();
        run(&repo, mode, &root, &["prune", "--older-than", "1h"], &[]);
        assert!(!lock.exists(), "{mode:?}");
    }
}

/// A directory of links to every program on `PATH` but `lsof`, plus the given scripts.
fn path_with(repo: &TestRepo, scripts: &[(&str, &str)], drop_lsof: bool) -> String {
    use std::os::unix::fs::PermissionsExt;
    let dir = repo.base().join("tools-bin");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, body) in scripts {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let bin_dir = common::bin().parent().unwrap().to_path_buf();
    let rest = std::env::var("PATH").unwrap_or_default();
    if !drop_lsof {
        return format!("{}:{}:{rest}", dir.display(), bin_dir.display());
    }
    for from in std::env::split_paths(&rest) {
        let Ok(entries) = std::fs::read_dir(&from) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let to = dir.join(&name);
            if name != "lsof" && !to.exists() {
                let _ = std::os::unix::fs::symlink(entry.path(), to);
            }
        }
    }
    format!("{}:{}", dir.display(), bin_dir.display())
}

/// Whether lsof runs here; the tests of its failures need the tools mode otherwise working.
fn tools_here() -> bool {
    modes().contains(&Mode::Tools)
}

#[test]
fn lsof_missing_failing_or_hanging_is_cannot_tell_within_its_deadline_saying_why() {
    if !tools_here() {
        return;
    }
    let repo = TestRepo::new();
    let root = repo.root.clone();
    let wt = repo.create("clean");
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, bool, &'a str);
    let cases: [Case; 3] = [
        (
            "missing",
            vec![],
            true,
            "lsof is not installed (not on PATH)",
        ),
        (
            "failing",
            vec![("lsof", "exit 3")],
            false,
            "lsof failed (exit 3)",
        ),
        (
            "hanging",
            vec![("lsof", "exec sleep 60")],
            false,
            "lsof did not answer within 1s",
        ),
    ];
    for (name, scripts, drop_lsof, why) in cases {
        let path = path_with(&repo, &scripts, drop_lsof);
        let started = std::time::Instant::now();
        let out = run(
            &repo,
            Mode::Tools,
            &root,
            &["cleanup", "clean"],
            &[
                ("PATH", path.as_str()),
                ("GIT_SESSION_PROCESS_TOOLS_DEADLINE_MS", "1000"),
            ],
        );
        // Not a speed target: a hanging tool must not hang the command (its sleep runs 60 s).
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{name}"
        );
        assert_eq!(out.code, 1, "{name}: {out:?}");
        assert!(out.stderr.contains(why), "{name}: {out:?}");
        assert!(wt.join("README.md").exists(), "{name}");
        if name == "hanging" {
            repo.insta().bind(|| {
                insta::assert_snapshot!("cleanup_lsof_hanging", out.stderr);
            });
        }
    }
    // The real lsof again: removed.
    let out = run(&repo, Mode::Tools, &root, &["cleanup", "clean"], &[]);
    assert_eq!(out.code, 0, "{out:?}");
}

#[test]
fn one_command_reads_the_tools_once_the_guard_never_and_the_hook_once_per_agent() {
    if !tools_here() {
        return;
    }
    let repo = TestRepo::new();
    let root = repo.root.clone();
    let log = repo.base().join("tools.log");
    let logged = |tool: &str| {
        format!(
            "echo {tool} >> '{}'\nfor d in $(echo \"$ORIGINAL_PATH\" | tr ':' ' '); do \
             [ -x \"$d/{tool}\" ] && exec \"$d/{tool}\" \"$@\"; done\nexit 127",
            log.display()
        )
    };
    let (ps, lsof) = (logged("ps"), logged("lsof"));
    let path = path_with(&repo, &[("ps", &ps), ("lsof", &lsof)], false);
    let original = std::env::var("PATH").unwrap_or_default();
    let env = [
        ("PATH", path.as_str()),
        ("ORIGINAL_PATH", original.as_str()),
    ];
    let calls = || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_file(&log);
        text
    };
    // The guard on, and three sessions a cron prune removes in one run.
    run(&repo, Mode::Tools, &root, &["hooks", "install"], &env);
    let wts: Vec<PathBuf> = ["a", "b", "c"]
        .iter()
        .map(|l| {
            let out = run(&repo, Mode::Tools, &root, &["create", l], &env);
            assert_eq!(out.code, 0, "{out:?}");
            PathBuf::from(out.stdout.trim_end())
        })
        .collect();
    assert_eq!(calls(), "", "create decides no removal");
    let pruned = run(
        &repo,
        Mode::Tools,
        &root,
        &["prune", "--older-than", "1h"],
        &env,
    );
    assert_eq!(pruned.code, 0, "{pruned:?}");
    assert!(wts.iter().all(|w| !w.exists()), "{pruned:?}");
    assert_eq!(
        calls().matches("lsof").count(),
        1,
        "one reading for all three"
    );

    // Commits through the guard, one of them refused: no tool at all.
    let a = run(&repo, Mode::Tools, &root, &["create", "a"], &env);
    let a = PathBuf::from(a.stdout.trim_end());
    let b = run(&repo, Mode::Tools, &root, &["create", "b"], &env);
    let b = PathBuf::from(b.stdout.trim_end());
    let git = |dir: &Path, args: &[&str]| {
        let mut cmd = repo.git_cmd(dir);
        for (k, v) in env {
            cmd.env(k, v);
        }
        to_run(cmd.env(FACTS, "tools").args(args).output().unwrap())
    };
    common::write_in(&a, "owned.txt", "a\n");
    git(&a, &["add", "owned.txt"]);
    let ok = git(&a, &["commit", "-qm", "a owns it"]);
    assert_eq!(ok.code, 0, "{ok:?}");
    common::write_in(&b, "owned.txt", "b\n");
    git(&b, &["add", "owned.txt"]);
    let refused = git(&b, &["commit", "-qm", "over a"]);
    assert_ne!(refused.code, 0, "the guard refuses: {refused:?}");
    assert_eq!(calls(), "", "the guard runs no tool");
    // The hook reads Claude Code's command line once per agent process (one `ps` at most, kept
    // in the agent state), and never lsof, however many tool calls come.
    let transcript = crate::context_support::transcript(&repo.base(), "t", 150_000);
    let payload = crate::context_support::post_tool_use("claude", &a, &transcript);
    let mut env_hook: Vec<(&str, &str)> = env.to_vec();
    env_hook.push((FACTS, "tools"));
    for _ in 0..3 {
        crate::context_support::hook(&repo, &payload, &env_hook);
    }
    let hook_calls = calls();
    assert!(
        hook_calls.is_empty() || hook_calls == "ps\n",
        "the hook runs at most one ps: {hook_calls:?}"
    );
}
