#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (+ ASan and UBSan) and runs each for
# a bounded time, seeded from ../shared/corpus and testdata/.
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 10)
#        FUZZ_RUNS=N scripts/fuzz.sh   (N inputs per target with a fixed seed:
#                                      reproducible, as CI runs it)
# Crashes are saved as tests/fuzz/crash-<target>-*; add each one as a
# regression input in tests/ once fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
export DEBIAN_FRONTEND=noninteractive
if ! command -v clang++-14 >/dev/null || [[ ! -d /usr/lib/llvm-14/lib/clang ]]; then
  apt-get update -qq && apt-get install -y -qq clang-14 libclang-rt-14-dev >/dev/null
fi
# FUZZ_BUILD_DIR: a CMake build configured with -DTFPROF_FUZZ=ON (and clang)
# to use instead of configuring build-fuzz here (scripts/test.sh passes its
# sanitizer build, which is made with both).
build=${FUZZ_BUILD_DIR:-build-fuzz}
if [[ -z "${FUZZ_BUILD_DIR:-}" ]]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTFPROF_SANITIZE=ON -DTFPROF_FUZZ=ON >/dev/null
fi
targets=(profile_proto graph_def run_metadata op_log checkpoint options shell_line trace
  web_api)
cmake --build "$build" --target "${targets[@]/#/fuzz_}"

# Seeds: the bundled real inputs (testdata/corpus), and the wider corpus's
# files where it is there.
corpus=corpus
seeds=$(mktemp -d)
trap 'rm -rf "$seeds"' EXIT
seed() {  # seed TARGET FILE... (corpus/REL is looked up in both corpora)
  local target=$1; shift
  mkdir -p "$seeds/$target"
  local n=0
  for f in "$@"; do
    n=$((n + 1))
    for c in "testdata/$f" "${TFPROF_CORPUS:-../shared/corpus}/${f#corpus/}" "$f"; do
      if [[ -f "$c" ]]; then cp "$c" "$seeds/$target/$n-$(basename "$c")"; break; fi
    done
  done
}
seed profile_proto "$corpus/shiyudian-resnet-tf-dist/profile_0_tiny" testdata/sample/profile
seed graph_def "$corpus/tf-testdata/current/graph.pbtxt" "$corpus/tensorboard/graphdef_mnist.pbtxt"
seed run_metadata "$corpus/tf-testdata/current/run_meta" "$corpus/yaroslavvb-stuff/feed_dict.pbtxt" \
  "$corpus/yaroslavvb-stuff/dynamic_stitch_gpu_profile.pbtxt"
seed op_log "$corpus/tf-testdata/current/tfprof_log" "$corpus/tf-testdata/tf-1.2/tfprof_log"
seed checkpoint "$corpus/tf-testdata/current/ckpt.index" "$corpus/tf-testdata/tf-1.2/ckpt.index"
seed trace "$corpus/yaroslavvb-stuff/dynamic_stitch_gpu_profile.json" \
  "$corpus/tf1-timelines/dlprof_mnist_xla_timeline_xla.ctf.json" \
  "$corpus/hta/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz" \
  "$corpus/hta/alexnet_benchmark_result_2869224_1695835535_trace.json.gz" \
  "$corpus/aoberai-chess-engine/train/plugins/profile/2021_06_16_00_30_02/aoberai.xplane.pb"
mkdir -p "$seeds/options" "$seeds/shell_line" "$seeds/web_api"
printf -- '-max_depth 3 -select micros,bytes -order_by micros' > "$seeds/options/a"
printf -- "params<=1m" > "$seeds/options/b"
printf -- 'scope -max_depth 2 -select params,micros' > "$seeds/shell_line/a"
printf -- "op -select occurrence,input_shapes -order_by occurrence" > "$seeds/shell_line/b"
printf -- "check 'micros[a.*]<1ms'" > "$seeds/shell_line/c"
printf -- '/api/view?view=scope&max_depth=3&node=1&levels=2&offset=0&limit=5' > "$seeds/web_api/a"
printf -- '/api/diff?view=op&map=a%%3D%%3Eb&alpha=0.1&select=micros,bytes' > "$seeds/web_api/b"
printf -- '/api/timeline?step=0' > "$seeds/web_api/c"
printf -- '/api/view?view=code&levels=all&show_name_regexes=a.*' > "$seeds/web_api/d"

export ASAN_OPTIONS=detect_leaks=0
status=0
for t in "${targets[@]}"; do
  log=$(mktemp)
  if [[ -n "${FUZZ_RUNS:-}" ]]; then
    limit=(-runs="$FUZZ_RUNS" -seed=1)
  else
    limit=(-max_total_time="$secs")
  fi
  if ! "$build/fuzz_$t" "${limit[@]}" -rss_limit_mb=4096 -max_len=65536 \
      -artifact_prefix="tests/fuzz/crash-$t-" "$seeds/$t" >"$log" 2>&1; then
    echo "fuzz_$t: FAILED (see tests/fuzz/crash-$t-*)"; tail -30 "$log"; status=1
  else
    execs=$(grep -o 'Done [0-9]* runs' "$log" | grep -o '[0-9]*' || true)
    echo "fuzz_$t: ok, $execs executions"
  fi
  rm -f "$log"
done
exit $status
