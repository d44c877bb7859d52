#!/usr/bin/env bash
# Installs the CMake build into a temporary prefix and builds an outside
# project (examples/consumer) against it with find_package(tfprof).
# Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
tmp=$(mktemp -d /tmp/tfprof_install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src/examples/consumer" -B "$tmp/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$tmp/prefix" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
out=$("$tmp/consumer/consumer" "$src/testdata/sample/profile")
want=$'parameters: 451\ndiff root: 451 -> 451'
[[ "$out" == "$want" ]] || { echo "FAIL: got '$out'"; exit 1; }
echo "install: 1 passed, 0 failed"
