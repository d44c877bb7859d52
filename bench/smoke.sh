#!/usr/bin/env bash
# A small benchmark run (CI checks that the benchmark works, not its
# figures): a 2,000-node profile through gen_profile and bench.
# Usage: smoke.sh BENCH GEN_PROFILE
set -euo pipefail
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tfprof_smoke.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$2" "$tmp/p" --nodes=2000 --steps=3 >/dev/null
row=$("$1" "$tmp/p")
echo "$row"
[[ "$row" == *"| 2000 |"* ]] || {
  echo "bench smoke: unexpected row" >&2
  exit 1
}
web=$("$1" --web "$tmp/p")
echo "$web"
[[ "$web" == *"| 2000 |"* ]] || {
  echo "bench smoke: unexpected web row" >&2
  exit 1
}
