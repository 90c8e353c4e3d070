#!/usr/bin/env bash
# Builds a git new enough for config-based hooks (`hook.<name>.command`, git 2.54 and later) from
# Debian's source package (suite sid), once, into a cache directory; prints the path of its `git`
# on stdout. tests/it/config_hooks.rs runs against it when GIT_SESSION_TEST_NEW_GIT names it, and
# skips with its reason otherwise. Idempotent: a second run builds nothing.
set -euo pipefail
cache="${GIT_SESSION_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/git-session-ci}/git-new"
want_major_minor="2.5[4-9]"
if [ -x "$cache/bin/git" ] && "$cache/bin/git" --version | grep -Eq "git version $want_major_minor"; then
  echo "$cache/bin/git"
  exit 0
fi
mkdir -p "$cache/src"
list=/etc/apt/sources.list.d/git-session-sid-src.sources
if [ ! -e "$list" ]; then
  cat >"$list" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: sid
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
echo ".ci/git-new.sh: fetching Debian's git source package (sid)" >&2
apt-get update -qq >&2
command -v dpkg-source >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dpkg-dev </dev/null >&2
for pkg in zlib1g-dev libssl-dev; do
  dpkg -s "$pkg" >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" </dev/null >&2
done
cd "$cache/src"
rm -rf ./*
apt-get source -qq --download-only git >&2
dpkg-source --no-check -x ./git_*.dsc tree >&2
cd tree
echo ".ci/git-new.sh: building $(sed -n 's/^DEF_VER=v\{0,1\}//p' GIT-VERSION-GEN | head -1) (a few minutes)" >&2
make -j"$(nproc)" prefix="$cache" NO_TCLTK=1 NO_GETTEXT=1 NO_CURL=1 NO_EXPAT=1 NO_PERL=1 NO_PYTHON=1 \
  install >"$cache/build.log" 2>&1 || { tail -n 40 "$cache/build.log" >&2; exit 1; }
"$cache/bin/git" --version >&2
echo "$cache/bin/git"
