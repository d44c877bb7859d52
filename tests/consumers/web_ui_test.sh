#!/usr/bin/env bash
# The web UI in a real browser: starts `tfprof --http` on profile_100 with
# profile_0 as its base, writes the command line's JSON of the same queries,
# and runs web_ui_test.js (playwright-core driving Debian's headless
# Chromium) to check the page against them. Then stops the server with
# SIGTERM and expects a clean exit.
#
# Usage: web_ui_test.sh TFPROF_BINARY [SCREENSHOT_DIR]
# (SCREENSHOT_DIR, or $TFPROF_WEB_SCREENSHOTS: keep the page's screenshots;
# g3doc/images/web_ui/ holds the ones the docs show.)
set -euo pipefail

die() {
  echo "web_ui_test: FAIL: $*" >&2
  exit 1
}
[[ $# -ge 1 ]] || die "usage: $0 TFPROF_BINARY [SCREENSHOT_DIR]"
bin=$(realpath "$1")
shots=${2:-${TFPROF_WEB_SCREENSHOTS:-}}
[[ -n "$shots" ]] && shots=$(realpath -m "$shots")
here=$(dirname "$(realpath "$0")")
repo=$(realpath "$here/../..")
corpus=$repo/testdata/corpus/shiyudian-resnet-tf-dist
command -v node >/dev/null || die "node is not installed"
[[ -x "${CHROMIUM:-/usr/bin/chromium}" ]] || die "chromium not found (scripts/setup_consumers.sh)"
[[ -d "$here/node_modules/playwright-core" ]] || die "run 'npm ci' in tests/consumers (scripts/setup_consumers.sh)"

tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/tfprof_web.XXXXXX")
server=""
cleanup() {
  [[ -n "$server" ]] && kill "$server" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

cur=--profile_path=$corpus/profile_100
base=--base_profile_path=$corpus/profile_0
"$bin" "$cur" scope -max_depth 3 -select micros,bytes -order_by micros -output json >"$tmp/scope.json"
"$bin" "$cur" scope -max_depth 3 -select micros,bytes -order_by bytes -output json >"$tmp/scope_bytes.json"
"$bin" "$cur" op -select micros,occurrence -order_by micros -output json >"$tmp/op.json"
"$bin" "$cur" steps -output json >"$tmp/steps.json"
"$bin" "$cur" "$base" diff scope -max_depth 2 -output json >"$tmp/diff.json"
"$bin" "$cur" graph -step 0 -max_depth 1000000 -output "timeline:outfile=$tmp/timeline" >/dev/null
mv "$tmp/timeline_0" "$tmp/timeline.json"

"$bin" "$cur" "$base" --http=127.0.0.1:0 >"$tmp/server.out" 2>"$tmp/server.err" &
server=$!
url=""
for _ in $(seq 1 300); do
  url=$(sed -n 's/^Serving the web UI on \(http[^ ]*\).*/\1/p' "$tmp/server.out")
  [[ -n "$url" ]] && break
  kill -0 "$server" 2>/dev/null || die "tfprof --http exited: $(cat "$tmp/server.err")"
  sleep 0.1
done
[[ -n "$url" ]] || die "tfprof --http did not say where it serves"
echo "web_ui_test: $url, $("${CHROMIUM:-/usr/bin/chromium}" --version 2>/dev/null | head -1)"

status=0
(cd "$here" && node web_ui_test.js "$url" "$tmp" ${shots:+"$shots"}) || status=1

kill -TERM "$server"
if wait "$server"; then
  echo "ok: SIGTERM stops the server cleanly"
else
  echo "FAIL: tfprof --http exited with status $? on SIGTERM"
  status=1
fi
server=""
grep -q "web UI stopped" "$tmp/server.out" || { echo "FAIL: no 'web UI stopped'"; status=1; }
exit $status
