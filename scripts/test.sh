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
# libFuzzer targets (clang-16, ASan + UBSan, own build dir) for the ONNX loader,
# device files and profiles, 20 s each; BUNDLEFIT_FUZZ_SECONDS=0 skips them.
if [ "${BUNDLEFIT_FUZZ_SECONDS:-20}" != 0 ]; then
  "$root/fuzz/run-fuzzers.sh" "${BUNDLEFIT_FUZZ_SECONDS:-20}"
fi
