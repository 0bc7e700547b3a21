#!/usr/bin/env bash
# README command 2: install what is missing, build, run the whole test suite
# (ctest runs the doctest executables, the ONNX conformance driver and the
# end-to-end bundle tests).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUNDLEFIT_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
# onnxruntime-node (npm registry) is the reference runtime of the pre-quantized model tests and
# bench/codegen; without node or the registry those tests report a skip, never a pass.
if command -v npm >/dev/null && [ ! -d "$root/bench/codegen/node_modules/onnxruntime-node" ]; then
  (cd "$root/bench/codegen" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --silent) ||
    echo "warning: npm ci failed in bench/codegen: the onnxruntime comparisons will be skipped" >&2
fi
"$root/scripts/build.sh"
cd "$build"
# A skip is not a pass: list the skipped tests last, where they are seen
# (ctest's own summary scrolls them away above the failures).
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
ctest --output-on-failure -j "$(nproc)" "$@" 2>&1 | tee "$log" || status=$?
skipped=$(sed -n 's/^.*Test *#[0-9]*: \([^ ]*\) .*\*\*\*Skipped.*$/\1/p' "$log" | sort)
if [ -n "$skipped" ]; then
  echo
  echo "Skipped tests ($(echo "$skipped" | wc -l); why: $build/Testing/Temporary/LastTest.log):"
  echo "$skipped" | sed 's/^/  /'
else
  echo
  echo "Skipped tests: none"
fi
[ "$status" = 0 ] || exit "$status"
# The fast unit tests again, built Debug with ASan + UBSan (clang-16, own build
# dir): the planner's plan-validity asserts and every out-of-bounds or undefined
# operation become failures. BUNDLEFIT_SANITIZE_TESTS=0 skips them.
if [ "${BUNDLEFIT_SANITIZE_TESTS:-1}" != 0 ]; then
  "$root/scripts/sanitizer-tests.sh"
fi
# libFuzzer targets (clang-16, ASan + UBSan, own build dir) for the ONNX loader,
# device files and profiles, 20 s each; BUNDLEFIT_FUZZ_SECONDS=0 skips them.
if [ "${BUNDLEFIT_FUZZ_SECONDS:-20}" != 0 ]; then
  "$root/fuzz/run-fuzzers.sh" "${BUNDLEFIT_FUZZ_SECONDS:-20}"
fi
