#!/usr/bin/env bash
# Generates ProfileProto files (tools/gen_profile: seeded, 10 steps) at
# several sizes and prints one table row per size: file size, nodes, our load
# time, a bare ProfileProto::ParseFromString of the same bytes in the same
# run (n/a past protobuf's 2 GiB limit), their ratio, peak RSS / file size
# after loading and after all queries, and each view's (scope/graph/op/code)
# default query cold and repeated, and a filtered query (-max_depth 4
# -min_micros 1000 -order_by micros).
# Usage: bench/run.sh [NODES...]   (default: 100000 500000 1200000, i.e.
#        about 0.2, 1 and 2.4 GB)
#        bench/run.sh --smoke       (a 2,000-node run: checks it works)
#        bench/run.sh --traces      (PyTorch traces made from the corpus one
#                                    by bench/gen_kineto.py, 3 and 10 copies:
#                                    our import against a bare simdjson parse;
#                                    and TF timelines made by
#                                    bench/gen_tf_timeline.py)
#        bench/run.sh --web [NODES...]  (the web UI's first page and the
#                                    opening of a node, per view, next to
#                                    the command line's query; default
#                                    100000 500000 1200000 nodes)
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
#
# What is measured is the README's build: Bazel with .bazelrc's defaults
# (-c opt), i.e. the binaries `bazel build` makes.
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build //bench:bench //tools:gen_profile //cli:tfprof >/dev/null 2>&1 ||
  bazel build //bench:bench //tools:gen_profile //cli:tfprof
bin=bazel-bin
# bazel-bin points into bazel-out/<cpu>-<compilation mode>/bin.
echo "build: bazel, configuration $(basename "$(dirname "$(readlink -f bazel-bin)")") (the README's binaries)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tfprof_bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
corpus=testdata/corpus
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
  echo "| build | file | nodes | load | bare parse | load/parse | peak RSS/file (load) | peak RSS/file (load+queries) | default query cold (scope/graph/op/code) | repeated | filtered |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|"
  for turn in 1 2 3; do
    echo "| $rev $(cut -c2- <<<"$("$tmp/bench_rev" "$tmp/p")")"
    echo "| this tree $(cut -c2- <<<"$("$bin/bench/bench" "$tmp/p")")"
  done
  exit 0
fi
if [[ "${1:-}" == "--traces" ]]; then
  echo "simdjson kernel for JSON traces (chosen at run time): $("$bin/bench/bench" --json_kernel)"
  echo "| trace | nodes | import + model | bare simdjson DOM parse | ratio | peak RSS/file | op query |"
  echo "|---|---|---|---|---|---|---|"
  for copies in 3 10; do
    python3 bench/gen_kineto.py \
      "$corpus/pytorch-kineto/worker0.1623143089861.pt.trace.json.gz" \
      "$tmp/k$copies.json" "$copies"
    "$bin/bench/bench" --trace "$tmp/k$copies.json"
    rm -f "$tmp/k$copies.json"
  done
  # A TensorFlow timeline: one real step repeated into a graph of 40k and
  # 200k nodes (a timeline of the wider corpus).
  anna=${TFPROF_CORPUS:-../shared/corpus}/tf1-timelines/ANNA_timeline_01.json
  if [[ ! -f "$anna" ]]; then
    echo "skipped: corpus not found at ${TFPROF_CORPUS:-../shared/corpus} (the TF timeline rows)"
    exit 0
  fi
  for copies in 200 1000; do
    python3 bench/gen_tf_timeline.py "$anna" \
      "$tmp/t$copies.json" "$copies"
    "$bin/bench/bench" --trace "$tmp/t$copies.json"
    rm -f "$tmp/t$copies.json"
  done
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
if [[ "${1:-}" == "--smoke" ]]; then sizes=(2000); fi
[[ ${#sizes[@]} -gt 0 ]] || sizes=(100000 500000 1200000)
echo "| file | nodes | load | bare parse | load/parse | peak RSS/file (load) | peak RSS/file (load+queries) | default query cold (scope/graph/op/code) | repeated | filtered |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for n in "${sizes[@]}"; do
  "$bin/tools/gen_profile" "$tmp/p_$n" --nodes="$n" --steps=10 >/dev/null
  "$bin/bench/bench" "$tmp/p_$n"
  rm -f "$tmp/p_$n"
done
