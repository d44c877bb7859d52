#!/usr/bin/env bash
# The ranks command at scale: for each rank count, a generated job of that
# many rank traces of about MB megabytes each (bench/gen_ranks.py, from the
# bundled two-rank DDP capture), then `tfprof --trace_path=DIR ranks -output
# json` timed with its peak RSS. One row per rank count.
# Usage: bench/ranks_bench.sh TFPROF [MB] [RANKS...]   (default 20 MB; 16 64 256)
set -euo pipefail
cd "$(dirname "$0")/.."
tfprof=$(readlink -f "$1")
mb=${2:-20}
shift $(( $# >= 2 ? 2 : 1 ))
counts=("$@")
[[ ${#counts[@]} -gt 0 ]] || counts=(16 64 256)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tfprof_ranks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "| ranks | MB per rank | total GB | wall s | s per rank | peak RSS MB | stragglers found |"
echo "|---|---|---|---|---|---|---|"
for n in "${counts[@]}"; do
  rm -rf "$tmp/job"
  /usr/bin/python3 bench/gen_ranks.py testdata/ranks/ddp-gloo "$tmp/job" "$n" "$mb"
  total=$(du -sb "$tmp/job" | cut -f1)
  /usr/bin/time -f "%e %M" -o "$tmp/time" \
    "$tfprof" --trace_path="$tmp/job" ranks -output json >"$tmp/out.json" 2>/dev/null
  read -r wall rss <"$tmp/time"
  stragglers=$(/usr/bin/python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['stragglers']))" "$tmp/out.json")
  awk -v n="$n" -v t="$total" -v w="$wall" -v r="$rss" -v s="$stragglers" 'BEGIN {
    printf "| %d | %.1f | %.2f | %.1f | %.3f | %.0f | %d |\n", n, t / n / 1e6, t / 1e9, w, w / n, r / 1024, s }'
done
