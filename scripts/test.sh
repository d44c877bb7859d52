#!/usr/bin/env bash
# Installs what is missing, then builds and runs the whole test suite both
# ways: Bazel (bazel test //...) and the CMake mirror (CTest, built with
# AddressSanitizer and UBSan), plus a short fuzzing run; in between, a plain
# CMake build is installed and an outside project built against it, and the
# Python package's tests run on it (pytest). The last line is CTest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

corpus=${TFPROF_CORPUS:-../shared/corpus}
if [[ ! -d "$corpus" ]]; then
  echo "skipped: corpus not found at $corpus (the wider-corpus cases; the suite runs on testdata/corpus)" >&2
fi

echo "== format check" >&2
bash scripts/format.sh --check

echo "== bazel test //..." >&2
bazel test //... --test_output=errors
bazel shutdown >/dev/null 2>&1 || true

echo "== cmake Release build, installed, and an outside project built against it (examples/consumer)" >&2
# The sanitizer build below does not run the install test (its consumer is
# not built with the sanitizer runtime): a plain build installs the package.
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build-release --target profiler tfprof tfprof_python
bash tests/install_test.sh build-release .

echo "== pytest: the Python package (python/tests) on the same build, against its tfprof" >&2
bash scripts/python_package.sh build-release --test

echo "== cmake + ctest under AddressSanitizer and UBSan, with the real-consumer tests (go tool pprof, JUnit reader, speedscope in Chromium)" >&2
# One CMake build tests the same sources as Bazel: under the sanitizers, so
# that every test also checks memory and undefined behaviour, built with
# clang and libFuzzer's instrumentation so that the fuzz targets come from
# the same objects (the library is compiled once). -O1: the sanitizers'
# usual level; the tests run about twice as fast as at -O0.
bash scripts/setup_consumers.sh
CC=clang-14 CXX=clang++-14 cmake -S . -B build-asan -G Ninja \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
  -DTFPROF_SANITIZE=ON -DTFPROF_FUZZ=ON -DTFPROF_CONSUMER_TESTS=ON >/dev/null
cmake --build build-asan

echo "== fuzz targets, 3000 inputs each (fixed seed)" >&2
FUZZ_RUNS=3000 FUZZ_BUILD_DIR=build-asan bash scripts/fuzz.sh

echo "== ctest (sanitizers and consumers)" >&2
ctest --test-dir build-asan --output-on-failure -j2
