//! Random concurrent operations with kill -9 at random moments (issue 28), from a fixed seed
//! printed with every failure: each round starts three commands at once (create, commit, merge,
//! merge --keep, cleanup) on a few labels and SIGKILLs one of them at a random instant (its git
//! children run on, as they would; one kill in three takes them too, as a machine crash would). After each round the next command must leave:
//! the main worktree matching main, every listed session either whole (git knows its worktree,
//! no tracked file missing) or damaged / missing and finished by one `cleanup`, no panic and no
//! hang; and at the end every line a commit that succeeded added is in some branch or archive.
//!
//! `GIT_SESSION_STRESS_SEED` replays a run; `GIT_SESSION_STRESS_SECS` (default 40) bounds it.

use crate::common::{to_run, Run, TestRepo};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// xorshift64*: the same seed, the same run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const LABELS: [&str; 4] = ["s0", "s1", "s2", "s3"];

/// One operation, as the command that runs it (a shell for a commit, which prints the line it
/// committed).
fn operation(repo: &TestRepo, rng: &mut Rng, serial: u64) -> (String, std::process::Command) {
    let label = LABELS[rng.below(LABELS.len() as u64) as usize];
    let wt = repo.sessions_dir().join(label);
    match rng.below(8) {
        0 | 1 => (format!("create {label}"), {
            let mut c = repo.cmd_in(&repo.root);
            c.args(["create", label]);
            c
        }),
        2..=4 => {
            let token = format!("{label}-line-{serial}");
            let script = format!(
                "cd {wt} 2>/dev/null || exit 3; echo {token} >> {label}.txt && \
                 git add {label}.txt && git commit -q -m {token} && echo {token}",
                wt = wt.display()
            );
            let mut c = repo.git_cmd(&repo.root);
            c.env("GIT_SESSION", label);
            let mut sh = std::process::Command::new("sh");
            for (k, v) in c.get_envs() {
                match v {
                    Some(v) => sh.env(k, v),
                    None => sh.env_remove(k),
                };
            }
            sh.args(["-c", &script]);
            (format!("commit in {label}"), sh)
        }
        n => {
            let args: &[&str] = match n {
                5 => &["merge", label],
                6 => &["merge", "--keep", label],
                _ => &["cleanup", label],
            };
            let mut c = repo.cmd_in(&repo.root);
            c.args(args);
            // One in three stops itself at one of the transactions' steps, which a kill from
            // outside rarely lands between.
            let mut what = args.join(" ");
            if rng.below(3) == 0 {
                let step = STEPS[rng.below(STEPS.len() as u64) as usize];
                c.env("GIT_SESSION_TEST_KILL_AT", step);
                what.push_str(&format!(" (stops at {step})"));
            }
            (what, c)
        }
    }
}

/// The named steps of `merge` and `cleanup` (src/base/failpoint.rs).
const STEPS: [&str; 12] = [
    "merge:journal-written",
    "merge:base-moved",
    "merge:base-worktree-updated",
    "merge:session-moved",
    "merge:session-worktree-updated",
    "merge:applied",
    "cleanup:journal-written",
    "cleanup:worktree-removed",
    "cleanup:branch-deleted",
    "cleanup:record-removed",
    "cleanup-finish:journal-written",
    "cleanup-finish:directory-removed",
];

/// `pid` and every process below it, parents first (from `/proc/<pid>/stat`'s parent field),
/// each stopped as it is found, so none starts another meanwhile.
fn with_descendants(pid: u32) -> Vec<u32> {
    let stop = |p: u32| {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(p as i32),
            nix::sys::signal::Signal::SIGSTOP,
        );
    };
    stop(pid);
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let parent = out[i];
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(child) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let ppid = stat
                .rsplit_once(") ")
                .and_then(|(_, rest)| rest.split(' ').nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if ppid == Some(parent) && !out.contains(&child) {
                stop(child);
                out.push(child);
            }
        }
        i += 1;
    }
    out
}

/// Starts `cmd`; its result arrives on the returned channel.
fn start(mut cmd: std::process::Command) -> (u32, mpsc::Receiver<Run>) {
    use std::process::Stdio;
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(to_run(child.wait_with_output().unwrap()));
    });
    (pid, rx)
}

#[test]
fn random_operations_killed_at_random_leave_what_the_next_command_repairs() {
    let seed: u64 = std::env::var("GIT_SESSION_STRESS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(28);
    let budget = std::env::var("GIT_SESSION_STRESS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    eprintln!("stress seed {seed} (GIT_SESSION_STRESS_SEED={seed} replays it), {budget} s");
    let mut rng = Rng(seed.max(1));
    let repo = TestRepo::new();
    for i in 0..10 {
        repo.write(&format!("src/f{i}.txt"), &format!("{i}\n"));
    }
    repo.git(["add", "-A"]);
    repo.git(["commit", "-q", "-m", "files"]);
    let started = Instant::now();
    let mut committed: Vec<String> = Vec::new();
    let (mut rounds, mut kills) = (0, 0);
    let mut killed: Vec<String> = Vec::new();
    let mut seen = std::collections::BTreeMap::<&str, usize>::new();
    while started.elapsed() < Duration::from_secs(budget) {
        rounds += 1;
        let at = format!("seed {seed}, round {rounds}");
        let kills_before = killed.len();
        let mut running = Vec::new();
        for n in 0..3 {
            let (what, cmd) = operation(&repo, &mut rng, rounds * 10 + n);
            let (pid, rx) = start(cmd);
            running.push((what, pid, rx));
        }
        let victim = (rng.below(4) < 3).then(|| rng.below(3) as usize);
        if let Some(v) = victim {
            std::thread::sleep(Duration::from_millis(rng.below(200)));
            // One kill in three takes its git children with it, as a machine crash would.
            let whole_tree = rng.below(3) == 0;
            let victims = if whole_tree {
                with_descendants(running[v].1)
            } else {
                vec![running[v].1]
            };
            for pid in victims {
                let pid = nix::unistd::Pid::from_raw(pid as i32);
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            }
        }
        for (i, (what, _, rx)) in running.into_iter().enumerate() {
            let out = rx
                .recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|_| panic!("{at}: `{what}` hung"));
            assert!(!out.stderr.contains("panicked"), "{at}: `{what}`: {out:?}");
            if out.code == -1 {
                kills += 1;
                killed.push(what.clone());
            }
            if victim != Some(i) && what.starts_with("commit") && out.code == 0 {
                committed.push(out.stdout.trim().to_string());
            }
        }
        // What a killed git child left is finished by then, and its locks have aged.
        if killed.len() > kills_before {
            std::thread::sleep(Duration::from_millis(2300));
        }
        check(&repo, &at, &mut seen);
    }
    eprintln!(
        "{rounds} rounds, {kills} kills ({}), {} commits; repaired: {seen:?}",
        killed.join("; "),
        committed.len()
    );
    nothing_committed_is_lost(&repo, &committed, seed);
}

/// The invariants after a round, through the next command (`list --json`, which recovers).
fn check(repo: &TestRepo, at: &str, seen: &mut std::collections::BTreeMap<&str, usize>) {
    let list = repo.run(["list", "--json"]);
    assert_eq!(list.code, 0, "{at}: {list:?}");
    for (phrase, name) in [
        ("completed the interrupted merge", "merge completed"),
        ("rolled back the interrupted merge", "merge undone"),
        ("interrupted creation", "creation"),
        ("removed git's lock", "git lock removed"),
        ("is damaged", "damaged"),
    ] {
        *seen.entry(name).or_default() += list.stderr.matches(phrase).count();
    }
    assert!(!list.stderr.contains("panicked"), "{at}: {list:?}");
    let main = repo.git(["status", "--porcelain", "--untracked-files=no"]);
    assert_eq!(main, "", "{at}: the main worktree matches main\n{list:?}");
    for s in list.json().as_array().unwrap() {
        let label = s["label"].as_str().unwrap();
        let state = s["state"].as_str().unwrap();
        let path = std::path::PathBuf::from(s["path"].as_str().unwrap());
        if state == "damaged" || state == "missing" {
            let out = repo.run(["cleanup", label]);
            assert_eq!(out.code, 0, "{at}: {label} {state}, cleaned up: {out:?}");
            continue;
        }
        if state == "creating" {
            continue;
        }
        let status = repo.git_try(&path, ["status", "--porcelain"]);
        assert_eq!(
            status.code, 0,
            "{at}: git knows {label}'s worktree: {status:?}"
        );
        assert!(
            !status
                .stdout
                .lines()
                .any(|l| l.starts_with(" D") || l.starts_with("D ")),
            "{at}: no tracked file missing in {label}: {}",
            status.stdout
        );
    }
}

/// Every line a successful commit added is in a branch or an archive.
fn nothing_committed_is_lost(repo: &TestRepo, committed: &[String], seed: u64) {
    let refs = repo.git([
        "for-each-ref",
        "--format=%(refname)",
        "refs/heads",
        "refs/session-archive",
    ]);
    let mut held = String::new();
    for r in refs.lines() {
        for label in LABELS {
            let shown = repo.git_try(&repo.root, ["show", &format!("{r}:{label}.txt")]);
            held.push_str(&shown.stdout);
        }
    }
    for token in committed {
        assert!(
            held.lines().any(|l| l == token),
            "seed {seed}: the commit of {token} is in no branch or archive"
        );
    }
}
