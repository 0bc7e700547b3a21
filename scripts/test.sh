#!/usr/bin/env bash
# README command 2: install what is missing, build, run the whole test suite
# (ctest runs the doctest executables, the ONNX conformance driver and the
# end-to-end bundle tests).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUNDLEFIT_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j "$(nproc)" "$@"
# libFuzzer targets (clang-16, ASan + UBSan, own build dir) for the ONNX loader,
# device files and profiles, 20 s each; BUNDLEFIT_FUZZ_SECONDS=0 skips them.
if [ "${BUNDLEFIT_FUZZ_SECONDS:-20}" != 0 ]; then
  "$root/fuzz/run-fuzzers.sh" "${BUNDLEFIT_FUZZ_SECONDS:-20}"
fi
