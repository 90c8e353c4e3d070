//! Per-worktree cost of the dirty-file count, for `bench/status.py`:
//! `status_micro WORKTREE [ROUNDS]` prints, as JSON, the median wall milliseconds and the mean
//! CPU milliseconds (user + system, all threads; from /proc, for a child from its waited-for
//! times) per call of `git_session::internals::dirty_files`, libgit2's `statuses()` and
//! `git status --porcelain` (a child process, as the shell loop runs it), and the three path
//! counts.

// A measuring tool run by hand: a failure to read its input is its answer.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::time::Instant;

/// (own, waited-for children) CPU time so far, in milliseconds.
fn cpu_ms() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name; utime is field 14 of the whole line.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<f64> = rest
        .split_whitespace()
        .skip(11)
        .take(4)
        .map(|v| v.parse().unwrap_or(0.0))
        .collect();
    let tick = 10.0; // USER_HZ is 100 on Linux.
    (
        (f[0] + f[1]) * tick,
        (f.get(2).copied().unwrap_or(0.0) + f.get(3).copied().unwrap_or(0.0)) * tick,
    )
}

struct Timing {
    wall_ms: f64,
    cpu_ms: f64,
    paths: usize,
}

fn time(rounds: usize, children: bool, mut f: impl FnMut() -> usize) -> Timing {
    let mut paths = f();
    let mut times = Vec::new();
    let before = cpu_ms();
    for _ in 0..rounds.max(1) {
        let start = Instant::now();
        paths = f();
        times.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    let after = cpu_ms();
    times.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let cpu = if children {
        after.1 - before.1
    } else {
        after.0 - before.0
    };
    Timing {
        wall_ms: times[times.len() / 2],
        cpu_ms: cpu / times.len() as f64,
        paths,
    }
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let wt = Path::new(&args[1]);
    let rounds: usize = args.get(2).map_or(Ok(15), |r| r.parse())?;
    let ours = time(rounds, false, || {
        git_session::internals::dirty_files(wt).unwrap().len()
    });
    let lg2 = time(rounds, false, || {
        let repo = git_session::internals::Checkout::open(wt).unwrap();
        git_session::internals::dirty_files_libgit2(&repo, wt)
            .unwrap()
            .len()
    });
    let git = time(rounds, true, || {
        let out = std::process::Command::new("git")
            .args([
                "status",
                "--porcelain",
                "-z",
                "--untracked-files=all",
                "--no-renames",
            ])
            .current_dir(wt)
            .output()
            .unwrap();
        out.stdout
            .split(|&b| b == 0)
            .filter(|l| !l.is_empty())
            .count()
    });
    let show = |name: &str, t: &Timing| {
        format!(
            "\"{name}\": {{\"wall_ms\": {:.3}, \"cpu_ms\": {:.3}, \"paths\": {}}}",
            t.wall_ms, t.cpu_ms, t.paths
        )
    };
    println!(
        "{{{}, {}, {}}}",
        show("ours", &ours),
        show("libgit2", &lg2),
        show("git_status", &git)
    );
    Ok(())
}
