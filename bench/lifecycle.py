#!/usr/bin/env python3
"""Benchmarks for the session lifecycle (issue: create and list speed).

  python3 bench/lifecycle.py [--files 10000] [--sessions 100] [--rounds 9] [--dir DIR]

Builds the release binary, makes a repository of --files files in a temp directory, and reports
medians and ratios measured in the same run (the machine is shared and noisy, so only ratios
against a baseline are compared with the targets):

  create: `git session create` vs a raw `git worktree add -b` of the same repository (target <= 1.05x).
          Both run with GIT_TRACE2_EVENT (the same tracing on both sides). Also what create adds
          around its own `git worktree add` (its wall time minus that git's elapsed time from
          trace2, less the same for the raw run), the part the per-round ratios blur with the
          checkout's own file-system noise.
          Nothing is deleted between rounds: on ext4 without a journal (these machines' root file
          system) creating many files right after deleting many costs seconds of kernel time, so
          a benchmark that deleted between rounds would measure the file system. Run it on a
          journaled file system, e.g. a loop mount (BENCHMARKS.md has the commands), with --dir.
  list:   `git session list --json` over --sessions sessions vs the shell loop a user would write
          (`git worktree list --porcelain`, then `git rev-list --count` and `git status --porcelain`
          in each worktree) (target >= 3x faster)
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ)
for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_SESSION"):
    ENV.pop(var, None)
ENV.update({
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
    "TZ": "UTC",
})


def sh(args, cwd, check=True, quiet=True):
    return subprocess.run(args, cwd=cwd, env=ENV, check=check,
                          stdout=subprocess.PIPE if quiet else None,
                          stderr=subprocess.PIPE if quiet else None, text=True)


def timed(args, cwd):
    start = time.perf_counter()
    sh(args, cwd)
    return time.perf_counter() - start


def make_repo(base, files, per_dir=100):
    repo = os.path.join(base, "repo")
    os.makedirs(repo)
    sh(["git", "init", "-q", "-b", "main"], repo)
    for i in range(files):
        d = os.path.join(repo, "src", f"d{i // per_dir:04d}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{i:05d}.txt"), "w") as f:
            f.write(f"file {i}\n" * 4)
    sh(["git", "add", "-A"], repo)
    sh(["git", "commit", "-q", "-m", "initial"], repo)
    return repo


def bench_create(binary, repo, rounds):
    """Medians of alternating raw and ours, with no deletions until every round is done."""
    wt_dir = repo + ".sessions"
    os.makedirs(wt_dir, exist_ok=True)
    raw, ours, outside, raw_outside = [], [], [], []
    for i in range(rounds + 1):
        p = os.path.join(wt_dir, f"raw-{i}")
        traces = {which: os.path.join(os.path.dirname(repo), f"trace2-{which}-{i}.json")
                  for which in ("raw", "ours")}
        cmds = {
            "raw": ["git", "worktree", "add", "-q", "-b", f"raw/{i}", p, "main"],
            "ours": [binary, "create", f"b{i}"],
        }
        # Alternate which goes first, and flush writeback before each, so neither pays for the
        # other's dirty pages.
        order = ["raw", "ours"] if i % 2 else ["ours", "raw"]
        times = {}
        for which in order:
            sh(["sync"], repo)
            # git's own trace of each `git worktree add` (the raw one, and the one create runs):
            # its elapsed time, so what create adds around it is measured in the same run, apart
            # from the checkout's file-system noise. Both sides pay the same tracing.
            ENV["GIT_TRACE2_EVENT"] = traces[which]
            try:
                times[which] = timed(cmds[which], repo)
            finally:
                ENV.pop("GIT_TRACE2_EVENT", None)
        if i > 0:  # round 0 warms the caches
            raw.append(times["raw"])
            ours.append(times["ours"])
            outside.append(times["ours"] - git_elapsed(traces["ours"]))
            raw_outside.append(times["raw"] - git_elapsed(traces["raw"]))
    ratios = sorted(o / r for o, r in zip(ours, raw))
    return (statistics.median(raw), statistics.median(ours), ratios, statistics.median(outside),
            statistics.median(raw_outside))


def git_elapsed(trace):
    """Seconds the top-level git process of a trace2 event file ran (its `exit` event)."""
    import json
    elapsed = None
    with open(trace) as f:
        for line in f:
            event = json.loads(line)
            if event.get("event") == "exit" and "/" not in event.get("sid", ""):
                elapsed = event["t_abs"]
    if elapsed is None:
        sys.exit(f"no top-level exit event in {trace}")
    return elapsed


def fsyncs(binary, repo):
    """fsync-family calls one `git session create` makes itself and through git (strace -f)."""
    if shutil.which("strace") is None:
        return None
    out = subprocess.run(["strace", "-f", "-c", "-e", "trace=fsync,fdatasync,sync_file_range",
                          binary, "create", "strace-probe"], cwd=repo, env=ENV,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    total = 0
    for line in out.stderr.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[-1] in ("fsync", "fdatasync", "sync_file_range"):
            total += int(parts[3])
    return total


def loop_baseline(repo):
    """The shell loop a user would write, as one bash process."""
    script = r'''
git worktree list --porcelain | sed -n 's/^worktree //p' | while read -r wt; do
  b=$(git -C "$wt" symbolic-ref -q --short HEAD) || continue
  git -C "$wt" rev-list --count "main..$b" >/dev/null
  git -C "$wt" status --porcelain | wc -l >/dev/null
done
'''
    return timed(["bash", "-c", script], repo)


def bench_list(binary, repo, sessions, rounds):
    for i in range(sessions):
        sh([binary, "create", f"s{i:03d}"], repo)
    # A little real state: a commit and a dirty file in some sessions.
    for i in range(0, sessions, 10):
        wt = os.path.join(repo + ".sessions", f"s{i:03d}")
        with open(os.path.join(wt, "note.txt"), "w") as f:
            f.write("wip\n")
    loop_baseline(repo)
    sh([binary, "list", "--json"], repo)
    base, ours = [], []
    for _ in range(rounds):
        base.append(loop_baseline(repo))
        ours.append(timed([binary, "list", "--json"], repo))
    return statistics.median(base), statistics.median(ours)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--sessions", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--only", choices=["create", "list"])
    ap.add_argument("--dir", help="where to build the repository (a journaled mount)")
    args = ap.parse_args()
    sh(["cargo", "build", "--release", "--quiet"], ROOT, quiet=False)
    binary = os.path.join(ROOT, "target", "release", "git-session")
    base = tempfile.mkdtemp(prefix="gs-bench-", dir=args.dir)
    try:
        repo = make_repo(base, args.files)
        print(f"repository: {args.files} files; {os.cpu_count()} cpus")
        if args.only in (None, "create"):
            r, o, ratios, outside, raw_outside = bench_create(binary, repo, args.rounds)
            print(f"create: git worktree add {r*1000:.1f} ms, git session create {o*1000:.1f} ms, "
                  f"ratio of medians {o/r:.3f}x, median of per-round ratios "
                  f"{statistics.median(ratios):.3f}x (target <= 1.05x); per round: "
                  + " ".join(f"{x:.3f}" for x in ratios))
            print(f"create: outside its `git worktree add` (git's trace2 elapsed time subtracted), "
                  f"median {outside*1000:.1f} ms, {(r + outside) / r:.3f}x the raw median; "
                  f"the raw run's own outside (process start-up, the same tracing) "
                  f"{raw_outside*1000:.1f} ms, so create adds {(outside - raw_outside)*1000:.1f} ms, "
                  f"{(r + outside - raw_outside) / r:.3f}x")
            n = fsyncs(binary, repo)
            if n is not None:
                print(f"create: {n} fsync calls in one create (strace -f)")
        if args.only in (None, "list"):
            b, o = bench_list(binary, repo, args.sessions, args.rounds)
            print(f"list: shell loop {b*1000:.1f} ms, git session list --json {o*1000:.1f} ms, "
                  f"{b/o:.2f}x faster (target >= 3x) over {args.sessions} sessions")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
