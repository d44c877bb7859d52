#!/usr/bin/env bash
# Installs what the consumer tests in tests/consumers need: Debian's
# golang-go (go tool pprof), chromium (the headless browser for the viewer
# test) and curl, then the npm packages pinned in
# tests/consumers/package-lock.json (`npm ci`). Idempotent and quiet: apt runs
# only when a package is missing, npm only when the lock file changed since
# the last install. Node.js itself (>= 20, for playwright-core) must already
# be on the machine.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(golang-go chromium curl)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup_consumers: installing ${missing[*]}" >&2
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "setup_consumers: installing nodejs npm" >&2
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >/dev/null
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
