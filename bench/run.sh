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
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target bench gen_profile >/dev/null
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tfprof_bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [[ "${1:-}" == "--traces" ]]; then
  echo "| trace | nodes | import + model | bare simdjson DOM parse | ratio | peak RSS/file | op query |"
  echo "|---|---|---|---|---|---|---|"
  for copies in 3 10; do
    python3 bench/gen_kineto.py \
      ../shared/corpus/pytorch-kineto/worker0.1623143089861.pt.trace.json.gz \
      "$tmp/k$copies.json" "$copies"
    build/bench --trace "$tmp/k$copies.json"
    rm -f "$tmp/k$copies.json"
  done
  # A TensorFlow timeline: one real step repeated into a graph of 40k and
  # 200k nodes.
  for copies in 200 1000; do
    python3 bench/gen_tf_timeline.py \
      ../shared/corpus/tf1-timelines/ANNA_timeline_01.json \
      "$tmp/t$copies.json" "$copies"
    build/bench --trace "$tmp/t$copies.json"
    rm -f "$tmp/t$copies.json"
  done
  exit 0
fi
sizes=("$@")
if [[ "${1:-}" == "--smoke" ]]; then sizes=(2000); fi
[[ ${#sizes[@]} -gt 0 ]] || sizes=(100000 500000 1200000)
echo "| file | nodes | load | bare parse | load/parse | peak RSS/file (load) | peak RSS/file (load+queries) | default query cold (scope/graph/op/code) | repeated | filtered |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for n in "${sizes[@]}"; do
  build/gen_profile "$tmp/p_$n" --nodes="$n" --steps=10 >/dev/null
  build/bench "$tmp/p_$n"
  rm -f "$tmp/p_$n"
done
