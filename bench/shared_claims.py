#!/usr/bin/env python3
"""Benchmark: claims shared across machines (issue 22), on one machine against a bare remote.

Setup: a bare remote and two clones of it sharing claims (`[claims] remote = "origin"`). Clone A
has one session holding CLAIMS paths, published with one `git session claim` (one atomic push);
clone B syncs, so its synced view holds those CLAIMS claims of another clone.

Measured, round by round in alternating order, median ms per run:
- the guard in clone B (`git session guard pre-commit`, one staged path nobody claims), which
  reads the synced view and never the network, against `git rev-parse HEAD` (target: <= 2x, the
  guard's own target);
- `git session sync` in clone A in its steady state (one fetch; nothing pushed while the claims
  have more than half their ttl left) against a plain `git fetch` of the same namespace (the
  least any sync can cost); and, once, a sync that renews all CLAIMS claims (one fetch, one push
  of CLAIMS compare-and-swaps), five hours on.

Usage: python3 bench/shared_claims.py [--claims 1000] [--loops 20] [--repeats 7]
Python 3 standard library only; builds the binary as README.md installs it.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import installed  # noqa: E402


def run(args, cwd, env):
    r = subprocess.run(args, cwd=cwd, env=env, capture_output=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(args)}\n{r.stderr.decode(errors='replace')}")
    return r.stdout.decode()


def interleaved(cmds, loops, repeats):
    samples = [[] for _ in cmds]
    for r in range(repeats):
        order = list(range(len(cmds)))
        if r % 2:
            order.reverse()
        for i in order:
            cmd, cwd, env, n = cmds[i]
            samples[i].append(common.loop_ms(cmd, cwd, env, n or loops))
    return [statistics.median(s) for s in samples]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--claims", type=int, default=1000)
    ap.add_argument("--loops", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=7)
    a = ap.parse_args()
    binary = installed.build()
    base = tempfile.mkdtemp(prefix="gs-shared-")
    env = common.env_for(os.path.join(base, "home"), binary)
    os.makedirs(env["HOME"])
    remote = os.path.join(base, "remote.git")
    one = os.path.join(base, "one")
    run(["git", "init", "-q", "--bare", "-b", "main", remote], base, env)
    run(["git", "init", "-q", "-b", "main", one], base, env)
    paths = [f"d{i // 100:03d}/f{i:05d}.txt" for i in range(a.claims)]
    for p in paths:
        os.makedirs(os.path.join(one, os.path.dirname(p)), exist_ok=True)
        with open(os.path.join(one, p), "w") as f:
            f.write("x\n")
    with open(os.path.join(one, ".git-session.toml"), "w") as f:
        f.write('[claims]\nremote = "origin"\ntimeout = "60s"\n')
    with open(os.path.join(one, "free.txt"), "w") as f:
        f.write("free\n")
    run(["git", "add", "-A"], one, env)
    run(["git", "commit", "-q", "-m", "files"], one, env)
    run(["git", "remote", "add", "origin", remote], one, env)
    run(["git", "push", "-q", "origin", "main"], one, env)
    two = os.path.join(base, "two")
    run(["git", "clone", "-q", remote, two], base, env)
    run([binary, "create", "--attach", "holder"], one, env)
    a_env = dict(env, GIT_SESSION="holder")
    t = time.perf_counter()
    run([binary, "claim", *paths], one, a_env)
    claim_ms = (time.perf_counter() - t) * 1000
    run([binary, "sync"], two, env)
    with open(os.path.join(two, "free.txt"), "w") as f:
        f.write("changed\n")
    run(["git", "add", "free.txt"], two, env)
    # Once outside the loop, so that a failure shows what git-session said.
    run([binary, "sync"], one, a_env)
    run([binary, "guard", "pre-commit"], two, env)
    fetch = ("git fetch -q --no-tags --prune --no-write-fetch-head origin "
             "'+refs/git-session/claims/*:refs/git-session/plain/claims/*'")
    guard, rev, sync, plain = interleaved([
        (f"'{binary}' guard pre-commit", two, env, None),
        ("git rev-parse HEAD", two, env, None),
        (f"'{binary}' sync", one, a_env, 3),
        (fetch, one, env, 3),
    ], a.loops, a.repeats)
    later = dict(a_env, GIT_SESSION_NOW=time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                     time.gmtime(time.time() + 5 * 3600)))
    t = time.perf_counter()
    out = subprocess.run([binary, "sync"], cwd=one, env=later, capture_output=True, text=True)
    renew_ms = (time.perf_counter() - t) * 1000
    print(f"{a.claims} claims; one `claim` of all of them (one atomic push): {claim_ms:.0f} ms")
    print(f"sync renewing all {a.claims} (one fetch, one push): {renew_ms:.0f} ms "
          f"({out.stderr.strip().splitlines()[-1] if out.stderr.strip() else 'no output'})")
    print(f"guard with {a.claims} synced claims of another clone: {guard:.2f} ms, "
          f"git rev-parse HEAD {rev:.2f} ms, ratio {guard / rev:.2f}x (target <= 2x)")
    print(f"sync in its steady state ({a.claims} claims held, nothing pushed): {sync:.0f} ms; "
          f"a plain fetch of the namespace {plain:.0f} ms")


if __name__ == "__main__":
    main()
