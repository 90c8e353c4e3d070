"""The installed form of an earlier revision, for before/after runs measured in the same session.

`build(rev)` exports `rev` with `git archive` into a temporary directory, builds it exactly as
`installed.build()` builds this checkout (release, with this checkout's `.cargo/install.toml`,
so that both binaries are linked alike), sharing this checkout's target directory so the
dependencies are not built twice, and copies the binary out (the next build in that directory
overwrites it). The copy is kept per commit under the system temp directory, so a second run
reuses it.
"""
import os
import shutil
import subprocess
import tempfile

import installed


def build(rev):
    sha = subprocess.run(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=installed.ROOT,
                         capture_output=True, text=True, check=True).stdout.strip()
    # Named for the link settings too: a copy built before they changed is not reused.
    out = os.path.join(tempfile.gettempdir(), f"git-session-{sha[:12]}-{installed.settings_tag()}")
    if os.path.exists(out):
        return out
    triple = installed.host()
    with tempfile.TemporaryDirectory(prefix="gs-before-") as src:
        archive = subprocess.run(["git", "archive", sha], cwd=installed.ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
        env = installed.environment(CARGO_TARGET_DIR=os.path.join(installed.ROOT, "target"))
        subprocess.run(installed.cargo_build(triple), cwd=src, env=env, check=True)
        shutil.copy2(os.path.join(installed.ROOT, "target", triple, "release", "git-session"), out)
    return out
