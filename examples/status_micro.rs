//! Per-worktree cost of the dirty-file count, for `bench/status.py`:
//! `status_micro WORKTREE [ROUNDS] [ours]` prints, as JSON, the median milliseconds of
//! `git_session::status::dirty_files`, libgit2's `statuses()` and `git status --porcelain`
//! (a child process, as the shell loop runs it), and the three path counts.

use std::path::Path;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn time<T>(rounds: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut out = f();
    let mut times = vec![0.0];
    for _ in 0..rounds {
        let start = Instant::now();
        out = f();
        times.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    if times.len() > 1 {
        times.remove(0);
    }
    (median(times), out)
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let wt = Path::new(&args[1]);
    let rounds: usize = args.get(2).map_or(Ok(15), |r| r.parse())?;
    // `ours` alone, for profiling.
    if args.get(3).map(String::as_str) == Some("ours") {
        let (ms, paths) = time(rounds, || git_session::status::dirty_files(wt).unwrap());
        println!("{{\"ours_ms\": {ms:.3}, \"ours_paths\": {}}}", paths.len());
        return Ok(());
    }
    let (ours_ms, ours) = time(rounds, || git_session::status::dirty_files(wt).unwrap());
    let (lg2_ms, lg2) = time(rounds, || {
        let repo = git2::Repository::open(wt).unwrap();
        git_session::status::dirty_files_libgit2(&repo, wt).unwrap()
    });
    let (git_ms, git) = time(rounds, || {
        let out = std::process::Command::new("git")
            .args(["status", "--porcelain", "-z", "--untracked-files=all", "--no-renames"])
            .current_dir(wt)
            .output()
            .unwrap();
        out.stdout.split(|&b| b == 0).filter(|l| !l.is_empty()).count()
    });
    println!(
        "{{\"ours_ms\": {ours_ms:.3}, \"libgit2_ms\": {lg2_ms:.3}, \"git_status_ms\": {git_ms:.3}, \
         \"ours_paths\": {}, \"libgit2_paths\": {}, \"git_paths\": {git}}}",
        ours.len(),
        lg2.len()
    );
    Ok(())
}
