#!/usr/bin/env python3
"""A/B of the statusline (`git session context status --stdin --short`, which Claude Code runs
on every refresh) before and after it counts the other sessions that wait (issue 32): two builds,
calls interleaved so that load on the machine falls on both alike, medians compared.

The repository holds --sessions sessions, each with --agents agent sessions recorded by the real
hook (SessionStart, UserPromptSubmit; every other session's agents then Stop, so they wait, their
process being this script, which runs). The statusline is asked for the first session's agent,
with a Claude Code statusline payload on stdin. Python 3 standard library only. Usage:

    python3 bench/statusline.py --base OLD/git-session --new NEW/git-session \
        [--sessions 20] [--agents 5] [--runs 41]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(args, cwd, env, stdin=None):
    p = subprocess.run(args, cwd=cwd, env=env, input=stdin, capture_output=True)
    if p.returncode != 0:
        sys.exit(f"{args} failed: {p.returncode} {p.stderr!r}")
    return p.stdout.decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--agents", type=int, default=5)
    ap.add_argument("--runs", type=int, default=41)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
                   GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1", TZ="UTC",
                   GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com",
                   GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")
        for k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_SESSION"):
            env.pop(k, None)
        repo = os.path.join(tmp, "repo")
        run(["git", "init", "-q", "-b", "main", repo], tmp, env)
        run(["git", "commit", "-q", "--allow-empty", "-m", "init"], repo, env)
        dirs = []
        for s in range(a.sessions):
            wt = run([a.new, "create", f"s{s:03d}"], repo, env).strip()
            dirs.append(wt)
            for g in range(a.agents):
                sid = f"agent-{s:03d}-{g}"
                for event, extra in (("SessionStart", {"source": "startup"}),
                                     ("UserPromptSubmit", {"prompt": "go"})) + (
                                         (("Stop", {}),) if s % 2 == 1 else ()):
                    payload = dict({"session_id": sid, "cwd": wt, "hook_event_name": event},
                                   **extra)
                    run([a.new, "context", "hook"], wt, env, json.dumps(payload).encode())
        statusline = json.dumps({
            "session_id": "agent-000-0", "cwd": dirs[0],
            "context_window": {"context_window_size": 200000, "used_percentage": 25.0,
                               "current_usage": {"input_tokens": 10000, "output_tokens": 10,
                                                 "cache_creation_input_tokens": 0,
                                                 "cache_read_input_tokens": 40000}}}).encode()
        times = {"base": [], "new": []}
        shown = {}
        for i in range(a.runs):
            order = (("base", a.base), ("new", a.new)) if i % 2 == 0 else \
                (("new", a.new), ("base", a.base))
            for name, binary in order:
                t = time.perf_counter()
                out = run([binary, "context", "status", "--stdin", "--short"], dirs[0], env,
                          statusline)
                times[name].append(time.perf_counter() - t)
                shown[name] = out.strip()
        b, n = statistics.median(times["base"]), statistics.median(times["new"])
        print(f"{a.sessions} sessions x {a.agents} agent sessions, {a.runs} runs each")
        print(f"base: {b * 1000:.2f} ms  ({shown['base']!r})")
        print(f"new:  {n * 1000:.2f} ms  ({shown['new']!r})")
        print(f"new / base: {n / b:.3f}  (+{(n - b) * 1000:.2f} ms)")


if __name__ == "__main__":
    main()
