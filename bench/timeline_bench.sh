#!/usr/bin/env bash
# The web UI's timeline of one big step: a trace whose last step holds about
# 100k events (bench/gen_big_step.py: the bundled PyTorch trace with COPIES
# copies folded into its step 10), served by `tfprof --http`; times the
# /api/timeline reply (RUNS requests: each one's seconds and the reply's
# size, events and counter samples), the CLI's `timeline -step 10`, and,
# where Chromium and tests/consumers' node_modules are there, the page's
# draw (bench/timeline_draw.js). Figures are printed, not asserted.
# Usage: bench/timeline_bench.sh TFPROF [COPIES] [RUNS]   (default 3, 5)
set -euo pipefail
cd "$(dirname "$0")/.."
tfprof=$(readlink -f "$1")
copies=${2:-3}
runs=${3:-5}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tfprof_tl.XXXXXX")
server=""
cleanup() {
  [[ -n "$server" ]] && kill "$server" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
/usr/bin/python3 bench/gen_big_step.py \
  testdata/corpus/pytorch-kineto/worker0.1623143089861.pt.trace.json.gz \
  "$tmp/big.pt.trace.json" "$copies"
trace=--trace_path=$tmp/big.pt.trace.json
echo "trace: $(du -m "$tmp/big.pt.trace.json" | cut -f1) MB, $copies copies in step 10"
/usr/bin/time -f "%e %M" -o "$tmp/time" \
  "$tfprof" "$trace" timeline -step 10 -outfile "$tmp/cli.json" >/dev/null 2>&1
read -r wall rss <"$tmp/time"
echo "CLI timeline -step 10 (load included): ${wall} s, peak RSS $((rss / 1024)) MB"

: >"$tmp/out"  # exists before the background job opens it
: >"$tmp/err"
"$tfprof" "$trace" --http=127.0.0.1:0 >"$tmp/out" 2>"$tmp/err" &
server=$!
url=""
for _ in $(seq 1 600); do
  url=$(sed -n 's/^Serving the web UI on \(http[^ ]*\).*/\1/p' "$tmp/out")
  [[ -n "$url" ]] && break
  sleep 0.1
done
[[ -n "$url" ]] || { echo "tfprof --http did not start: $(cat "$tmp/err")"; exit 1; }
for i in $(seq 1 "$runs"); do
  curl -s -o "$tmp/reply.json" -w "%{time_total} %{size_download}\n" \
    "${url}api/timeline?step=10" >"$tmp/curl"
  read -r secs bytes <"$tmp/curl"
  echo "/api/timeline?step=10 reply $i: ${secs} s, $((bytes / 1000000)) MB"
done
/usr/bin/python3 - "$tmp/reply.json" <<'PY'
import collections, json, sys
trace = json.load(open(sys.argv[1]))["trace"]["traceEvents"]
n = collections.Counter(e["ph"] for e in trace)
print(f"reply: {n['X']} events, {n['C']} counter samples")
PY
if [[ -x "${CHROMIUM:-/usr/bin/chromium}" && -d tests/consumers/node_modules/playwright-core ]]; then
  node bench/timeline_draw.js "$url" 10 3
else
  echo "skipped: the page's draw (no Chromium or tests/consumers/node_modules)"
fi
