#!/usr/bin/env python3
"""What the collisions cost `git session list` (issue 31): cached by the pair of tips, and not.

  python3 bench/list_collisions.py [--sessions 10] [--files 1000] [--rounds 21] [--before REV]

Builds the installed form (static, release) of this checkout into $CARGO_TARGET_DIR (else
./target), makes a repository of --files files and --sessions sessions, each committing changes
to three files of its own and one it shares with the next session (so every session overlaps
two others), with main changing the shared file of every other session after they began (so half
of them would conflict with main). Then, in every round, in rotating order:

- `list`, cache warm: the collisions of every session read from `cache/collisions.toml`;
- `list`, cache cold: that file removed just before (outside the time measured), so every
  session's `git merge-tree` and `git diff` run again;
- `git rev-parse HEAD`, the cost of starting one small process (the floor);
- with --before REV: `list` of REV's build (before `list` showed collisions in its table).

Medians of --rounds rounds (the first round warms the caches and is not counted), and the ratios
to the warm `list`. Prints the machine's load average at the start and the end.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import env_for  # noqa: E402
import installed  # noqa: E402

ROOT = installed.ROOT


def build():
    """The installed form of this checkout, built where cargo builds (`CARGO_TARGET_DIR`)."""
    triple = installed.host()
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    env = installed.environment(CARGO_TARGET_DIR=target)
    subprocess.run(installed.cargo_build(triple), cwd=ROOT, env=env, check=True)
    out = os.path.join(tempfile.mkdtemp(prefix="gs-installed-"), "git-session")
    shutil.copy2(os.path.join(target, triple, "release", "git-session"), out)
    return out


def run(args, cwd, env):
    subprocess.run(args, cwd=cwd, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def timed(args, cwd, env):
    t = time.perf_counter()
    run(args, cwd, env)
    return (time.perf_counter() - t) * 1000


def make(base, binary, sessions, files):
    env = env_for(os.path.join(base, "home"), binary)
    os.makedirs(env["HOME"])
    repo = os.path.join(base, "repo")
    os.makedirs(repo)
    g = lambda *a, cwd=repo: run(["git", *a], cwd, env)  # noqa: E731
    g("init", "-q", "-b", "main")
    per_dir = 10
    for i in range(files):
        d = os.path.join(repo, f"d{i // per_dir:03}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{i % per_dir}.txt"), "w") as f:
            f.write(f"line of file {i}\n")
    g("add", "-A")
    g("commit", "-q", "-m", "files")
    path = lambda i: f"d{i // per_dir:03}/f{i % per_dir}.txt"  # noqa: E731
    shared = lambda s: path(files - 1 - s)  # noqa: E731
    for s in range(sessions):
        label = f"s{s:02}"
        out = subprocess.run([binary, "create", label], cwd=repo, env=env, check=True,
                             capture_output=True, text=True).stdout.strip()
        touched = [path(s * 3 + k) for k in range(3)] + [shared(s), shared((s + 1) % sessions)]
        for p in touched:
            with open(os.path.join(out, p), "a") as f:
                f.write(f"changed by {label}\n")
        g("add", "-A", cwd=out)
        g("commit", "-q", "-m", f"{label} work", cwd=out)
    for s in range(0, sessions, 2):
        with open(os.path.join(repo, shared(s)), "a") as f:
            f.write("changed on main\n")
    g("commit", "-qam", "main moves on")
    return repo, env


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--before", help="also measure `list` of this revision's build")
    args = ap.parse_args()
    load_start = os.getloadavg()
    binary = build()
    before_bin = None
    if args.before:
        import before
        before_bin = before.build(args.before)
    with tempfile.TemporaryDirectory(prefix="gs-bench-collisions-") as base:
        repo, env = make(base, binary, args.sessions, args.files)
        store = subprocess.run(["git", "rev-parse", "--git-common-dir"], cwd=repo, env=env,
                               check=True, capture_output=True, text=True).stdout.strip()
        cache = os.path.join(repo, store, "git-session", "cache", "collisions.toml")
        listed = subprocess.run([binary, "list"], cwd=repo, env=env, check=True,
                                capture_output=True, text=True).stdout
        said = [l for l in listed.splitlines() if " would conflict " in l or " both changed " in l]
        assert os.path.exists(cache), "list wrote no collisions cache"

        def cold():
            os.remove(cache)
            return timed([binary, "list"], repo, env)

        kinds = {
            "list, cache warm": lambda: timed([binary, "list"], repo, env),
            "list, cache cold": cold,
            "git rev-parse HEAD": lambda: timed(["git", "rev-parse", "HEAD"], repo, env),
        }
        if before_bin:
            kinds[f"list of {args.before}"] = lambda: timed([before_bin, "list"], repo, env)
        names = list(kinds)
        samples = {n: [] for n in names}
        for r in range(args.rounds + 1):
            order = names[r % len(names):] + names[:r % len(names)]
            for n in order:
                ms = kinds[n]()
                if r > 0:
                    samples[n].append(ms)
            # Each round ends with the cache warm for the next.
            run([binary, "list"], repo, env)
    warm = statistics.median(samples["list, cache warm"])
    print(f"{args.sessions} sessions, {args.files} files, {args.rounds} rounds; "
          f"list says {len(said)} collision lines")
    for n in names:
        m = statistics.median(samples[n])
        print(f"  {n:<28} {m:8.1f} ms   {m / warm:5.2f}x the warm list")
    print(f"load average: start {load_start[0]:.2f}, end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
