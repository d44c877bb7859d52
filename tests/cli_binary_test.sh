#!/usr/bin/env bash
# Drives the real tfprof binary: one-shot commands on the corpus, a scripted
# report, a failing gate, and the exit status of each kind of error.
# Usage: cli_binary_test.sh TFPROF [WIDER_CORPUS_DIR]
# Runs on the real inputs bundled in testdata/corpus; the one case that needs
# a file of the wider corpus (default ../shared/corpus, or $TFPROF_CORPUS)
# says "skipped" when it is not there.
set -uo pipefail
bin=$(realpath "$1")
src="$(dirname "$(realpath "$0")")/.."
corpus="$src/testdata/corpus"
wider=$(realpath -m "${2:-${TFPROF_CORPUS:-$src/../shared/corpus}}")
sample="$src/testdata/sample/profile"
tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/tfprof_cli.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
expect() {  # expect NAME WANT_STATUS PATTERN -- command...
  local name=$1 want=$2 pattern=$3
  shift 4
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [[ $got -ne $want ]] || ! grep -qF -- "$pattern" "$tmp/out" "$tmp/err"; then
    echo "FAIL: $name (exit $got, want $want; looking for '$pattern')"
    cat "$tmp/out" "$tmp/err" | head -20
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
  fi
}
# The bundled inputs are the files their provenance names.
if (cd "$corpus" && sha256sum --quiet -c SHA256SUMS); then
  passed=$((passed + 1))
else
  echo "FAIL: testdata/corpus differs from testdata/corpus/SHA256SUMS"
  failed=$((failed + 1))
fi
p0="--profile_path=$corpus/shiyudian-resnet-tf-dist/profile_0"
expect usage 0 "--profile_path" -- "$bin"
expect help 0 "(default: 10)" -- "$bin" --help
for c in scope graph op code advise timeline check set summary save timing help quit; do
  expect "help_lists_$c" 0 "  $c " -- "$bin" --help
done
expect help_topic 0 "check [-step N] [-rank N] [-alpha Q]" -- "$bin" help check
expect timeline_as_profile 1 "not a ProfileProto: load it with --trace_path" -- \
  "$bin" --profile_path="$corpus/yaroslavvb-stuff/dynamic_stitch_gpu_profile.json" scope
expect scope 0 "_TFProfRoot" -- "$bin" "$p0" scope -max_depth 2 -select micros,params
expect op 0 "op occurrence (run|defined)" -- "$bin" "$p0" op -select micros,occurrence -order_by micros
expect code 0 "cifar10_main.py" -- "$bin" "$p0" code -max_depth 3
expect graph 0 "node name | total execution time" -- "$bin" \
  --graph_path="$corpus/tf-testdata/current/graph.pbtxt" \
  --run_meta_path="$corpus/tf-testdata/current/run_meta" graph -max_depth 3
expect advise 0 "ExpensiveOperationChecker:" -- "$bin" "$p0" advise
# The gate example of g3doc/command_line.md, on the bundled sample.
expect gate_pass 0 "PASS params = 451" -- "$bin" --profile_path="$sample" \
  check 'params<=1.5m' 'micros[.*Conv2D.*]<20ms' 'peak_bytes<=2GB'
expect gate_fail 3 "FAIL micros" -- "$bin" --profile_path="$sample" check 'micros<=1ms'
printf 'summary\nop -max_depth 1\ncheck micros<=1ms\nscope\n' > "$tmp/report.tfprof"
expect script_gate 3 "report.tfprof:3:" -- "$bin" --profile_path="$sample" --script="$tmp/report.tfprof"
expect report 0 "Profile:" -- "$bin" --profile_path="$sample" --script="$src/testdata/sample/report.tfprof"
expect script_missing 1 "--script: /no/such.tfprof: cannot open (No such file or directory)" -- "$bin" --profile_path="$sample" --script=/no/such.tfprof
expect unknown_flag 2 "did you mean --max_depth" -- "$bin" --max_dept=3
expect bad_value 2 "-order_by" -- "$bin" --profile_path="$sample" op -order_by fast
expect http_bad_address 2 "--http: 'nonsense' has no port number" -- "$bin" --profile_path="$sample" --http=nonsense
expect http_with_command 2 "--http serves the web UI; it takes no command" -- "$bin" --profile_path="$sample" --http=0 scope
expect http_shell_usage 2 "usage: http" -- "$bin" --profile_path="$sample" http 1 2
expect missing_file 1 "/no/such/profile" -- "$bin" --profile_path=/no/such/profile scope
expect wrong_format 1 "ProfileProto" -- "$bin" --profile_path="$corpus/tf-testdata/current/graph.pbtxt" scope
kineto="$corpus/pytorch-kineto/worker0.1623143089861.pt.trace.json.gz"
expect trace_op 0 "aten::cudnn_convolution" -- "$bin" --trace_path="$kineto" op -order_by micros -max_depth 5
expect trace_note 0 "kineto trace, 188 nodes, 6 steps" -- "$bin" --trace_path="$kineto" scope -max_depth 1
expect trace_code 0 "node name | total execution time" -- "$bin" --trace_path="$kineto" code -max_depth 2
expect trace_xplane 0 "_TFProfRoot" -- "$bin" \
  --trace_path="$corpus/aoberai-chess-engine/train/plugins/profile/2021_06_16_00_30_02/aoberai.xplane.pb" scope -max_depth 1
if [[ -f "$wider/yaroslavvb-stuff/timeline.feed.json" ]]; then
  expect trace_timelines 0 "2 steps" -- "$bin" \
    --trace_path="$corpus/yaroslavvb-stuff/dynamic_stitch_gpu_profile.json,$wider/yaroslavvb-stuff/timeline.feed.json" op -step 1
else
  echo "skipped: corpus not found at $wider (yaroslavvb-stuff/timeline.feed.json)"
fi
expect trace_wrong 1 "graph.pbtxt" -- "$bin" --trace_path="$corpus/tf-testdata/current/graph.pbtxt" op
expect trace_conflict 2 "--trace_path is set" -- "$bin" --trace_path="$kineto" --profile_path="$sample" op
# A report that cannot be written is an error, not a silent success.
if [[ -w /dev/full ]]; then
  expect stdout_full 1 "writing standard output failed (No space left on device)" -- \
    bash -c '"$0" --profile_path="$1" summary >/dev/full' "$bin" "$sample"
  expect gate_stdout_full 1 "writing standard output failed" -- \
    bash -c '"$0" --profile_path="$1" check "params<=1.5m" >/dev/full' "$bin" "$sample"
else
  echo "skipped: no /dev/full"
fi
echo "cli binary: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
