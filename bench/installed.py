"""The binary the benchmarks measure: built exactly as README.md installs it.

README's install command links the C library statically (`-C target-feature=+crt-static`,
with an explicit `--target` so that proc-macro crates, which are host artifacts, are still
built the ordinary way). A static binary skips the dynamic loader, which is about half the
start-up cost of a small process; that matters for the hooks, which run on every commit.
`plain()` is the ordinary `cargo build --release` binary, for comparison.
"""
import os
import shutil
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def host():
    out = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    return next(l.split(": ", 1)[1] for l in out.splitlines() if l.startswith("host: "))


def build():
    """Builds the installed form (quietly) and returns its path."""
    triple = host()
    env = dict(os.environ, RUSTFLAGS="-C target-feature=+crt-static")
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", "--target", triple],
                   cwd=ROOT, env=env, check=True)
    # A copy: bench/before.py builds an earlier revision into the same target directory, which
    # would otherwise overwrite the binary measured as this checkout's.
    built = os.path.join(ROOT, "target", triple, "release", "git-session")
    out = os.path.join(tempfile.mkdtemp(prefix="gs-installed-"), "git-session")
    shutil.copy2(built, out)
    return out


def plain():
    """Builds the ordinary dynamically linked release binary and returns its path."""
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
    return os.path.join(ROOT, "target", "release", "git-session")
