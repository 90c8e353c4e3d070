#!/usr/bin/env bash
# Installs the hook managers tests/it/managers.rs drives, pinned, from their own registries (npm
# and PyPI), into one cache directory; prints that directory's bin path on stdout. Idempotent:
# a second run with everything present installs nothing. Local hooks only: nothing here makes a
# manager fetch hook repositories at commit time.
set -euo pipefail
cache="${GIT_SESSION_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/git-session-ci}/managers"
mkdir -p "$cache"
npm_pkgs=(husky@9.1.7 lefthook@2.2.2 simple-git-hooks@2.14.0)
precommit=pre-commit==4.7.0
stamp="$cache/installed-$(printf '%s ' "${npm_pkgs[@]}" "$precommit" | sha1sum | cut -c1-12)"
if [ ! -e "$stamp" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo ".ci/hook-managers.sh: installing Node.js and npm" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm </dev/null >&2
  fi
  echo ".ci/hook-managers.sh: installing ${npm_pkgs[*]} $precommit into $cache" >&2
  # --ignore-scripts: lefthook's and simple-git-hooks' postinstall scripts install hooks into
  # the repository npm was started from; their commands work without them.
  (cd "$cache" && npm install --prefix "$cache/npm" --ignore-scripts --no-audit --no-fund --silent "${npm_pkgs[@]}" >&2)
  python3 -m venv "$cache/venv" >&2
  "$cache/venv/bin/pip" install --quiet --disable-pip-version-check "$precommit" >&2
  mkdir -p "$cache/bin"
  # One directory the tests put on PATH: each manager's own command, by the name its docs use.
  ln -sf "$cache/npm/node_modules/.bin/husky" "$cache/bin/husky"
  ln -sf "$cache/npm/node_modules/.bin/lefthook" "$cache/bin/lefthook"
  ln -sf "$cache/npm/node_modules/.bin/simple-git-hooks" "$cache/bin/simple-git-hooks"
  ln -sf "$cache/venv/bin/pre-commit" "$cache/bin/pre-commit"
  touch "$stamp"
fi
echo "$cache/bin"
