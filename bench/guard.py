#!/usr/bin/env python3
"""Benchmark: `git-session guard pre-commit` against `git rev-parse HEAD` (issue 3).

Setup per repository size (1k and 50k files): 100 live sessions (s000 and s001 attached to the
main worktree, where they commit; each other one attached to its own
`git worktree add --no-checkout` worktree) owning 100 paths each (10,000 claims), and 1,000
staged modified paths that nobody else owns. The index is brought to the state `git commit`
hands its pre-commit hook (cache tree updated by `git write-tree`).

Measured: the whole process, `sh` running it LOOPS times in a row, median of REPEATS rounds;
the baseline `git rev-parse HEAD` runs the same way on the same repository, and the rounds
alternate the order of baseline, guard and plain build so that all see the same machine.
Scenarios, in the main worktree: an unregistered committer (nobody acting) and session s000
named by GIT_SESSION committing (whose first, unmeasured run records its 1,000 commit claims;
later runs find them held). In a session's own worktree, the acting session found by the
worktree (no GIT_SESSION, the normal case for an agent): session w0, which holds no claims
before its first run records the 1,000 staged paths, and session w10k, which also holds 10,000
explicit claims of its own. Each worktree's index stages the same 1,000 modified paths, so the
sessions' recorded commit claims are released after each scenario. Two more paths, in the main
worktree: a refusal (GIT_SESSION=s001 commits the 1,000 staged paths plus one path s000 owns: the
guard refuses, exit 1, naming that path), and `git commit <path>` (GIT_SESSION=s000): the index
git hands the hook for a partial commit, captured from a real `git commit -- <path>` by a
pre-commit hook, given to the guard through GIT_INDEX_FILE as git gives it. Target (issue 21): guard <= 1.8x
baseline on every path.

Usage: python3 bench/guard.py [--sizes 1000,50000] [--loops 50] [--repeats 9]
                             [--scenarios nobody,committing,worktree-0,worktree-10k,refusal,partial]
                             [--before REV] [--callgrind]
--callgrind also prints the instructions one run of the guard executes (valgrind), a count the
machine's load does not move (with --before, the earlier binary's too, on its own repository).
--before REV also times the guard built from REV (bench/before.py), on a second repository set
up by that binary (a store is in the format of the binary that wrote it), in the same rounds.
Python 3 standard library only. Builds the binary as README.md installs it (static, see
bench/installed.py) and, for comparison, the plain dynamically linked `cargo build --release`.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
import common
import installed

BIN = None  # set by main(): the installed form
SESSIONS = 100
OWNED = 100
STAGED = 1000


def run(args, cwd, env, stdin=None):
    r = subprocess.run(args, cwd=cwd, env=env, input=stdin, capture_output=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(args)}\n{r.stderr.decode(errors='replace')}")
    return r.stdout


def path_of(i):
    return f"d{i // 100:04d}/f{i:06d}.txt"


def make_repo(base, files, env):
    repo = os.path.join(base, "repo")
    os.makedirs(repo)
    run(["git", "init", "-q", "-b", "main"], repo, env)
    # fast-import: a commit with `files` files, no checkout needed.
    lines = ["blob", "mark :1", "data 6", "hello", "",
             "commit refs/heads/main", "committer Bench <b@e> 1700000000 +0000", "data 4", "init"]
    for i in range(files):
        lines.append(f"M 100644 :1 {path_of(i)}")
    lines.append("")
    run(["git", "fast-import", "--quiet"], repo, env, stdin="\n".join(lines).encode())
    run(["git", "read-tree", "HEAD"], repo, env)
    return repo


def stage(repo, files, env):
    """Stages 1,000 modified paths nobody else owns (the last files of the repository) in the
    index of the worktree `repo`, with the cache tree as `git commit` leaves it for its hook."""
    blob = run(["git", "hash-object", "-w", "--stdin"], repo, env, stdin=b"changed\n").decode().strip()
    info = "".join(f"100644 {blob}\t{p}\n" for p in staged_paths(files))
    run(["git", "update-index", "--add", "--index-info"], repo, env, stdin=info.encode())
    run(["git", "write-tree"], repo, env)


def staged_paths(files):
    return [path_of(files - 1 - k) for k in range(min(STAGED, files))]


def claim_all(label, paths, repo, env):
    """`git session claim` of many paths as session `label`, in batches under ARG_MAX."""
    for i in range(0, len(paths), 2000):
        run([BIN, "claim", "--"] + paths[i:i + 2000], repo, dict(env, GIT_SESSION=label))


def attach(base, repo, label, env):
    wt = os.path.join(base, "wt", label)
    run(["git", "worktree", "add", "-q", "--no-checkout", "--detach", wt, "HEAD"], repo, env)
    run([BIN, "create", "--attach", label], wt, env)
    return wt


def worktree_session(base, repo, files, label, claims, env):
    """A session attached to its own worktree, holding `claims` explicit claims of paths still
    to be written, with the 1,000 paths staged in that worktree's index."""
    wt = attach(base, repo, label, env)
    claim_all(label, [f"planned/{label}/d{k // 100:03d}/f{k:05d}.txt" for k in range(claims)], repo, env)
    run(["git", "read-tree", "HEAD"], wt, env)
    stage(wt, files, env)
    return wt


def setup(base, files, env):
    repo = make_repo(base, files, env)
    for s in range(SESSIONS):
        label = f"s{s:03d}"
        if s < 2:
            # The two sessions that commit in the main worktree are attached to it: a session
            # commits only in its own worktree (issue 29).
            run([BIN, "create", "--attach", label], repo, env)
        else:
            attach(base, repo, label, env)
        # Disjoint slices of the repository's files while they last, then paths still to be
        # written (a claim need not name an existing file).
        owned = [path_of(i) if i < files - STAGED else f"planned/{label}/f{k:03d}.txt"
                 for k in range(OWNED) for i in [s * OWNED + k]]
        run([BIN, "claim", "--"] + owned, repo, dict(env, GIT_SESSION=label))
    stage(repo, files, env)
    return repo


def worktree_sessions(base, repo, files, env):
    """Sessions w0 and w10k, each in its own worktree (see the module doc)."""
    return {"w0": worktree_session(base, repo, files, "w0", 0, env),
            "w10k": worktree_session(base, repo, files, "w10k", 10_000, env)}


def interleaved(cmds, loops, repeats, expect=None):
    """Median ms per run of each (cmd, env, cwd), sampled round by round in alternating order,
    so that every command sees the same machine (it is shared and noisy)."""
    samples = [[] for _ in cmds]
    for r in range(repeats):
        order = list(range(len(cmds)))
        if r % 2:
            order.reverse()
        for i in order:
            cmd, env, cwd = cmds[i]
            code = expect[i] if expect else 0
            samples[i].append(common.loop_ms(cmd, cwd, env, loops, code))
    return [statistics.median(s) for s in samples]


SCENARIOS = [
    # key, name, where (main worktree or a session's), GIT_SESSION, who records claims
    ("nobody", "nobody acting", None, None, None),
    ("committing", "session committing", None, "s000", "s000"),
    ("worktree-0", "worktree, 0 claims", "w0", None, "w0"),
    ("worktree-10k", "worktree, 10k claims", "w10k", None, "w10k"),
    ("refusal", "refusal (1 path)", None, "s001", None),
    ("partial", "`git commit <path>`", None, "s000", "s000"),
]


def instructions(cmd, cwd, env):
    """Instructions one run executes (valgrind's callgrind)."""
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + cmd,
                       cwd=cwd, env=env, capture_output=True, text=True)
    for line in r.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1])
    sys.exit(f"callgrind failed on {cmd}: {r.stderr}")


def refusal_index(base, repo, files, env):
    """An index file staging the 1,000 paths plus one that session s000 owns (its first):
    what s001's commit of them hands the hook. Returns its path (for GIT_INDEX_FILE)."""
    index = os.path.join(base, "refusal-index")
    src = os.path.join(repo, ".git", "index")
    with open(src, "rb") as f, open(index, "wb") as g:
        g.write(f.read())
    e = dict(env, GIT_INDEX_FILE=index)
    blob = run(["git", "hash-object", "-w", "--stdin"], repo, e, stdin=b"taken\n").decode().strip()
    taken = path_of(0) if 0 < files - STAGED else "planned/s000/f000.txt"
    run(["git", "update-index", "--add", "--index-info"], repo, e,
        stdin=f"100644 {blob}\t{taken}\n".encode())
    run(["git", "write-tree"], repo, e)
    return index


def partial_index(base, repo, files, env):
    """The index `git commit -- <path>` hands its pre-commit hook (GIT_INDEX_FILE points at a
    temporary index git builds from HEAD plus the named path), captured by a hook that copies it
    and then fails, so nothing is committed. Returns the copy's path."""
    index = os.path.join(base, "partial-index")
    hooks = os.path.join(base, "capture-hooks")
    os.makedirs(hooks, exist_ok=True)
    hook = os.path.join(hooks, "pre-commit")
    with open(hook, "w") as f:
        f.write(f'#!/bin/sh\ncp "$GIT_INDEX_FILE" "{index}"\nexit 1\n')
    os.chmod(hook, 0o755)
    one = staged_paths(files)[0]
    os.makedirs(os.path.dirname(os.path.join(repo, one)), exist_ok=True)
    with open(os.path.join(repo, one), "w") as f:
        f.write("partial\n")
    r = subprocess.run(["git", "-c", f"core.hooksPath={hooks}", "commit", "-q", "-m", "partial",
                        "--", one], cwd=repo, env=env, capture_output=True)
    if not os.path.exists(index):
        sys.exit(f"could not capture a partial commit's index: {r.stderr.decode(errors='replace')}")
    return index


def store(base, files, binary):
    """bench's repository and the worktree sessions, made by `binary` (its own store format)."""
    global BIN
    saved, BIN = BIN, binary
    try:
        env = common.env_for(os.path.join(base, "home"), binary)
        os.makedirs(env["HOME"])
        repo = setup(base, files, env)
        return env, repo, worktree_sessions(base, repo, files, env)
    finally:
        BIN = saved


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,50000")
    ap.add_argument("--loops", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--scenarios", default=",".join(s[0] for s in SCENARIOS))
    ap.add_argument("--callgrind", action="store_true",
                    help="also count the instructions of one guard run (needs valgrind)")
    ap.add_argument("--before", metavar="REV",
                    help="also time the guard built from REV, on a repository its own binary set up")
    a = ap.parse_args()
    wanted = a.scenarios.split(",")
    global BIN
    BIN = installed.build()
    plain = installed.plain()
    old = None
    if a.before:
        import before
        old = before.build(a.before)
    print(f"{'files':>6}  {'scenario':<22} {'guard ms':>9} {'rev-parse ms':>13} {'ratio':>6}  {'plain build':>11}"
          + (f"  {'before':>8}" if old else ""))
    worst = 0.0
    for files in [int(x) for x in a.sizes.split(",")]:
        with tempfile.TemporaryDirectory(prefix="gs-bench") as base:
            env, repo, worktrees = store(os.path.join(base, "new"), files, BIN)
            if old:
                old_env, old_repo, old_worktrees = store(os.path.join(base, "old"), files, old)
            for key, name, where, session, recorder in SCENARIOS:
                if key not in wanted:
                    continue
                if old and key in ("refusal", "partial"):
                    continue  # the index files are built for this version's repository only
                extra = {"GIT_SESSION": session} if session else {}
                if key == "refusal":
                    extra["GIT_INDEX_FILE"] = refusal_index(base, repo, files, env)
                if key == "partial":
                    extra["GIT_INDEX_FILE"] = partial_index(base, repo, files, env)
                e, cwd = dict(env, **extra), worktrees[where] if where else repo
                code = 1 if key == "refusal" else 0
                # Warm: the first run (re)builds the claims index and records the claims.
                r = subprocess.run([BIN, "guard", "pre-commit"], cwd=cwd, env=e, capture_output=True)
                if r.returncode != code:
                    sys.exit(f"{key}: guard exited {r.returncode}, expected {code}\n"
                             f"{r.stderr.decode(errors='replace')}")
                cmds = [("git rev-parse HEAD", env, cwd),
                        (f"'{BIN}' guard pre-commit", e, cwd),
                        (f"'{plain}' guard pre-commit", e, cwd)]
                if old:
                    old_e = dict(old_env, **extra)
                    old_cwd = old_worktrees[where] if where else old_repo
                    run([old, "guard", "pre-commit"], old_cwd, old_e)
                    cmds.append((f"'{old}' guard pre-commit", old_e, old_cwd))
                times = interleaved(cmds, a.loops, a.repeats, [0, code, code, code])
                baseline, g, p = times[:3]
                ratio = g / baseline
                worst = max(worst, ratio)
                counted = ""
                if a.callgrind:
                    counted = (f"  {instructions([BIN, 'guard', 'pre-commit'], cwd, e) / 1e6:.2f}M"
                               f" / {instructions(['git', 'rev-parse', 'HEAD'], cwd, env) / 1e6:.2f}M instr")
                    if old:
                        counted += (f", before {instructions([old, 'guard', 'pre-commit'], old_cwd, old_e) / 1e6:.2f}M")
                print(f"{files:>6}  {name:<22} {g:>9.2f} {baseline:>13.2f} {ratio:>6.2f}  {p / baseline:>10.2f}x"
                      + (f"  {times[3] / baseline:>7.2f}x" if old else "") + counted, flush=True)
                if recorder:
                    # The next scenario stages the same paths: free them.
                    free = [BIN, "release", "--"] + staged_paths(files)
                    run(free, cwd, dict(env, GIT_SESSION=recorder))
                    if old:
                        run([old] + free[1:], old_cwd, dict(old_env, GIT_SESSION=recorder))
    print(f"worst ratio {worst:.2f} (target <= 1.80, issue 21)")


if __name__ == "__main__":
    main()
