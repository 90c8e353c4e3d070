#!/usr/bin/env python3
"""The context hook's PreToolUse answer when it judges where a write lands (issue 29): an agent of
session A writes inside its own worktree (let through) or into session B's (refused), against the
same hook call with no file tool (Read), which judges nothing. Interleaved, medians of RUNS.
The hook's budget is 900 ms (src/context/hook/measure.rs).

Python 3 standard library only. Usage:

    python3 bench/escape_hook.py --bin PATH/git-session [--runs 41]
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--runs", type=int, default=41)
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    tmp = tempfile.mkdtemp(prefix="escape-hook-")
    env = dict(os.environ, HOME=tmp, GIT_CONFIG_GLOBAL=os.path.join(tmp, "gitconfig"),
               GIT_CONFIG_NOSYSTEM="1", TZ="UTC", GIT_AUTHOR_NAME="a", GIT_AUTHOR_EMAIL="a@b",
               GIT_COMMITTER_NAME="a", GIT_COMMITTER_EMAIL="a@b")
    repo = os.path.join(tmp, "repo")
    run = lambda *a, cwd=repo: subprocess.run(a, cwd=cwd, env=env, check=True, capture_output=True)
    os.makedirs(repo)
    run("git", "init", "-q", "-b", "main")
    for i in range(200):
        with open(os.path.join(repo, f"f{i}.txt"), "w") as f:
            f.write(f"{i}\n")
    run("git", "add", "-A")
    run("git", "commit", "-q", "-m", "init")
    a = run(args.bin, "create", "A").stdout.decode().strip()
    b = run(args.bin, "create", "B").stdout.decode().strip()

    def payload(tool, file):
        inp = {"file_path": file, "content": "x"} if tool == "Write" else {"file_path": file}
        return json.dumps({"session_id": "claude-a", "cwd": a, "hook_event_name": "PreToolUse",
                           "tool_name": tool, "tool_use_id": "toolu_1", "tool_input": inp})

    cases = {
        "Read (nothing judged)": payload("Read", os.path.join(a, "f1.txt")),
        "Write, own worktree": payload("Write", os.path.join(a, "f1.txt")),
        "Write, B's worktree (refused)": payload("Write", os.path.join(b, "f1.txt")),
    }
    times = {k: [] for k in cases}
    for _ in range(args.runs):
        for name, body in cases.items():
            t = time.perf_counter()
            out = subprocess.run([args.bin, "context", "hook"], cwd=a, env=env,
                                 input=body.encode(), capture_output=True)
            times[name].append((time.perf_counter() - t) * 1000)
            assert out.returncode == 0, out
            if "refused" in name:
                assert b"deny" in out.stdout, out.stdout
    base = statistics.median(times["Read (nothing judged)"])
    print(f"{'call':32} {'median ms':>10} {'vs Read':>8}")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"{name:32} {m:10.2f} {m / base:8.2f}")


if __name__ == "__main__":
    main()
