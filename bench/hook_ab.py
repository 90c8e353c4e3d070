#!/usr/bin/env python3
"""A/B of the context hook's cost per event (issue 32: recording what the agent does must cost
the hook nothing measurable): two builds of git-session, calls interleaved so that load on the
machine falls on both alike, medians compared.

Measured per build, each with its own agent session in one repository with one session:
  - PostToolUse on a 1 MB Claude Code transcript (the hot path: every tool call), steady state;
  - UserPromptSubmit then Stop, alternating (a turn's start and end: the state changes each time,
    so each call writes), for the build that records them (the other ignores Stop).

Python 3 standard library only. Usage:

    python3 bench/hook_ab.py --base OLD/git-session --new NEW/git-session [--runs 41]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def git(cwd, *args, env):
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def transcript(path, size):
    asst = {"type": "assistant", "isSidechain": False, "uuid": "a",
            "message": {"id": "msg_a", "type": "message", "role": "assistant",
                        "model": "claude-sonnet-4-5-20250929", "content": [],
                        "usage": {"input_tokens": 3, "cache_creation_input_tokens": 997,
                                  "cache_read_input_tokens": 99000, "output_tokens": 5}}}
    user = {"type": "user", "message": {"role": "user", "content": "x" * 2000}}
    with open(path, "w") as f:
        while f.tell() < size:
            f.write(json.dumps(user) + "\n")
            f.write(json.dumps(asst) + "\n")


def call(binary, cwd, env, payload):
    t = time.perf_counter()
    p = subprocess.run([binary, "context", "hook"], input=payload, cwd=cwd, env=env,
                       capture_output=True)
    took = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"hook failed: {p.returncode} {p.stderr!r}")
    return took


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--runs", type=int, default=41)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = os.path.join(tmp, "home")
        os.makedirs(home)
        env = {"PATH": os.environ["PATH"], "HOME": home, "GIT_CONFIG_GLOBAL": "/dev/null",
               "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b",
               "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@b", "TZ": "UTC"}
        repo = os.path.join(tmp, "repo")
        os.makedirs(repo)
        git(repo, "init", "-q", env=env)
        git(repo, "commit", "-q", "--allow-empty", "-m", "init", env=env)
        out = subprocess.run([a.new, "create", "alpha"], cwd=repo, env=env, check=True,
                             capture_output=True, text=True)
        wt = out.stdout.strip()
        t = os.path.join(tmp, "t.jsonl")
        transcript(t, 1 << 20)

        def payload(agent, event, **extra):
            p = {"session_id": agent, "transcript_path": t, "cwd": wt, "hook_event_name": event,
                 "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {}}
            p.update(extra)
            return json.dumps(p).encode()

        builds = {"base": a.base, "new": a.new}
        for name, b in builds.items():
            call(b, wt, env, payload(name, "SessionStart", source="startup"))
            call(b, wt, env, payload(name, "PostToolUse"))
        tool = {name: [] for name in builds}
        turn = {name: [] for name in builds}
        order = lambda i: builds.items() if i % 2 == 0 else reversed(builds.items())
        # Tool calls one after another, as in a turn: what the agent does stays "working".
        for i in range(a.runs):
            for name, b in order(i):
                tool[name].append(call(b, wt, env, payload(name, "PostToolUse")))
        # Turns that start and end: each call changes what the agent does (new build: a write).
        for i in range(a.runs):
            for name, b in order(i):
                event = "UserPromptSubmit" if i % 2 == 0 else "Stop"
                turn[name].append(call(b, wt, env, payload(name, event)))
        ms = lambda v: statistics.median(v) * 1000
        print(f"runs: {a.runs} each, interleaved")
        print(f"PostToolUse (1 MB transcript): base {ms(tool['base']):.2f} ms, "
              f"new {ms(tool['new']):.2f} ms, new/base {ms(tool['new']) / ms(tool['base']):.3f}")
        print(f"UserPromptSubmit/Stop alternating: base {ms(turn['base']):.2f} ms, "
              f"new {ms(turn['new']):.2f} ms, new/base {ms(turn['new']) / ms(turn['base']):.3f}")


if __name__ == "__main__":
    main()
