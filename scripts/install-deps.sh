#!/usr/bin/env bash
# Installs the Debian 12 packages bundlefit needs, only those that are missing.
# Safe to run again: it does nothing when everything is present.
set -euo pipefail

packages=(
  # build
  cmake ninja-build g++ ccache pkg-config
  # compiler stack
  llvm-16-dev clang-16 lld-16 clang-format libzstd-dev zlib1g-dev libedit-dev libffi-dev libxml2-dev libncurses-dev
  # model import (ONNX: protobuf; TFLite: flatc generates the reader from schema.fbs)
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata flatbuffers-compiler libflatbuffers-dev
  # libraries
  nlohmann-json3-dev libcli11-dev libboost-graph-dev doctest-dev libyaml-cpp-dev libstb-dev
  # bench/planner builds MiniMalloc (../shared/third_party) to compare planners side by side
  libabsl-dev
  # libFuzzer and sanitizer runtimes for fuzz/ (clang-16)
  libclang-rt-16-dev
  # Cortex-M bundles under emulation
  gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
  # the model script (tests/models) uses Debian's python3-onnx and numpy
  python3 python3-onnx python3-numpy
  # `import bundlefit` (python/; without it the build goes on and its test skips)
  pybind11-dev python3-dev
  # examples/sweep/dask_sweep.py and its test (dask_sweep): Dask distributed worker processes
  python3-distributed
  # the HTML report test renders the page in headless Chromium (tests/reports)
  chromium chromium-driver
)

# Optional, only to RE-train tests/models/fashion_mnist (train.py): the test suite reads the
# committed ONNX and .npy files and never imports torch. `install-deps.sh --training`.
training_packages=(python3-torch dataset-fashion-mnist)
for argument in "$@"; do
  case "$argument" in
    --training) packages+=("${training_packages[@]}") ;;
    *) echo "install-deps: unknown option '$argument' (only --training)" >&2; exit 2 ;;
  esac
done

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$package")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
