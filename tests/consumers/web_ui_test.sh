#!/usr/bin/env bash
# The web UI in a real browser: starts `tfprof --http` on profile_100 with
# profile_0 as its base, writes the command line's JSON of the same queries,
# and runs web_ui_test.js (playwright-core driving Debian's headless
# Chromium) to check the page against them. Then stops the server with
# SIGTERM and expects a clean exit. Then the same for a PyTorch trace (the
# kernel view and its timeline), for a diff with verdicts (the trace
# against a base copy of it with a slower and a renamed kernel) and for a
# JAX XSpace (the memory tab); then two DDP ranks (the ranks tab and the
# overview's communication); then one rank's GPU annotation lane; then
# every tab of a 24-step trace, timed.
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
"$bin" "$cur" op -select micros,occurrence -order_by micros -max_depth 1000000 -output json >"$tmp/op.json"
"$bin" "$cur" steps -output json >"$tmp/steps.json"
"$bin" "$cur" "$base" diff scope -max_depth 2 -output json >"$tmp/diff.json"
"$bin" "$cur" graph -step 0 -max_depth 1000000 -output "timeline:outfile=$tmp/timeline" >/dev/null
mv "$tmp/timeline_0" "$tmp/timeline.json"

# serve NAME tfprof-args...: starts tfprof --http in the background, sets url.
serve() {
  local name=$1
  shift
  # The files exist before the server starts: the background job opens them
  # itself, maybe after the first read below (under load it did).
  : >"$tmp/$name.out"
  : >"$tmp/$name.err"
  "$bin" "$@" --http=127.0.0.1:0 >"$tmp/$name.out" 2>"$tmp/$name.err" &
  server=$!
  url=""
  for _ in $(seq 1 300); do
    url=$(sed -n 's/^Serving the web UI on \(http[^ ]*\).*/\1/p' "$tmp/$name.out")
    [[ -n "$url" ]] && return 0
    kill -0 "$server" 2>/dev/null || die "tfprof --http exited: $(cat "$tmp/$name.err")"
    sleep 0.1
  done
  die "tfprof --http did not say where it serves"
}
# stop NAME: SIGTERM, and a clean exit is expected.
stop() {
  kill -TERM "$server"
  if wait "$server"; then
    echo "ok: SIGTERM stops the server cleanly"
  else
    echo "FAIL: tfprof --http exited with status $? on SIGTERM"
    status=1
  fi
  server=""
  grep -q "web UI stopped" "$tmp/$1.out" || { echo "FAIL: no 'web UI stopped'"; status=1; }
}

status=0
serve profile "$cur" "$base"
echo "web_ui_test: $url, $("${CHROMIUM:-/usr/bin/chromium}" --version 2>/dev/null | head -1)"
(cd "$here" && node web_ui_test.js "$url" "$tmp" ${shots:+"$shots"}) || status=1
stop profile

# A PyTorch trace: the kernel view, float ops (MFU and FLOP/s) and the
# trace's own timeline.
kineto=--trace_path=$repo/testdata/corpus/pytorch-kineto/worker0.1623143089861.pt.trace.json.gz
mkdir -p "$tmp/trace"
"$bin" "$kineto" kernel -order_by micros -max_depth 1000000 -output json >"$tmp/trace/kernel.json" 2>/dev/null
# Float ops: the summary's MFU and FLOP/s, the op and kernel tables' rates.
"$bin" "$kineto" summary -output json >"$tmp/trace/summary.json" 2>/dev/null
"$bin" "$kineto" op -order_by float_ops -select micros,accelerator_flop_rate \
  -output json >"$tmp/trace/op_rate.json" 2>/dev/null
"$bin" "$kineto" kernel -order_by float_ops -select micros,accelerator_flop_rate \
  -output json >"$tmp/trace/kernel_rate.json" 2>/dev/null
# The overview: the steps table's split per step, the top ops by
# accelerator and host time.
"$bin" "$kineto" steps -output csv >"$tmp/trace/steps.csv" 2>/dev/null
"$bin" "$kineto" advise >"$tmp/trace/advise.txt" 2>/dev/null
for a in accelerator_micros cpu_micros; do
  "$bin" "$kineto" op -order_by $a -select $a,occurrence -output json \
    >"$tmp/trace/op_$a.json" 2>/dev/null
done
step=$("$bin" "$kineto" steps -output csv 2>/dev/null | sed -n 2p | cut -d, -f1)
echo "$step" >"$tmp/trace/step.txt"
"$bin" "$kineto" timeline -step "$step" -outfile "$tmp/trace/timeline.json" >/dev/null 2>&1
# The next step too: the page draws the two as a range.
step2=$("$bin" "$kineto" steps -output csv 2>/dev/null | sed -n 3p | cut -d, -f1)
echo "$step2" >"$tmp/trace/step2.txt"
"$bin" "$kineto" timeline -step "$step2" -outfile "$tmp/trace/timeline2.json" >/dev/null 2>&1
serve trace "$kineto"
(cd "$here" && node web_ui_test.js --trace "$url" "$tmp/trace" ${shots:+"$shots"}) || status=1
stop trace

# Diff verdicts: the PyTorch trace against a base copy of it in which one
# batch-norm kernel takes half the time (so the current run is slower) and
# one convolution kernel has another name (a cost shift); the rest is the
# same, step for step.
mkdir -p "$tmp/diff"
python3 - "$repo/testdata/corpus/pytorch-kineto/worker0.1623143089861.pt.trace.json.gz" \
  "$tmp/diff/base.pt.trace.json.gz" <<'PY'
import gzip, json, sys
trace = json.load(gzip.open(sys.argv[1]))
for e in trace["traceEvents"]:
    name = e.get("name", "")
    if e.get("cat") in ("Kernel", "kernel"):
        if name.startswith("void cudnn::bn_bw_1C11_kernel_new"):
            e["dur"] = e["dur"] / 2
        elif name.startswith("void cudnn::detail::dgrad_engine<"):
            e["name"] = name.replace("dgrad_engine<", "dgrad_engine_v7<", 1)
with gzip.open(sys.argv[2], "wt") as f:
    json.dump(trace, f)
PY
diffbase=--base_trace_path=$tmp/diff/base.pt.trace.json.gz
for v in op kernel; do
  "$bin" "$kineto" "$diffbase" diff $v -output json >"$tmp/diff/$v.json" 2>/dev/null
  "$bin" "$kineto" "$diffbase" diff $v >"$tmp/diff/$v.txt" 2>/dev/null
done
"$bin" "$kineto" "$diffbase" diff steps -output json >"$tmp/diff/steps.json" 2>/dev/null
"$bin" "$kineto" "$diffbase" diff steps >"$tmp/diff/steps.txt" 2>/dev/null
"$bin" "$kineto" "$diffbase" diff top -output json >"$tmp/diff/top.json" 2>/dev/null
serve diff "$kineto" "$diffbase"
(cd "$here" && node web_ui_test.js --diff "$url" "$tmp/diff" ${shots:+"$shots"}) || status=1
stop diff

# A JAX XSpace: the memory tab against the CLI's memory text and CSV.
jax=--trace_path=$repo/testdata/corpus/gpu-h200-2026/jax_lm_cb.xplane.pb.gz
mkdir -p "$tmp/jax"
"$bin" "$jax" memory -top 50 >"$tmp/jax/memory.txt" 2>/dev/null
"$bin" "$jax" memory -output csv >"$tmp/jax/memory.csv" 2>/dev/null
serve jax "$jax"
(cd "$here" && node web_ui_test.js --memory "$url" "$tmp/jax" ${shots:+"$shots"}) || status=1
stop jax

# Two DDP ranks: the ranks tab against the CLI's ranks report and aligned
# timeline, the overview's communication against steps -output csv.
ranks=--trace_path=$repo/testdata/ranks/ddp-gloo
mkdir -p "$tmp/ranks"
"$bin" "$ranks" ranks -output json >"$tmp/ranks/ranks.json" 2>/dev/null
"$bin" "$ranks" ranks >"$tmp/ranks/ranks.txt" 2>/dev/null
"$bin" "$ranks" ranks -step 3 -output "timeline:outfile=$tmp/ranks/ranks_timeline3.json" 2>/dev/null
"$bin" "$ranks" steps -output csv >"$tmp/ranks/steps.csv" 2>/dev/null
serve ranks "$ranks"
(cd "$here" && node web_ui_test.js --ranks "$url" "$tmp/ranks" ${shots:+"$shots"}) || status=1
stop ranks

# One DDP rank's trace: the GPU annotation lane of a step against the
# CLI's timeline of that step.
rank0=--trace_path=$repo/testdata/ranks/ddp-gloo/ddp2_rank0.pt.trace.json.gz
mkdir -p "$tmp/rank0"
step=$("$bin" "$rank0" steps -output csv 2>/dev/null | sed -n 3p | cut -d, -f1)
echo "$step" >"$tmp/rank0/step.txt"
"$bin" "$rank0" timeline -step "$step" -outfile "$tmp/rank0/timeline.json" >/dev/null 2>&1
serve rank0 "$rank0"
(cd "$here" && node web_ui_test.js --annotations "$url" "$tmp/rank0" ${shots:+"$shots"}) || status=1
stop rank0

# A 24-step trace (the bundled one repeated by bench/gen_kineto.py): every
# tab opened and timed (the times are printed, not asserted).
mkdir -p "$tmp/big"
/usr/bin/python3 "$repo/bench/gen_kineto.py" \
  "$repo/testdata/corpus/pytorch-kineto/worker0.1623143089861.pt.trace.json.gz" \
  "$tmp/big/steps24.pt.trace.json" 4
big=--trace_path=$tmp/big/steps24.pt.trace.json
"$bin" "$big" steps -output csv >"$tmp/big/steps.csv" 2>/dev/null
serve big "$big"
(cd "$here" && node web_ui_test.js --timings "$url" "$tmp/big") || status=1
stop big

# An input's overview against the CLI's figures (steps split, utilization,
# top kernels and ops, devices), every tab timed: overview NAME ARGS...
overview() {
  local name=$1
  shift
  mkdir -p "$tmp/$name"
  "$bin" "$@" steps -output csv >"$tmp/$name/steps.csv" 2>/dev/null
  "$bin" "$@" summary -output json >"$tmp/$name/summary.json" 2>/dev/null
  "$bin" "$@" kernel -order_by micros -max_depth 1000000 -output json \
    >"$tmp/$name/kernel.json" 2>/dev/null
  for a in accelerator_micros cpu_micros; do
    "$bin" "$@" op -order_by $a -select $a,occurrence -output json \
      >"$tmp/$name/op_$a.json" 2>/dev/null
  done
  serve "$name" "$@"
  (cd "$here" && node web_ui_test.js --overview "$url" "$tmp/$name") || status=1
  stop "$name"
}

# The bundled JAX XSpace; with ../shared/corpus, the H200 ResNet trace.
overview jaxov "$jax"
resnet=$repo/../shared/corpus/gpu-h200-2026/resnet.pt.trace.json.gz
if [[ -f "$resnet" ]]; then
  overview resnet --trace_path="$resnet"
else
  echo "skipped: the H200 ResNet trace (no ../shared/corpus)"
fi
exit $status
