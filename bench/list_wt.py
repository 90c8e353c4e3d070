#!/usr/bin/env python3
"""`git session list --json` against worktrunk's `wt list --format=json`, with and without
git's untracked cache (issue 11, item 6).

  python3 bench/list_wt.py [--wt PATH] [--scenario small|large|both|huge] [--rounds 9]
                           [--dir DIR] [--skip COLUMN ...]

--wt is a `wt` binary built from worktrunk's source (default: $WT_BIN, else `wt` on PATH); the
script never builds or fetches it, and leaves its column out when there is none. For example:
`cargo install worktrunk@0.67.0 --locked --root /work/tools/wt` (0.67.0: the newest release
that builds with rustc 1.95), then `--wt /work/tools/wt/bin/wt`.

Scenarios (every tenth session holds an untracked file):
  small: 100 sessions of a 100-file repository (10 directories of 10 files)
  large: 10 sessions of a 10k-file repository (100 directories of 100 files)
  huge:  100 sessions of a 10k-file repository (issue 21's case: 1M checked-out files, ~5 GB
         of blocks and 1M inodes; not part of `both`). Make it with --dir on a journaled file
         system with room for them (these machines' root file system is ext4 without a journal,
         where creating many files after deleting many is seconds slower), e.g. a loop mount:
           truncate -s 14G /work/bench.img && mkfs.ext4 -q -N 1600000 /work/bench.img
           mkdir -p /mnt/bench && mount -o loop /work/bench.img /mnt/bench
           python3 bench/list_wt.py --wt ... --scenario huge --dir /mnt/bench --rounds 7
         Making it takes minutes (100 checkouts of 10k files); every column is kept, and the
         floor, shell-loop and find columns each cost about as much as `list` itself or more.

--dir makes the repositories under DIR/<scenario> and leaves them there; a later run with the
same --dir reuses a scenario already made (its sessions and files untouched since, the cache
recorded again), so the huge one is made once. --skip leaves a column out (e.g. --skip find).

The repository sets `core.untrackedCache=true` and `status.showUntrackedFiles=all`, as a user
who wants git's untracked cache for `-uall` does; after the sessions are made, one `git status`
in each worktree (a second later, so no directory or entry is racy) records the cache, and the
script checks with git's trace2 statistics that git then opens no directory. Columns, measured
in rotating order every round, medians:
  ours, full walk:  `list --json` with GIT_DISABLE_UNTRACKED_CACHE=1 (git's own switch, which
                    `list` honours): every tracked directory read
  ours, UNTR:       `list --json`: the untracked cache stands in where git would use it
  wt list:          `wt list --format=json`
  shell loop:       `git -C <wt> status --porcelain -uall` for every worktree, in one bash
  floor:            one `fstatat` per tracked file of every worktree, relative to its
                    directory (opened once), and nothing else, the worktrees spread over the
                    cores (bench/micro/stat_floor.rs, release; index decoding included): what
                    any count that looks at every tracked file costs
  find:             one `lstat` per file and one `readdir` per directory of every worktree
                    (`find -printf %s`, the worktrees split over two processes): the bare
                    system calls of a full walk with nothing else, as a reference. Not a lower
                    bound for `list`: it reads every directory (the untracked cache skips
                    that) and walks serially within each process
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
import lifecycle  # noqa: E402
from lifecycle import ENV, sh  # noqa: E402
import installed  # noqa: E402


def make_repo(base, files, per_dir):
    repo = lifecycle.make_repo(base, files, per_dir)
    sh(["git", "config", "core.untrackedCache", "true"], repo)
    sh(["git", "config", "status.showUntrackedFiles", "all"], repo)
    return repo


def git_opendirs(wt):
    """Directories `git status` opens in `wt` (its trace2 statistics)."""
    with tempfile.NamedTemporaryFile(mode="r", suffix=".trace2") as t:
        env = dict(ENV, GIT_TRACE2_PERF=t.name)
        subprocess.run(["git", "--no-optional-locks", "status", "--porcelain"], cwd=wt,
                       env=env, check=True, stdout=subprocess.DEVNULL)
        for line in t.read().splitlines():
            if "..opendir:" in line:
                return int(line.split("..opendir:")[1])
    return None


def timed(args, cwd, env=None):
    start = time.perf_counter()
    subprocess.run(args, cwd=cwd, env=env or ENV, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def syscalls(args, cwd, env):
    """getdents64 and stat calls `args` makes (all threads), by strace; None without strace."""
    if not shutil.which("strace"):
        return None
    with tempfile.NamedTemporaryFile(mode="r", suffix=".strace") as out:
        subprocess.run(["strace", "-f", "-c", "-o", out.name, "-e",
                        "trace=getdents64,newfstatat,statx,fstat,lstat,stat"] + args,
                       cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        calls = {"getdents64": 0, "stat": 0}
        for line in out.read().splitlines():
            f = line.split()
            # "% time  seconds  usecs/call  calls  [errors]  syscall"
            if len(f) >= 5 and f[-1] != "total" and f[3].isdigit():
                calls["getdents64" if f[-1] == "getdents64" else "stat"] += int(f[3])
        return calls


def find(worktrees):
    """One lstat per file, one readdir per directory, over two processes."""
    halves = [worktrees[0::2], worktrees[1::2]]
    start = time.perf_counter()
    procs = [subprocess.Popen(["find"] + h + ["-name", ".git", "-prune", "-o", "-type", "f",
                                              "-printf", "%s\n"],
                              stdout=subprocess.DEVNULL) for h in halves if h]
    for p in procs:
        p.wait()
    return time.perf_counter() - start


def made(repo):
    """Whether a kept scenario (--dir) is complete: its mark is written after everything else."""
    return os.path.exists(os.path.join(repo, ".git", "bench-made"))


def scenario(binary, wt_bin, floor_bin, base, name, sessions, files, per_dir, rounds, skip):
    repo = os.path.join(base, name, "repo")
    worktrees = [os.path.join(repo + ".sessions", f"s{i:03d}") for i in range(sessions)]
    if made(repo):
        print(f"{name}: reusing {repo}")
    else:
        if os.path.exists(os.path.join(base, name)):
            sys.exit(f"{os.path.join(base, name)} holds an unfinished scenario; remove it")
        repo = make_repo(os.path.join(base, name), files, per_dir)
        for i in range(sessions):
            sh([binary, "create", f"s{i:03d}"], repo)
        for i in range(0, sessions, 10):
            with open(os.path.join(worktrees[i], "note.txt"), "w") as f:
                f.write("wip\n")
        open(os.path.join(repo, ".git", "bench-made"), "w").close()
    time.sleep(1.1)
    for wt in worktrees:
        sh(["git", "status", "--porcelain"], wt)
    opened = git_opendirs(worktrees[0])
    print(f"{name}: {sessions} sessions x {files} files; git status opens {opened} "
          f"directories with its cache recorded")

    loop = ("for wt in " + " ".join(worktrees) +
            "; do git -C \"$wt\" status --porcelain -uall >/dev/null; done")
    full_env = dict(ENV, GIT_DISABLE_UNTRACKED_CACHE="1")
    columns = {
        "ours, full walk": lambda: timed([binary, "list", "--json"], repo, full_env),
        "ours, UNTR": lambda: timed([binary, "list", "--json"], repo),
        "shell loop": lambda: timed(["bash", "-c", loop], repo),
        "find": lambda: find(worktrees),
    }
    if floor_bin:
        pairs = []
        for wt in worktrees:
            index = sh(["git", "rev-parse", "--path-format=absolute", "--git-path", "index"],
                       wt).stdout.strip()
            pairs += [wt, index]
        columns["floor"] = lambda: timed([floor_bin] + pairs, repo)
    if wt_bin:
        columns["wt list"] = lambda: timed([wt_bin, "list", "--format=json"], repo)
    for k in skip:
        columns.pop(k, None)
    # The answers agree: the same dirty counts from both walks of ours.
    counts = []
    for env in (full_env, ENV):
        rows = json.loads(subprocess.run([binary, "list", "--json"], cwd=repo, env=env,
                                         check=True, capture_output=True, text=True).stdout)
        counts.append(sorted((r["label"], r["dirty"]) for r in rows))
    assert counts[0] == counts[1], "the full walk and the cache disagree"
    print(f"  {sum(d for _, d in counts[1])} dirty files in all, by both walks")
    for label, env in (("full walk", full_env), ("UNTR", ENV)):
        calls = syscalls([binary, "list", "--json"], repo, env)
        if calls:
            print(f"  ours, {label}: {calls['getdents64']} getdents64, {calls['stat']} stat calls")
    for f in columns.values():  # warm-up
        f()
    times = {k: [] for k in columns}
    names = list(columns)
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for k in order:
            times[k].append(columns[k]())
    med = {k: statistics.median(v) for k, v in times.items()}
    for k in names:
        print(f"  {k:16s} {med[k]*1000:8.1f} ms")
    ours = med["ours, UNTR"]
    if "wt list" in med:
        print(f"  wt list / ours, UNTR: {med['wt list']/ours:.2f}x; "
              f"wt list / ours, full walk: {med['wt list']/med['ours, full walk']:.2f}x")
    ratios = []
    if "shell loop" in med:
        ratios.append(f"shell loop / ours, UNTR: {med['shell loop']/ours:.2f}x")
    if "find" in med:
        ratios.append(f"ours, UNTR / find: {ours/med['find']:.2f}x")
    ratios.append(f"full walk / UNTR: {med['ours, full walk']/ours:.2f}x")
    print("  " + "; ".join(ratios))
    if "floor" in med:
        print(f"  ours, UNTR / floor: {ours/med['floor']:.2f}x; "
              f"ours, full walk / floor: {med['ours, full walk']/med['floor']:.2f}x")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wt", default=os.environ.get("WT_BIN") or shutil.which("wt"))
    ap.add_argument("--scenario", choices=["small", "large", "both", "huge"], default="both")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--binary", help="a git-session binary (default: built as installed)")
    ap.add_argument("--dir", help="make (or reuse) the repositories here, and keep them")
    ap.add_argument("--skip", action="append", default=[],
                    choices=["shell loop", "find", "floor"],
                    help="leave a column out")
    args = ap.parse_args()
    wt_bin = args.wt if args.wt and os.path.exists(args.wt) else None
    if not wt_bin:
        print("no wt binary (--wt or WT_BIN): its column is left out")
    binary = args.binary or installed.build()
    sh(["cargo", "build", "--release", "--quiet", "--example", "stat_floor"], installed.ROOT)
    floor_bin = os.path.join(installed.ROOT, "target", "release", "examples", "stat_floor")
    print(f"{os.cpu_count()} cpus; load average {os.getloadavg()[0]:.1f} at the start")
    base = args.dir or tempfile.mkdtemp(prefix="gs-bench-wt-")
    try:
        for name, sessions, files, per_dir in (("small", 100, 100, 10),
                                               ("large", 10, 10000, 100),
                                               ("huge", 100, 10000, 100)):
            if args.scenario == name or (args.scenario == "both" and name != "huge"):
                scenario(binary, wt_bin, floor_bin, base, name, sessions, files, per_dir,
                         args.rounds, args.skip)
    finally:
        if not args.dir:
            shutil.rmtree(base, ignore_errors=True)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    sys.exit(main())
