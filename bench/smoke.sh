#!/usr/bin/env bash
# A small benchmark run (CI checks that the benchmark works, not its
# figures): a 2,000-node profile through gen_profile and bench.
# Usage: smoke.sh BENCH GEN_PROFILE
set -euo pipefail
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tfprof_smoke.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$2" "$tmp/p" --nodes=2000 --steps=3 >/dev/null
export TFPROF_BENCH_TARGETS="$tmp/targets.tsv"
row=$("$1" "$tmp/p")
echo "$row"
[[ "$row" == *"| 2000 |"* ]] || {
  echo "bench smoke: unexpected row" >&2
  exit 1
}
# Every figure against its target, as bench/run.sh prints them.
table=$(python3 "$(dirname "$0")/targets.py" "$TFPROF_BENCH_TARGETS")
echo "$table"
for figure in "scope default query, cold / load" "filtered scope query, cold / load" \
  "peak RSS / file, after the load and every query" "diff (scope"; do
  [[ "$table" == *"$figure"* ]] || {
    echo "bench smoke: no figure \"$figure\" against its target" >&2
    exit 1
  }
done
web=$("$1" --web "$tmp/p")
echo "$web"
[[ "$web" == *"| 2000 |"* ]] || {
  echo "bench smoke: unexpected web row" >&2
  exit 1
}
