"""The binary the benchmarks measure: built exactly as README.md installs it.

README's install command builds with `.cargo/install.toml`: on Linux with glibc the C library
linked statically and the binary at a fixed address, with an explicit `--target` so that
proc-macro crates, which are host artifacts, are still built the ordinary way. A static binary
skips the dynamic loader, which is about half the start-up cost of a small process, and a
fixed-address one skips relocating itself; that matters for the hooks, which run on every commit.
`plain()` is the ordinary `cargo build --release` binary, for comparison.
"""
import hashlib
import os
import shutil
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def host():
    out = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    return next(l.split(": ", 1)[1] for l in out.splitlines() if l.startswith("host: "))


# README's install settings (absolute: bench/before.py builds other revisions with them too).
CONFIG = os.path.join(ROOT, ".cargo", "install.toml")


def cargo_build(triple):
    """The `cargo build` of the installed form for `triple`; RUSTFLAGS would replace the file's."""
    return ["cargo", "build", "--release", "--locked", "--quiet", "--config", CONFIG,
            "--target", triple]


def settings_tag():
    """A short digest of the install settings, to name builds made with them."""
    with open(CONFIG, "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()[:8]


def environment(**extra):
    env = {k: v for k, v in os.environ.items() if k not in ("RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS")}
    env.update(extra)
    return env


def build():
    """Builds the installed form (quietly) and returns its path."""
    triple = host()
    subprocess.run(cargo_build(triple), cwd=ROOT, env=environment(), check=True)
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
