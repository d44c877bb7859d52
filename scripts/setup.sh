#!/usr/bin/env bash
# Installs every Debian 12 package tfprof needs to build and test (Bazel and CMake,
# and the Python package with the Debian packages its tests use: pandas, Dask's
# distributed, PyTorch),
# and any packages named as arguments (scripts/setup_consumers.sh passes its own).
# Idempotent: packages already present are not reinstalled; apt-get update runs only when
# something is missing.
set -euo pipefail

PKGS=(
  bazel-bootstrap bazel-rules-java bazel-rules-proto bazel-skylib
  g++ cmake ninja-build pkg-config clang-format git diffutils
  libprotobuf-dev protobuf-compiler libabsl-dev libre2-dev libfmt-dev catch2
  libreadline-dev libedit-dev zlib1g-dev libsimdjson-dev tmux clang-14 libclang-rt-14-dev
  libleveldb-dev libsnappy-dev libcpp-httplib-dev
  python3-dev python3-pybind11 pybind11-dev python3-protobuf python3-numpy
  python3-pandas python3-pytest python3-distributed python3-torch
)

if (($#)); then PKGS=("$@"); fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
