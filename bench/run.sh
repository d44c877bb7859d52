#!/usr/bin/env bash
# Generates ProfileProto files (tools/gen_profile: seeded, 10 steps) at
# several sizes and prints one table row per size: file size, nodes, our load
# time, a bare ProfileProto::ParseFromString of the same bytes in the same
# run (n/a past protobuf's 2 GiB limit), their ratio, peak RSS / file size
# after loading and after all queries, each view's (scope/graph/op/code)
# default query cold (the first after a fresh load, each in its own
# process) and repeated, and the filtered scope query (-max_depth 4
# -min_micros 1000 -order_by micros) cold. Then the trace rows (--traces)
# and every figure against its target (bench/targets.py), also the steps
# table, the web page's first request and opening a node, diff, and growth
# over the sizes.
# Usage: bench/run.sh              (100000 500000 1200000 nodes, i.e. about
#                                   0.2, 1 and 2.4 GB, then the traces)
#        bench/run.sh NODES...     (those sizes only, no traces)
#        bench/run.sh --smoke       (a 2,000-node run: checks it works)
#        bench/run.sh --traces      (the trace rows only: PyTorch, TF
#                                    timeline and XSpace traces made from
#                                    corpus ones, see traces() below)
#        bench/run.sh --web [NODES...]  (the web UI's first page and the
#                                    opening of a node, per view, next to
#                                    the command line's query; default
#                                    100000 500000 1200000 nodes)
#        bench/run.sh --diff [NODES...]  (diff scope of each generated
#                                    profile against itself, cold, over its
#                                    load, three times; default 100000 nodes)
#        bench/run.sh --builds [NODES]  (the README's Bazel tfprof against a
#                                    CMake Release tfprof of the same sources:
#                                    load time of one generated profile,
#                                    default 100000 nodes, about 200 MB)
#        bench/run.sh --against REV [NODES]  (this tree's bench against the
#                                    one of git revision REV, built in a
#                                    worktree with the same flags: rows of
#                                    both, taking turns three times on one
#                                    generated profile, default 100000
#                                    nodes; shows a change's effect)
#        bench/run.sh --fleet [ARGS]  (the Python package's fleet row:
#                                    tfprof.fleet.summarize of generated
#                                    rank traces on a 2-worker Dask
#                                    LocalCluster; ARGS go to
#                                    bench/fleet_bench.py, default 256
#                                    ranks of about 20 MB; the package is
#                                    CMake's, built in build/)
#
# What is measured is the README's build: Bazel with .bazelrc's defaults
# (-c opt), i.e. the binaries `bazel build` makes (the fleet row: the CMake
# Release build of the Python package, which Bazel does not build).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == "--fleet" ]]; then
  shift
  [[ -f build/CMakeCache.txt ]] ||
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build --target tfprof_python >/dev/null
  PYTHONPATH="$PWD/build/python" exec /usr/bin/python3 bench/fleet_bench.py "$@"
fi
bazel build //bench:bench //tools:gen_profile //cli:tfprof >/dev/null 2>&1 ||
  bazel build //bench:bench //tools:gen_profile //cli:tfprof
bin=bazel-bin
# bazel-bin points into bazel-out/<cpu>-<compilation mode>/bin.
echo "build: bazel, configuration $(basename "$(dirname "$(readlink -f bazel-bin)")") (the README's binaries)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tfprof_bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
corpus=testdata/corpus
# The columns of bench's profile row.
profile_header="| file | nodes | load | bare parse | load/parse | peak RSS/file (load) | peak RSS/file (load+queries) | default query cold (scope/graph/op/code) | cold/load | repeated | filtered scope query cold | filtered/load |"
profile_separator=$(sed 's/[^|]//g; s/|/|---/g; s/---$//' <<<"$profile_header")
if [[ "${1:-}" == "--builds" ]]; then
  n=${2:-100000}
  cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build-release --target tfprof >/dev/null
  "$bin/tools/gen_profile" "$tmp/p" --nodes="$n" --steps=10 >/dev/null
  python3 bench/time_builds.py "$tmp/p" \
    "bazel -c opt=$bin/cli/tfprof" "cmake Release=build-release/tfprof"
  exit 0
fi
if [[ "${1:-}" == "--against" ]]; then
  rev=${2:?usage: bench/run.sh --against REV [NODES]}
  n=${3:-100000}
  wt="$tmp/rev"
  git worktree add --detach "$wt" "$rev" >/dev/null 2>&1
  trap 'git worktree remove --force "$wt" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
  (cd "$wt" && bazel build //bench:bench >/dev/null 2>&1) ||
    (cd "$wt" && bazel build //bench:bench)
  cp "$wt/bazel-bin/bench/bench" "$tmp/bench_rev"
  (cd "$wt" && bazel shutdown >/dev/null 2>&1 || true)
  "$bin/tools/gen_profile" "$tmp/p" --nodes="$n" --steps=10 >/dev/null
  echo "(The $rev rows have that revision's columns, which may differ.)"
  echo "| build ${profile_header:1}"
  echo "|---${profile_separator}"
  for turn in 1 2 3; do
    echo "| $rev $(cut -c2- <<<"$("$tmp/bench_rev" "$tmp/p")")"
    echo "| this tree $(cut -c2- <<<"$("$bin/bench/bench" "$tmp/p")")"
  done
  exit 0
fi
# The trace rows: PyTorch traces made from the corpus one by
# bench/gen_kineto.py (3 and 10 copies), TensorFlow timelines made by
# bench/gen_tf_timeline.py (one real step repeated into 40k and 200k nodes)
# and XSpaces made of copies of a corpus XSpace (concatenated serialized
# XSpaces are one XSpace with the planes repeated): 600 of the bundled JAX
# capture (1.06 GB), 100 and 1000 of the 8-GPU TF capture (0.3 and 3 GB).
# Each: our import against a bare parse of the same file (simdjson's
# on-demand walk, or protobuf's XSpace parse), and peak memory.
traces() {
  echo "simdjson kernel for JSON traces (chosen at run time): $("$bin/bench/bench" --json_kernel)"
  echo "| trace | nodes | import + model | bare parse | ratio | peak RSS/file | op query |"
  echo "|---|---|---|---|---|---|---|"
  for copies in 3 10; do
    python3 bench/gen_kineto.py \
      "$corpus/pytorch-kineto/worker0.1623143089861.pt.trace.json.gz" \
      "$tmp/k$copies.json" "$copies"
    "$bin/bench/bench" --trace "$tmp/k$copies.json"
    rm -f "$tmp/k$copies.json"
  done
  # A JAX capture (XLA programs, command buffers off) repeated to 1.06 GB:
  # the HLO modules, root steps and instruction attribution at that size.
  local jax=testdata/corpus/gpu-h200-2026/jax_lm_nocb.xplane.pb.gz
  gunzip -c "$jax" >"$tmp/jax1.xplane.pb"
  for ((i = 0; i < 600; ++i)); do cat "$tmp/jax1.xplane.pb"; done >"$tmp/jax600.xplane.pb"
  rm -f "$tmp/jax1.xplane.pb"
  "$bin/bench/bench" --trace "$tmp/jax600.xplane.pb"
  rm -f "$tmp/jax600.xplane.pb"
  local wide=${TFPROF_CORPUS:-../shared/corpus}
  local anna=$wide/tf1-timelines/ANNA_timeline_01.json
  local xspace=$wide/tensorflow-profiler-demo/GPU-multi-worker/34.83.195.179_6003.xplane.pb
  if [[ ! -f "$anna" || ! -f "$xspace" ]]; then
    echo "skipped: corpus not found at $wide (the TF timeline and XSpace rows)"
    return 0
  fi
  for copies in 200 1000; do
    python3 bench/gen_tf_timeline.py "$anna" "$tmp/t$copies.json" "$copies"
    "$bin/bench/bench" --trace "$tmp/t$copies.json"
    rm -f "$tmp/t$copies.json"
  done
  for copies in 100 1000; do
    for ((i = 0; i < copies; ++i)); do cat "$xspace"; done >"$tmp/x$copies.xplane.pb"
    "$bin/bench/bench" --trace "$tmp/x$copies.xplane.pb"
    rm -f "$tmp/x$copies.xplane.pb"
  done
}
export TFPROF_BENCH_TARGETS="$tmp/targets.tsv"
: >"$TFPROF_BENCH_TARGETS"
if [[ "${1:-}" == "--traces" ]]; then
  traces
  echo
  python3 bench/targets.py "$TFPROF_BENCH_TARGETS"
  exit 0
fi
if [[ "${1:-}" == "--diff" ]]; then
  shift
  sizes=("$@")
  [[ ${#sizes[@]} -gt 0 ]] || sizes=(100000)
  for n in "${sizes[@]}"; do
    "$bin/tools/gen_profile" "$tmp/p_$n" --nodes="$n" --steps=10 >/dev/null
    for turn in 1 2 3; do "$bin/bench/bench" --diff "$tmp/p_$n"; done
    rm -f "$tmp/p_$n"
  done
  echo
  python3 bench/targets.py "$TFPROF_BENCH_TARGETS"
  exit 0
fi
if [[ "${1:-}" == "--web" ]]; then
  shift
  sizes=("$@")
  [[ ${#sizes[@]} -gt 0 ]] || sizes=(100000 500000 1200000)
  echo "| file | nodes | load | CLI default query (scope/op/code) | web first page, cold | web open a node |"
  echo "|---|---|---|---|---|---|"
  for n in "${sizes[@]}"; do
    "$bin/tools/gen_profile" "$tmp/p_$n" --nodes="$n" --steps=10 >/dev/null
    "$bin/bench/bench" --web "$tmp/p_$n"
    rm -f "$tmp/p_$n"
  done
  exit 0
fi
sizes=("$@")
smoke=0
if [[ "${1:-}" == "--smoke" ]]; then sizes=(2000) smoke=1; fi
[[ ${#sizes[@]} -gt 0 ]] || sizes=(100000 500000 1200000)
echo "Each view's default query is timed cold (the first query after a fresh load, in its own process) and repeated; cold/load over that process's load."
echo "$profile_header"
echo "$profile_separator"
for n in "${sizes[@]}"; do
  "$bin/tools/gen_profile" "$tmp/p_$n" --nodes="$n" --steps=10 >/dev/null
  "$bin/bench/bench" "$tmp/p_$n"
  rm -f "$tmp/p_$n"
done
echo
if [[ $smoke == 0 && $# == 0 ]]; then
  traces
  echo
fi
echo "Against the targets:"
python3 bench/targets.py "$TFPROF_BENCH_TARGETS"
