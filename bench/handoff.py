#!/usr/bin/env python3
"""Benchmarks for handoff notes (the context hook injects the latest one at SessionStart).

  python3 bench/handoff.py [--versions 1000] [--rounds 15]

Builds the release binary, makes a repository with one session, and reports medians and ratios
measured in the same run against `git rev-parse HEAD` (the cost of starting a process that opens
the repository); the machine is shared and noisy, so only ratios are compared with targets:

  show-1:     `git session handoff show LABEL` with 1 stored version      (target <= 2x baseline)
  show-many:  the same with --versions stored versions                    (target <= 1.5x show-1:
              finding the latest reads one directory, never the older notes)
  write:      `git session handoff write` of a 2 KB note (lockfile protocol, fsync, last_seen)
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ)
for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_SESSION", "GIT_SESSION_NOW"):
    ENV.pop(var, None)
ENV.update({
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
    "TZ": "UTC",
})
NOTE = ("# Handoff: bench\n\n## In-Flight State\n" + "x" * 70 + "\n") * 20


def sh(args, cwd, stdin=None):
    return subprocess.run(args, cwd=cwd, env=ENV, check=True, input=stdin,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def median_time(args, cwd, rounds, stdin=None):
    sh(args, cwd, stdin)  # warm
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        sh(args, cwd, stdin)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--versions", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    binary = os.path.join(ROOT, "target", "release", "git-session")
    with tempfile.TemporaryDirectory(prefix="gs-bench-handoff") as base:
        ENV["HOME"] = base
        repo = os.path.join(base, "repo")
        os.makedirs(repo)
        sh(["git", "init", "-q", "-b", "main"], repo)
        with open(os.path.join(repo, "README.md"), "w") as f:
            f.write("bench\n")
        sh(["git", "add", "README.md"], repo)
        sh(["git", "commit", "-q", "-m", "initial"], repo)
        for label in ("one", "many"):
            sh([binary, "create", label], repo)
        sh([binary, "handoff", "write", "-s", "one", "-"], repo, NOTE)
        for _ in range(args.versions):
            sh([binary, "handoff", "write", "-s", "many", "-"], repo, NOTE)

        baseline = median_time(["git", "rev-parse", "HEAD"], repo, args.rounds)
        show_one = median_time([binary, "handoff", "show", "one"], repo, args.rounds)
        show_many = median_time([binary, "handoff", "show", "many"], repo, args.rounds)
        write = median_time([binary, "handoff", "write", "-s", "one", "-"], repo, args.rounds,
                            NOTE)
    ms = lambda s: f"{s * 1000:.1f} ms"
    print(f"baseline  git rev-parse HEAD            {ms(baseline)}")
    print(f"show-1    handoff show (1 version)      {ms(show_one)}  "
          f"{show_one / baseline:.2f}x baseline (target <= 2x)")
    print(f"show-many handoff show ({args.versions} versions) {ms(show_many)}  "
          f"{show_many / show_one:.2f}x show-1 (target <= 1.5x)")
    print(f"write     handoff write (2 KB)          {ms(write)}  {write / baseline:.2f}x baseline")
    ok = show_one / baseline <= 2 and show_many / show_one <= 1.5
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
