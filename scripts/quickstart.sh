#!/usr/bin/env bash
# README command 1, the main job: install what is missing, build, compile the
# example model for the default device and print its memory report.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUNDLEFIT_BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" bundlefit
model="$build/models/lenet.onnx"
/usr/bin/python3 "$root/tests/models/make_models.py" --out "$build/models" --only lenet >/dev/null
echo
echo "\$ bundlefit plan $model"
"$build/bin/bundlefit" plan "$model"
