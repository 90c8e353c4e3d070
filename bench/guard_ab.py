#!/usr/bin/env python3
"""Before/after for the guard (issue 11 item 2: one decoder of git's index).

  python3 bench/guard_ab.py --before REV [--sizes 1000,50000] [--loops 30] [--repeats 12] [--callgrind]

Sets up bench/guard.py's repository (100 live sessions owning 100 paths each, 1,000 staged
paths nobody else owns) per size, then times, in every round in another order, `git rev-parse HEAD`,
the guard built from REV and the guard built from this checkout (both the installed, static
form), in the scenarios that take each of the guard's routes over the index:

  trees          what `git commit` hands the hook: the cache tree names the whole index (route 1)
  session        the same, with GIT_SESSION set (the acting session's claims are read)
  walk v2        the root of the cache tree invalidated (one more path staged): one pass
                 over the entries, hopping over unchanged directories (route 2)
  walk v4        the same on an index of version 4, where every entry's path is decoded

Prints medians of REPEATS samples (each: LOOPS runs in a row) and the ratios to rev-parse; with
--callgrind, also the instructions one run of each guard executes, which the load of a shared
machine does not move.
"""
import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import before  # noqa: E402
import common  # noqa: E402
import guard  # noqa: E402
import installed  # noqa: E402


def prepare(repo, env, version, extra):
    """The index at `version` with a fresh cache tree, then, with `extra`, one more staged path
    (nobody's), which invalidates the cache tree's root only."""
    guard.run(["git", "update-index", "--force-remove", "zz-extra.txt"], repo, env)
    guard.run(["git", "update-index", "--index-version", version], repo, env)
    guard.run(["git", "write-tree"], repo, env)
    if extra:
        blob = guard.run(["git", "hash-object", "-w", "--stdin"], repo, env,
                         stdin=b"again\n").decode().strip()
        info = f"100644 {blob}\tzz-extra.txt\n".encode()
        guard.run(["git", "update-index", "--add", "--index-info"], repo, env, stdin=info)


def rotated(cmds, cwd, loops, repeats):
    """Median ms per run of each (cmd, env), every round in another of the orders the commands
    can run in (all of them in turn). guard.py's interleaving only reverses the order, so its
    middle command always runs in the middle; here that showed: two copies of one binary
    differed by up to 10 % by position alone."""
    orders = list(itertools.permutations(range(len(cmds))))
    samples = [[] for _ in cmds]
    for r in range(repeats):
        for i in orders[r % len(orders)]:
            cmd, env = cmds[i]
            samples[i].append(common.loop_ms(cmd, cwd, env, loops))
    return [statistics.median(s) for s in samples]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="the revision to compare with")
    ap.add_argument("--sizes", default="1000,50000")
    ap.add_argument("--loops", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=12)
    ap.add_argument("--callgrind", action="store_true",
                    help="also count the instructions of one run of each (needs valgrind)")
    a = ap.parse_args()
    old = before.build(a.before)
    new = installed.build()
    guard.BIN = new
    print(f"before = {a.before}; medians of {a.repeats} x {a.loops} runs; ratios to rev-parse")
    print(f"{'files':>6}  {'scenario':<9} {'rev-parse':>9} {'before':>8} {'after':>8}"
          f" {'before/rp':>9} {'after/rp':>9} {'after/before':>12}")
    for files in [int(x) for x in a.sizes.split(",")]:
        with tempfile.TemporaryDirectory(prefix="gs-bench") as base:
            env = common.env_for(os.path.join(base, "home"), new)
            os.makedirs(env["HOME"])
            repo = guard.setup(base, files, env)
            for name in ["trees", "walk v2", "walk v4", "session"]:
                # Last: the acting session's first run records its commit claims on the staged
                # paths, which would make every later unregistered commit a refusal.
                e = dict(env, GIT_SESSION="s000") if name == "session" else env
                prepare(repo, env, version=name[-1] if name.startswith("walk") else "2",
                        extra=name.startswith("walk"))
                for binary in (old, new):
                    r = subprocess.run([binary, "guard", "pre-commit"], cwd=repo, env=e,
                                       capture_output=True)
                    if r.returncode != 0 or b"internal error" in r.stderr:
                        sys.exit(f"{binary} guard failed on {name}: {r.stderr.decode()}")
                rp, b, n = rotated(
                    [("git rev-parse HEAD", env),
                     (f"'{old}' guard pre-commit", e),
                     (f"'{new}' guard pre-commit", e)],
                    repo, a.loops, a.repeats)
                line = (f"{files:>6}  {name:<9} {rp:>7.2f}ms {b:>6.2f}ms {n:>6.2f}ms"
                        f" {b / rp:>8.2f}x {n / rp:>8.2f}x {n / b:>11.3f}x")
                if a.callgrind:
                    ib, inew = (guard.instructions([x, "guard", "pre-commit"], repo, e) for x in (old, new))
                    line += f"   instructions {ib / 1e6:.2f}M -> {inew / 1e6:.2f}M ({inew / ib:.3f}x)"
                print(line, flush=True)


if __name__ == "__main__":
    main()
