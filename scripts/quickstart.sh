#!/usr/bin/env bash
# README command 1, the main job: install what is missing, build, compile the
# example model (Caffe LeNet) into a bundle for the default device's core
# (i.MX RT1060: Cortex-M7) and print its memory report and fit verdict.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUNDLEFIT_BUILD_DIR:-$root/build}
device=${BUNDLEFIT_DEVICE:-rt1060}
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh" bundlefit reference_models
model="$build/models/lenet.onnx"
bundlefit="$build/bin/bundlefit"

echo
echo "\$ bundlefit compile $model -o $build/example-bundle --target cortex-m7"
"$bundlefit" compile "$model" -o "$build/example-bundle" --target cortex-m7
echo
echo "\$ bundlefit plan $model"
"$bundlefit" plan "$model" --json "$build/example-bundle/lenet.plan.json"
# fit compiles the bundle for the part's core itself: its code size is the
# object's, not an estimate.
echo
echo "\$ bundlefit fit $model --device $device"
"$bundlefit" fit "$model" --device "$device"
