"""What the benchmarks share: the hermetic environment their commands run in, and the timing
loop that measures a command as `sh` running it many times in a row.

Python 3 standard library only.
"""
import os
import subprocess
import sys
import time


def env_for(home, binary):
    """The environment for git and `binary` under `home`: no GIT_* variable of the caller, no
    user or system git configuration, a fixed author and committer, `binary`'s directory first
    on PATH (so hooks and `git session` find it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=home,
        XDG_CONFIG_HOME=os.path.join(home, ".config"),
        XDG_STATE_HOME=os.path.join(home, ".state"),
        GIT_CONFIG_GLOBAL="/dev/null",
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Bench",
        GIT_AUTHOR_EMAIL="bench@example.com",
        GIT_COMMITTER_NAME="Bench",
        GIT_COMMITTER_EMAIL="bench@example.com",
        PATH=os.path.dirname(binary) + os.pathsep + os.environ.get("PATH", ""),
    )
    return env


def loop_ms(cmd, cwd, env, loops, expect=0):
    """One sample: `sh` runs `cmd` LOOPS times in a row; milliseconds per run. Each run must
    exit with `expect` (a refusal is measured too)."""
    script = (f'i=0; while [ $i -lt {loops} ]; do {cmd} >/dev/null 2>&1; '
              f'[ $? -eq {expect} ] || exit 9; i=$((i+1)); done')
    t = time.perf_counter()
    r = subprocess.run(["sh", "-c", script], cwd=cwd, env=env)
    if r.returncode != 0:
        sys.exit(f"benchmark command failed: {cmd}")
    return (time.perf_counter() - t) / loops * 1000
