#!/usr/bin/env python3
"""Per-worktree cost of the dirty-file count behind `git session list`.

  python3 bench/status.py [--files 10000] [--rounds 21]
  python3 bench/status.py --attached 50 [--files 10000] [--rounds 9] [--before REV]

Builds the `status_micro` example (bench/micro/status_micro.rs, release), makes a repository of --files files with one linked
worktree holding an untracked file and a modified one, lets `git status` settle the index once
(a second after the checkout, so no entry is racily clean),
then reports, measured in the same process: git_session::git::status::dirty_files (in-process,
parallel, and with RAYON_NUM_THREADS=1), libgit2's statuses() (the previous implementation) and
`git status --porcelain` (a child process, as the shell loop runs it): median wall time and mean
CPU time per call. The three path counts must agree.

With --attached N: N sessions attached to the main worktree of a --files repository (`create
--attach`, which share that one worktree), one file modified and one untracked; then, alternating
in every round, one `git status --porcelain` there, `git session list --json` (the installed
form built from this checkout) and, with --before, the same built from REV. Medians, and the
ratios to the one `git status` (the cost of one walk): `list` must cost one walk per distinct
worktree, not one per session. With strace installed, also the stat calls each one makes.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lifecycle import ENV, ROOT, make_repo, sh, timed  # noqa: E402
import before  # noqa: E402
import installed  # noqa: E402


def micro(binary, wt, rounds, threads=None):
    env = dict(ENV)
    if threads:
        env["RAYON_NUM_THREADS"] = str(threads)
    out = subprocess.run([binary, wt, str(rounds)], env=env, check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)


def stats(args, cwd):
    """How many stat calls `args` makes (all threads), by strace; None without strace."""
    if not shutil.which("strace"):
        return None
    with tempfile.NamedTemporaryFile(mode="r", suffix=".strace") as out:
        subprocess.run(["strace", "-f", "-c", "-o", out.name,
                        "-e", "trace=newfstatat,statx,fstat,lstat,stat"] + args, cwd=cwd,
                       env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        total = 0
        for line in out.read().splitlines():
            f = line.split()
            # "% time  seconds  usecs/call  calls  [errors]  syscall"
            if len(f) >= 5 and f[-1] != "total" and f[3].isdigit():
                total += int(f[3])
        return total


def attached(args):
    new = installed.build()
    old = before.build(args.before) if args.before else None
    base = tempfile.mkdtemp(prefix="gs-bench-attached-")
    try:
        repo = make_repo(base, args.files)
        for i in range(args.attached):
            sh([new, "create", "--attach", f"s{i:03d}"], repo)
        with open(os.path.join(repo, "note.txt"), "w") as f:
            f.write("wip\n")
        with open(os.path.join(repo, "src", "d0000", "f00000.txt"), "a") as f:
            f.write("more\n")
        time.sleep(1.1)
        sh(["git", "status", "--porcelain"], repo)
        cmds = [("git status --porcelain (one walk)", ["git", "status", "--porcelain"]),
                ("git session list --json", [new, "list", "--json"])]
        if old:
            cmds.append((f"the same, built from {args.before}", [old, "list", "--json"]))
        for _, c in cmds:
            sh(c, repo)
        samples = [[] for _ in cmds]
        for r in range(args.rounds):
            order = list(range(len(cmds)))
            if r % 2:
                order.reverse()
            for i in order:
                samples[i].append(timed(cmds[i][1], repo) * 1000)
        print(f"{args.attached} sessions attached to one worktree of {args.files} files; "
              f"{os.cpu_count()} cpus; medians of {args.rounds} alternating rounds")
        walk = statistics.median(samples[0])
        for (name, c), t in zip(cmds, samples):
            m = statistics.median(t)
            n = stats(c, repo)
            calls = f"   {n:>7} stat calls" if n is not None else ""
            print(f"  {name:38} {m:8.1f} ms  {m / walk:6.2f}x one git status{calls}")
        if old:
            print(f"  after / before: {statistics.median(samples[1]) / statistics.median(samples[2]):.3f}x")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--attached", type=int, default=0)
    ap.add_argument("--before", help="with --attached: also time `list` built from this revision")
    args = ap.parse_args()
    if args.attached:
        args.rounds = args.rounds or 9
        return attached(args)
    args.rounds = args.rounds or 21
    sh(["cargo", "build", "--release", "--quiet", "--example", "status_micro"], ROOT, quiet=False)
    binary = os.path.join(ROOT, "target", "release", "examples", "status_micro")
    base = tempfile.mkdtemp(prefix="gs-bench-status-")
    try:
        repo = make_repo(base, args.files)
        wt = os.path.join(base, "wt")
        sh(["git", "worktree", "add", "-q", "-b", "wt", wt, "main"], repo)
        with open(os.path.join(wt, "note.txt"), "w") as f:
            f.write("wip\n")
        with open(os.path.join(wt, "src", "d0000", "f00000.txt"), "a") as f:
            f.write("more\n")
        # Right after the checkout, files and index share their second: every entry is racy and
        # checked by content, until git rewrites the index in a later second.
        fresh = micro(binary, wt, 3, threads=1)
        time.sleep(1.1)
        sh(["git", "status", "--porcelain"], wt)
        par = micro(binary, wt, args.rounds)
        one = micro(binary, wt, args.rounds, threads=1)
        print(f"worktree of {args.files} files; {os.cpu_count()} cpus; wall: median of "
              f"{args.rounds}, cpu: mean (user + system, all threads)")
        rows = [
            ("git status --porcelain (a process)", par["git_status"]),
            ("libgit2 statuses() (previous code)", par["libgit2"]),
            ("status::dirty_files, parallel", par["ours"]),
            ("status::dirty_files, 1 thread", one["ours"]),
        ]
        for name, t in rows:
            print(f"  {name:36} wall {t['wall_ms']:6.1f} ms   cpu {t['cpu_ms']:6.1f} ms")
        git = par["git_status"]
        print(f"  ours vs git status: {git['wall_ms'] / par['ours']['wall_ms']:.2f}x faster (wall), "
              f"{git['cpu_ms'] / par['ours']['cpu_ms']:.2f}x less cpu")
        print(f"  fresh checkout (every entry racy, so hashed): status::dirty_files 1 thread "
              f"wall {fresh['ours']['wall_ms']:.1f} ms")
        counts = {par["ours"]["paths"], par["libgit2"]["paths"], par["git_status"]["paths"]}
        print(f"  paths listed: {par['ours']['paths']} (all three agree: {len(counts) == 1})")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
