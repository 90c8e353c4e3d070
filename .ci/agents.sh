#!/usr/bin/env bash
# Installs the agent CLIs the real-agent tests drive (tests/it/context_real.rs), pinned, from the
# npm registry into a cache directory; idempotent (an installed version is kept); prints what it
# installed and where. The tests find them through GIT_SESSION_AGENTS_DIR or the same default.
#
#   .ci/agents.sh            # install into ${XDG_CACHE_HOME:-$HOME/.cache}/git-session-ci/agents
#   GIT_SESSION_AGENTS_DIR=/some/dir .ci/agents.sh
#   GIT_SESSION_AGENTS=latest .ci/agents.sh   # the newest the registry has, instead of the pins;
#                                             # `<name>.latest` then names the version, and the
#                                             # tests run with the same variable drive it
#
# Needs node (>= 20) and npm; only the npm registry is contacted. Without npm it says so and
# exits 0: the tests then skip with a named reason.
set -euo pipefail

dir="${GIT_SESSION_AGENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/git-session-ci/agents}"
# name, npm package, version: keep in step with tests/it/context_real.rs and docs/agents.md.
agents=(
  "claude @anthropic-ai/claude-code 2.1.328"
  "codex @openai/codex 0.169.0"
  "gemini @google/gemini-cli 0.61.0"
  "copilot @github/copilot 1.0.102"
)

if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo ".ci/agents.sh: node/npm missing; the real-agent tests will be skipped" >&2
  exit 0
fi
mkdir -p "$dir"
# No update checks, no telemetry, no funding or audit calls while installing.
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
for line in "${agents[@]}"; do
  read -r name pkg version <<<"$line"
  if [ "${GIT_SESSION_AGENTS:-}" = latest ]; then
    version=$(npm view --loglevel=error "$pkg" version)
    printf '%s\n' "$version" >"$dir/$name.latest"
  fi
  prefix="$dir/$name-$version"
  stamp="$prefix/.installed"
  if [ ! -f "$stamp" ]; then
    rm -rf "$prefix"
    mkdir -p "$prefix"
    echo ".ci/agents.sh: installing $pkg@$version into $prefix" >&2
    npm install --prefix "$prefix" --no-save --no-package-lock --loglevel=error \
      "$pkg@$version" >&2
    echo "$pkg@$version" >"$stamp"
  fi
  bin="$prefix/node_modules/.bin/$name"
  if [ ! -x "$bin" ]; then
    echo ".ci/agents.sh: $bin is missing after installing $pkg@$version" >&2
    exit 1
  fi
  echo "$name $pkg@$version $bin ($(du -sh "$prefix" | cut -f1))"
done
