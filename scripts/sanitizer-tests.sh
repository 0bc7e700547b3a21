#!/usr/bin/env bash
# The fast unit tests built Debug with AddressSanitizer + UndefinedBehaviorSanitizer
# (clang-16, own build directory), run by ctest: asserts on (the planner checks every
# plan it makes), any out-of-bounds access or undefined operation a failure.
#
#   scripts/sanitizer-tests.sh
#
# Environment: BUNDLEFIT_SANITIZE_BUILD_DIR (default build-sanitize), BUNDLEFIT_JOBS.
# Only tests whose libraries need no LLVM code generation are built, to keep CI short.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUNDLEFIT_SANITIZE_BUILD_DIR:-$root/build-sanitize}
jobs=${BUNDLEFIT_JOBS:-$(nproc)}
tests=(planner_tests ops_conv_tests ops_elementwise_tests passes_tests)
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f "$build/build.ninja" ]; then
  CC=clang-16 CXX=clang++-16 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DBUNDLEFIT_SANITIZE=ON -DBUNDLEFIT_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
fi
cmake --build "$build" -j "$jobs" --target "${tests[@]}"
# halt_on_error: the first report fails the test; detect_leaks stays on.
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
pattern="^($(IFS='|'; echo "${tests[*]}"))\$"
ctest --test-dir "$build" --output-on-failure -j "$jobs" -R "$pattern"
