#!/usr/bin/env bash
# The differential pprof of `diff scope -output pprof` read by `go tool
# pprof` (Debian's golang-go): for every top-level name scope, the cumulative
# value pprof prints equals the change tfprof's own diff reports for it
# (`-output csv`), and a scope that got faster shows a negative value. The
# run compares the shiyudian run's profile_100 with profile_0.
set -euo pipefail
tfprof=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=$root/testdata/corpus/shiyudian-resnet-tf-dist
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/tfprof_pprof_diff.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export HOME=${HOME:-$tmp} GOCACHE=${GOCACHE:-$tmp/gocache} PPROF_TMPDIR=$tmp
export GOTOOLCHAIN=local GOPROXY=off
pprof_bin=$(go tool -n pprof)
run() {
  "$tfprof" --profile_path="$runs/profile_100" \
    --base_profile_path="$runs/profile_0" "$@" 2>/dev/null
}
run diff scope -max_depth 1000 -select micros \
  -output "pprof:outfile=$tmp/diff.pb.gz" >/dev/null
run diff scope -max_depth 2 -select micros -output csv >"$tmp/diff.csv"
"$pprof_bin" -symbolize=none -top -cum -sample_index=1 -unit=us \
  -nodefraction=0 -nodecount=1000000 "$tmp/diff.pb.gz" >"$tmp/top.txt"
# pprof's rows: "flat flat% sum% cum cum% name"; cum in whole microseconds.
declare -A cum
while read -r _ _ _ c _ name; do
  [[ $c == *us ]] || continue
  cum[$name]=${c%us}
done < <(grep -E '^ *-?[0-9]' "$tmp/top.txt")
checked=0 negative=0
while IFS=, read -r name depth _ _ _ delta _; do
  [[ $depth == 1 ]] || continue
  [[ $delta == 0 ]] && continue  # no samples to show
  got=${cum[$name]:-missing}
  if [[ $got != "$delta" ]]; then
    echo "pprof_diff_test: FAIL: $name: pprof cum $got, tfprof change $delta" >&2
    exit 1
  fi
  checked=$((checked + 1))
  ((delta < 0)) && negative=$((negative + 1))
done < <(tail -n +2 "$tmp/diff.csv")
if ((checked < 10 || negative < 1)); then
  echo "pprof_diff_test: FAIL: only $checked scopes ($negative faster) compared" >&2
  exit 1
fi
echo "pprof_diff_test: $checked top-level scopes ($negative faster): pprof's cumulative values are tfprof's changes"
