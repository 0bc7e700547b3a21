#!/usr/bin/env bash
# Configures and builds bundlefit into build/ (Release, Ninja, ccache when present).
# Usage: scripts/build.sh [ninja targets...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUNDLEFIT_BUILD_DIR:-$root/build}
jobs=${BUNDLEFIT_JOBS:-$(nproc)}
# Clones in other directories (CI) reuse the compiler cache.
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
fi
cmake --build "$build" -j "$jobs" ${1:+--target "$@"}
