#!/usr/bin/env bash
# tfprof's Chrome trace files, checked structurally and then opened in a real
# viewer:
#   1. trace_check.js must catch deliberately broken traces (negative
#      self-checks, including corrupted copies of our own output) and must
#      pass TensorFlow's own timelines from the corpus (a sanity check of the
#      checker itself);
#   2. tfprof writes timelines of the graph view (-output timeline, one file
#      per step), the scope and code views (flame layout) and the ProfilerHook
#      layout (the `timeline` command) for several corpus inputs, and each
#      must pass trace_check.js;
#   3. viewer_test.js opens each in speedscope in headless Chromium and
#      asserts that it loaded and shows our lanes and events; broken traces
#      must be refused there too. speedscope also opens two of our scope-view
#      pprof files (it imports pprof), with the expected heaviest frame.
#
# Usage: viewer_test.sh TFPROF_BINARY
# Inputs: testdata/corpus, and $TFPROF_CORPUS (else <repo>/../shared/corpus)
# for the files not bundled. Needs node, Debian's
# chromium and `npm ci` in tests/consumers (scripts/setup_consumers.sh does
# both). Set TFPROF_VIEWER_SCREENSHOTS=DIR to keep a PNG of each trace.
set -euo pipefail

die() {
  echo "viewer_test: FAIL: $*" >&2
  exit 1
}

[[ $# -ge 1 ]] || die "usage: $0 TFPROF_BINARY"
bin=$(realpath "$1")
[[ -x "$bin" ]] || die "tfprof binary $1 is not executable"
here=$(dirname "$(realpath "$0")")
repo=$(realpath "$here/../..")
# The real inputs bundled with the sources; a few more from the wider corpus
# when it is there.
corpus=$repo/testdata/corpus
[[ -d "$corpus" ]] || die "bundled inputs not found at $corpus"
wider=$(realpath -m "${TFPROF_CORPUS:-$repo/../shared/corpus}")
command -v node >/dev/null || die "node is not installed"
[[ -x "${CHROMIUM:-/usr/bin/chromium}" ]] || die "${CHROMIUM:-/usr/bin/chromium} not found (apt-get install chromium, or scripts/setup_consumers.sh)"
[[ -d "$here/node_modules/playwright-core" && -d "$here/node_modules/speedscope" ]] ||
  die "npm packages missing: run 'npm ci' in tests/consumers (or scripts/setup_consumers.sh)"

tmp=$(mktemp -d "${TEST_TMPDIR:-/tmp}/tfprof_viewer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
check=(node "$here/trace_check.js")
passed=0
failed=0
indent() { sed -n "s/^/    /;1,${1}p"; } # indent N: the first N lines of stdin, indented
pass() {
  echo "ok: $*"
  passed=$((passed + 1))
}
fail() {
  echo "FAIL: $*"
  failed=$((failed + 1))
}

# --- 1. trace_check.js must be able to fail ---------------------------------
neg="$tmp/neg"
mkdir -p "$neg"
# expect_violation NAME 'SUBSTRING' [checker options] <<<JSON
expect_violation() {
  local name=$1 want=$2
  shift 2
  cat >"$neg/$name.json"
  if "${check[@]}" "$@" "$neg/$name.json" >"$neg/$name.out" 2>&1; then
    fail "trace_check accepted broken trace '$name'"
  elif ! grep -qF -- "$want" "$neg/$name.out"; then
    fail "trace_check rejected '$name' without saying '$want': $(head -2 "$neg/$name.out")"
  else
    pass "trace_check rejects '$name': $(grep -F -- "$want" "$neg/$name.out" | head -1 | sed 's/^[^:]*: //')"
  fi
}
expect_clean() { # expect_clean NAME [checker options] <<<JSON
  local name=$1
  shift
  cat >"$neg/$name.json"
  if "${check[@]}" "$@" "$neg/$name.json" >"$neg/$name.out" 2>&1; then
    pass "trace_check accepts '$name'"
  else
    fail "trace_check rejected valid trace '$name': $(head -2 "$neg/$name.out")"
  fi
}
M='{"ph":"M","name":"process_name","pid":1,"args":{"name":"p"}}'
expect_clean minimal <<<"{\"traceEvents\":[$M,{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":0,\"ts\":0,\"dur\":5},
  {\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":0,\"ts\":5,\"dur\":0},
  {\"ph\":\"s\",\"cat\":\"f\",\"name\":\"e\",\"id\":7,\"pid\":1,\"tid\":0,\"ts\":1},
  {\"ph\":\"X\",\"name\":\"c\",\"pid\":1,\"tid\":1,\"ts\":6,\"dur\":3},
  {\"ph\":\"t\",\"cat\":\"f\",\"name\":\"e\",\"id\":7,\"pid\":1,\"tid\":1,\"ts\":6},
  {\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":0,\"args\":{\"bytes\":3}},
  {\"ph\":\"N\",\"name\":\"t\",\"id\":\"0x1\",\"pid\":1,\"ts\":0},
  {\"ph\":\"O\",\"name\":\"t\",\"id\":\"0x1\",\"pid\":1,\"ts\":1,\"args\":{\"snapshot\":{}}},
  {\"ph\":\"D\",\"name\":\"t\",\"id\":\"0x1\",\"pid\":1,\"ts\":2}]}"
expect_violation overlapping_lane "overlaps" <<<"[$M,{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":0,\"ts\":0,\"dur\":10},
  {\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":0,\"ts\":9,\"dur\":10}]"
expect_clean nested_with_allow_nesting --allow-nesting <<<"[$M,{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":0,\"ts\":0,\"dur\":10},
  {\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":0,\"ts\":2,\"dur\":3}]"
expect_violation partial_overlap_with_allow_nesting "partially overlaps" --allow-nesting <<<"[$M,
  {\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":0,\"ts\":0,\"dur\":10},{\"ph\":\"X\",\"name\":\"b\",\"pid\":1,\"tid\":0,\"ts\":2,\"dur\":30}]"
expect_violation flow_without_end "has no matching t or f" <<<"[$M,{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":0,\"ts\":0,\"dur\":10},
  {\"ph\":\"s\",\"cat\":\"f\",\"name\":\"e\",\"id\":1,\"pid\":1,\"tid\":0,\"ts\":2}]"
expect_violation flow_without_start "has no flow start" <<<"[$M,{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":0,\"ts\":0,\"dur\":10},
  {\"ph\":\"t\",\"cat\":\"f\",\"name\":\"e\",\"id\":1,\"pid\":1,\"tid\":0,\"ts\":2}]"
expect_violation flow_backwards "has no flow start" <<<"[$M,{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":0,\"ts\":0,\"dur\":10},
  {\"ph\":\"s\",\"cat\":\"f\",\"name\":\"e\",\"id\":1,\"pid\":1,\"tid\":0,\"ts\":8},{\"ph\":\"t\",\"cat\":\"f\",\"name\":\"e\",\"id\":1,\"pid\":1,\"tid\":0,\"ts\":2}]"
expect_violation flow_start_outside_slices "is not inside an X slice" <<<"[$M,{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":0,\"ts\":0,\"dur\":10},
  {\"ph\":\"s\",\"cat\":\"f\",\"name\":\"e\",\"id\":1,\"pid\":1,\"tid\":5,\"ts\":2},{\"ph\":\"t\",\"cat\":\"f\",\"name\":\"e\",\"id\":1,\"pid\":1,\"tid\":0,\"ts\":3,\"bp\":\"e\"}]"
expect_violation negative_dur "is not a finite number >= 0" <<<"[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":0,\"ts\":0,\"dur\":-5}]"
expect_violation x_without_ts "missing ts" <<<"[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":0,\"dur\":5}]"
expect_violation x_without_tid "missing tid" <<<"[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"ts\":0,\"dur\":5}]"
expect_violation process_name_without_name "needs args.name" <<<"[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"args\":{}}]"
expect_violation counter_string "is not a finite number" <<<"[{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":0,\"args\":{\"a\":\"1 MB\"}}]"
expect_violation counter_no_args "counter without args" <<<"[{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":0}]"
expect_violation string_counter_other_name "is not a finite number" "--allow-string-counter=Top Allocations" \
  <<<"[{\"ph\":\"C\",\"name\":\"mem\",\"pid\":1,\"ts\":0,\"args\":{\"a\":\"1 MB\"}}]"
expect_clean string_counter_allowed "--allow-string-counter=Top Allocations" \
  <<<"[{\"ph\":\"C\",\"name\":\"Top Allocations\",\"pid\":1,\"ts\":0,\"args\":{\"a\":\"1 MB\"}}]"
expect_violation object_delete_unborn "not alive" <<<"[{\"ph\":\"D\",\"name\":\"t\",\"id\":1,\"pid\":1,\"ts\":0}]"
expect_violation unknown_phase "unknown phase" <<<"[{\"ph\":\"Q\",\"name\":\"t\",\"pid\":1,\"ts\":0}]"
expect_violation not_json "not a readable JSON trace" <<<'{"traceEvents": ['
expect_violation no_trace_events "without a traceEvents array" <<<'{"events": []}'
expect_violation too_few_events "fewer than the 1 required" --min-events=1 <<<'{"traceEvents": []}'

# --- 2. our traces, structurally ---------------------------------------------
P0=--profile_path="$corpus/shiyudian-resnet-tf-dist/profile_0"
P100=--profile_path="$corpus/shiyudian-resnet-tf-dist/profile_100"
DS=--run_meta_path="$corpus/yaroslavvb-stuff/dynamic_stitch_gpu_profile.pbtxt"
FD=--run_meta_path="$corpus/yaroslavvb-stuff/feed_dict.pbtxt"
tb_file="$wider/tensorboard/run_metadata_run_step99_tag_train.pbtxt"
TB=--run_meta_path="$tb_file"
TD=(--graph_path="$corpus/tf-testdata/current/graph.pbtxt"
  --run_meta_path="$corpus/tf-testdata/current/run_meta"
  --op_log_path="$corpus/tf-testdata/current/tfprof_log")
out="$tmp/traces"
mkdir -p "$out"
# gen WANT_FILE... -- tfprof args: runs tfprof and expects each WANT_FILE.
gen() {
  local want=()
  while [[ $1 != -- ]]; do
    want+=("$1")
    shift
  done
  shift
  if ! "$bin" "$@" >"$tmp/gen.out" 2>&1; then
    fail "tfprof $* failed: $(grep -v coverage "$tmp/gen.out" | head -2)"
    return
  fi
  local f
  for f in "${want[@]}"; do
    if [[ -s "$out/$f" ]]; then traces+=("$out/$f"); else fail "tfprof $* did not write $f"; fi
  done
}
traces=()
# Graph view (-output timeline writes <outfile>_<step>).
gen graph_p100_0 -- "$P100" graph -step 0 -max_depth 1000 -output "timeline:outfile=$out/graph_p100"
gen graph_p0_0 -- "$P0" graph -step 0 -max_depth 1000 -output "timeline:outfile=$out/graph_p0"
gen graph_ds_0 -- "$DS" graph -step 0 -max_depth 1000 -output "timeline:outfile=$out/graph_ds"
gen graph_td_0 -- "${TD[@]}" graph -step 0 -max_depth 1000 -output "timeline:outfile=$out/graph_td"
gen graph_fd_0 -- "$FD" graph -step 0 -max_depth 1000 -output "timeline:outfile=$out/graph_fd"
if [[ -f "$tb_file" ]]; then
  gen graph_tb_0 -- "$TB" graph -step 0 -max_depth 1000 -output "timeline:outfile=$out/graph_tb"
else
  echo "skipped: corpus not found at $wider (tensorboard/run_metadata_run_step99_tag_train.pbtxt)"
fi
# -step -1 writes one file per step of profile_100.
steps=(0 11 35 43 46 48 55 56 66 70 77 90)
gen "${steps[@]/#/graph_p100all_}" -- "$P100" graph -step -1 -max_depth 1000 -output "timeline:outfile=$out/graph_p100all"
# Scope and code views (flame layout; written as <outfile>_-1).
gen scope_p100_-1 -- "$P100" scope -max_depth 1000 -output "timeline:outfile=$out/scope_p100"
gen scope_p0_-1 -- "$P0" scope -max_depth 1000 -output "timeline:outfile=$out/scope_p0"
gen scope_ds_-1 -- "$DS" scope -max_depth 1000 -output "timeline:outfile=$out/scope_ds"
gen scope_td_-1 -- "${TD[@]}" scope -max_depth 1000 -output "timeline:outfile=$out/scope_td"
gen code_p100_-1 -- "$P100" code -max_depth 1000 -output "timeline:outfile=$out/code_p100"
gen code_p0_-1 -- "$P0" code -max_depth 1000 -output "timeline:outfile=$out/code_p0"
# The ProfilerHook layout (the `timeline` command; needs RunMetadata).
gen hook_ds.json -- "$DS" timeline -step 0 -outfile "$out/hook_ds.json"
gen hook_ds_memory.json -- "$DS" timeline -step 0 -show_memory true -outfile "$out/hook_ds_memory.json"
gen hook_ds_gpu.json -- "$DS" timeline -step 0 -op_time gpu -show_dataflow false -outfile "$out/hook_ds_gpu.json"
gen hook_ds_all.json -- "$DS" timeline -step 0 -op_time all -outfile "$out/hook_ds_all.json"
gen hook_td_memory.json -- "${TD[@]}" timeline -step 0 -show_memory true -outfile "$out/hook_td_memory.json"
gen hook_fd.json -- "$FD" timeline -step 0 -show_memory true -outfile "$out/hook_fd.json"
if [[ -f "$tb_file" ]]; then
  gen hook_tb.json -- "$TB" timeline -step 0 -outfile "$out/hook_tb.json"
fi

# Graph-view memory counters "Top Allocations" carry strings ("0.00128 MB
# from DW", "N/A"), as TensorFlow's tfprof timeline did: a Trace Event Format
# violation that is tolerated here by name only (see the test's report).
tolerate=(--allow-string-counter="Top Allocations")
for f in "${traces[@]}"; do
  if res=$("${check[@]}" "${tolerate[@]}" "$f"); then
    pass "${res#trace_check: ok }"
  else
    fail "trace_check: $(basename "$f"):"
    indent 10 <<<"$res"
  fi
done
# Our traces with one thing broken must be caught.
corrupt() { # corrupt SRC DST JS_BODY(events)
  node -e '
    const fs = require("fs");
    const t = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
    const ev = t.traceEvents;
    (new Function("ev", process.argv[3]))(ev);
    fs.writeFileSync(process.argv[2], JSON.stringify(t));' "$1" "$2" "$3"
}
corrupt "$out/graph_p100_0" "$neg/graph_overlap" '
  const xs = ev.filter((e) => e.ph === "X" && e.dur > 0);
  const a = xs[0], b = xs.find((e) => e !== a && e.pid === a.pid && e.tid === a.tid && e.ts >= a.ts + a.dur);
  b.ts = a.ts + a.dur - 1;
  b.dur = Math.max(b.dur, 2);'
corrupt "$out/hook_td_memory.json" "$neg/hook_flow_end_removed" '
  ev.splice(ev.findIndex((e) => e.ph === "t"), 1);'
corrupt "$out/hook_td_memory.json" "$neg/hook_object_unborn" '
  ev.splice(ev.findIndex((e) => e.ph === "N"), 1);'
corrupt "$out/scope_p100_-1" "$neg/scope_negative_dur" '
  ev.find((e) => e.ph === "X").dur = -1;'
for f in graph_overlap hook_flow_end_removed hook_object_unborn scope_negative_dur; do
  if "${check[@]}" "$neg/$f" >"$neg/$f.out"; then
    fail "trace_check accepted corrupted copy $f"
  else
    pass "trace_check rejects corrupted copy $f: $(head -1 "$neg/$f.out" | sed 's/^[^:]*: //')"
  fi
done

# TensorFlow's own timelines (the checker's sanity check): the same rules hold
# for them. They have no "Top Allocations" counters; dynamic_stitch's has no
# flows (our ProfilerHook file of the same RunMetadata has none either), the
# others do.
tf_traces=("$corpus/yaroslavvb-stuff/dynamic_stitch_gpu_profile.json"
  "$corpus"/tf1-timelines/*.json)
for rel in yaroslavvb-stuff/timeline.feed.json \
  shiyudian-resnet-tf-dist/timeline-1300001.json \
  tf1-timelines/ANNA_timeline_01.json tf1-timelines/conv_relation_timeline.ctf.json \
  tf1-timelines/mnist-xla_timeline.ctf.json; do
  if [[ -f "$wider/$rel" ]]; then
    tf_traces+=("$wider/$rel")
  else
    echo "skipped: corpus not found at $wider ($rel)"
  fi
done
for f in "${tf_traces[@]}"; do
  if res=$("${check[@]}" "$f"); then
    res=${res#trace_check: ok "$corpus"/}
    pass "TensorFlow's own ${res#trace_check: ok "$wider"/}"
  else
    fail "trace_check rejects TensorFlow's own $(basename "$f"):"
    indent 10 <<<"$res"
  fi
done

# --- 3. the viewer -------------------------------------------------------------
# Every trace of our files except the per-step copies (two of those suffice),
# plus TensorFlow's own dynamic_stitch timeline as a reference.
view=()
for f in "${traces[@]}"; do
  case $(basename "$f") in
    graph_p100all_0 | graph_p100all_90) view+=("$f") ;;
    graph_p100all_*) ;;
    *) view+=("$f") ;;
  esac
done
view+=("$corpus/yaroslavvb-stuff/dynamic_stitch_gpu_profile.json")
# Broken traces speedscope must refuse (so a refusal would be noticed).
printf '{"traceEvents":[]}' >"$neg/empty.json"
printf '{"profile": "not a trace"}' >"$neg/not_a_trace.json"
# speedscope also imports pprof profiles: our scope-view pprof files must
# load, and the frame with the largest self value (from tfprof's JSON of the
# same query) must top the sandwich table.
pprof_args=()
for in_name in tf-testdata profile_100; do
  if [[ $in_name == tf-testdata ]]; then in_args=("${TD[@]}"); else in_args=("$P100"); fi
  pp="$out/scope_$in_name.pb.gz"
  if "$bin" "${in_args[@]}" scope -max_depth 1000 -select micros -output "pprof:outfile=$pp" >/dev/null 2>&1 &&
    "$bin" "${in_args[@]}" scope -max_depth 1000 -select micros -output json >"$pp.json" 2>/dev/null; then
    top=$(node -e '
      const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      const all = [];
      const walk = (n) => { all.push(n); n.children.forEach(walk); };
      j.root.children.forEach(walk);
      const max = Math.max(...all.map((n) => n.micros.self));
      console.log(JSON.stringify(all.filter((n) => n.micros.self === max).map((n) => n.name)));' "$pp.json")
    pprof_args+=(--pprof "$pp" --pprof-top "$top")
  else
    fail "tfprof could not write the scope pprof file of $in_name"
  fi
done

vargs=(--skip-empty "${pprof_args[@]}")
[[ -n "${TFPROF_VIEWER_SCREENSHOTS:-}" ]] && vargs+=(--screenshots "$TFPROF_VIEWER_SCREENSHOTS")
vargs+=(--expect-reject "$neg/graph_overlap" --expect-reject "$neg/empty.json"
  --expect-reject "$neg/not_a_trace.json")
echo "viewer_test: $(/usr/bin/env "${CHROMIUM:-/usr/bin/chromium}" --version 2>/dev/null | head -1)"
if (cd "$here" && node viewer_test.js "${vargs[@]}" "${view[@]}") >"$tmp/viewer.out" 2>&1; then
  v=$(tail -1 "$tmp/viewer.out")
  cat "$tmp/viewer.out"
  n=$(sed -n 's/^viewer_test: \([0-9]*\) passed.*/\1/p' <<<"$v")
  passed=$((passed + ${n:-0}))
else
  cat "$tmp/viewer.out"
  fail "viewer_test.js"
fi

echo "viewer_test: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
