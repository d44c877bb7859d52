#!/usr/bin/env bash
# Builds the Python package tfprof (python/) with CMake in BUILD_DIR, then
# installs it for Debian's /usr/bin/python3 (--install: into the prefix's
# site directory, /usr/local/lib/python3.11/dist-packages by default) or runs
# its tests (--test: pytest on BUILD_DIR/python, against BUILD_DIR/tfprof;
# extra arguments go to pytest instead of python/tests, e.g.
# python/tests/test_hook.py -k self_times).
# Usage: scripts/python_package.sh BUILD_DIR --install|--test [PYTEST ARGS]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: python_package.sh BUILD_DIR --install|--test}
what=${2:?usage: python_package.sh BUILD_DIR --install|--test}
shift 2
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
case "$what" in
  --install)
    cmake --build "$build" --target tfprof_python
    cmake --install "$build" --component python
    # From elsewhere than the source tree, with Debian's interpreter.
    (cd / && /usr/bin/python3 -c "import tfprof; print('tfprof', tfprof.__file__)")
    ;;
  --test)
    cmake --build "$build" --target tfprof_python tfprof
    PYTHONPATH="$PWD/$build/python" TFPROF_CLI="$PWD/$build/tfprof" \
      /usr/bin/python3 -m pytest -q -p no:cacheprovider "${@:-python/tests}"
    ;;
  *)
    echo "usage: python_package.sh BUILD_DIR --install|--test" >&2
    exit 2
    ;;
esac
