#!/usr/bin/env bash
# Generates profiles at three sizes and prints one table row per size:
# file size, nodes, our load time, a bare ProfileProto::ParseFromString of
# the same bytes (same run), their ratio, peak RSS / file size, and each
# view's (scope/graph/op/code) default query cold and repeated, and a filtered
# query (-max_depth 4 -min_micros 1000 -order_by micros).
# Usage: bench/run.sh [NODES...]   (default: 20000 100000 300000)
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build --target bench gen_profile >/dev/null
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(20000 100000 300000)
tmp=$(mktemp -d /tmp/tfprof_bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "| file | nodes | load | bare parse | load/parse | peak RSS/file (load) | peak RSS/file (load+queries) | default query cold | repeated | filtered |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for n in "${sizes[@]}"; do
  build/gen_profile "$tmp/p_$n" --nodes="$n" --steps=10 >/dev/null
  build/bench "$tmp/p_$n"
done
