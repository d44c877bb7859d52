#!/usr/bin/env bash
# Installs what is missing, builds tfprof with Bazel (and the Python package
# with CMake, installed for /usr/bin/python3) and runs it on the bundled sample
# profile: on a terminal it opens the tfprof> shell, otherwise
# it prints a report (testdata/sample/report.tfprof). Extra arguments are
# passed to tfprof, e.g. `bash scripts/run.sh op -select micros`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bazel build //cli:tfprof >&2
# The Python package (python/, g3doc/python.md): built by CMake in build/ and
# installed into Debian's site directory (/usr/local/lib/python3.11/
# dist-packages), so that `/usr/bin/python3 -c "import tfprof"` works.
bash scripts/python_package.sh build --install >&2
SAMPLE=testdata/sample/profile
if [[ $# -gt 0 ]]; then
  exec bazel-bin/cli/tfprof --profile_path="$SAMPLE" "$@"
elif [[ -t 0 ]]; then
  exec bazel-bin/cli/tfprof --profile_path="$SAMPLE"
else
  exec bazel-bin/cli/tfprof --profile_path="$SAMPLE" \
    --script=testdata/sample/report.tfprof
fi
