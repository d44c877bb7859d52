#!/usr/bin/env bash
# Installs what the consumer tests in tests/consumers need: Debian's
# golang-go (go tool pprof), chromium (the headless browser for the viewer
# test), curl and python3-junitparser (a JUnit report reader), then the npm packages pinned in
# tests/consumers/package-lock.json (`npm ci`). Idempotent and quiet: apt runs
# only when a package is missing, npm only when the lock file changed since
# the last install. playwright-core needs Node.js >= 20.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh golang-go chromium curl python3-junitparser

# Node.js comes with these machines; Debian's is the fallback.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  bash scripts/setup.sh nodejs npm
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if ((node_major < 20)); then
  echo "setup_consumers: node $(node --version) is too old; playwright-core needs >= 20" >&2
  exit 1
fi

dir=tests/consumers
stamp="$dir/node_modules/.tfprof-lock-sha256"
want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
  echo "setup_consumers: npm ci in $dir" >&2
  log=$(mktemp)
  if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
  echo "$want" >"$stamp"
fi
