#!/usr/bin/env bash
# Runs examples/training_loop on TensorFlow's recorded test run, then opens
# the profile it dumped with the tfprof binary.
# Usage: example_test.sh TRAINING_LOOP TFPROF
set -euo pipefail
loop=$(realpath "$1")
tfprof=$(realpath "$2")
# TensorFlow's test inputs, bundled in testdata/corpus (under Bazel this
# script is a link into the source tree).
corpus="$(dirname "$(realpath "$0")")/../testdata/corpus"
out=$(mktemp -d "${TEST_TMPDIR:-/tmp}/tfprof_example.XXXXXX")
trap 'rm -rf "$out"' EXIT
"$loop" "$corpus/tf-testdata/current/graph.pbtxt" \
  "$corpus/tf-testdata/current/run_meta" "$out" 12 > "$out/log"
cat "$out/log"
for f in timeline-5.json timeline-10.json profile_6; do
  [[ -s "$out/$f" ]] || { echo "FAIL: $f missing"; exit 1; }
done
grep -q '"traceEvents"' "$out/timeline-5.json"
"$tfprof" --profile_path="$out/profile_6" scope -select params \
  -account_type_regexes VariableV2 > "$out/report" 2>/dev/null
grep -q "_TFProfRoot (--/451 params)" "$out/report" ||
  { echo "FAIL: report"; cat "$out/report"; exit 1; }
echo "example: 1 passed, 0 failed"
