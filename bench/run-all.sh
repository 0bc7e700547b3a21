#!/usr/bin/env bash
# Reruns every benchmark on the checked-out commit, so that every file in bench/results/
# names the same commit and scripts/check-readme-figures.py --strict has nothing stale.
#
# Usage: bench/run-all.sh [NAME...]     (default: all; names as in the list below)
#   BUNDLEFIT_BUILD_DIR  build directory (default build/)
#   BUNDLEFIT_SHARED     the shared folder with third_party/ and benchmarks/ (default ../shared)
#
# A tree with uncommitted changes outside bench/results/ is refused: the results would name a
# commit whose code they did not measure. Each benchmark's wall time is printed at the end and
# written to bench/results/run-all.log, so the next run can be planned.
#
# apply_measured is not a benchmark: it rewrites device_db/parts/*.json from cmsis_insns.json and
# own_insns.json (cycles per MAC and per element of every library no published timing calibrates).
# When it changes them, the benchmarks after it (cost, pick) read uncommitted device files and
# record "COMMIT-dirty": commit the parts, then rerun `bench/run-all.sh cost pick`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
build=${BUNDLEFIT_BUILD_DIR:-$root/build}
shared=${BUNDLEFIT_SHARED:-$(cd "$root/.." && pwd)/shared}
py=/usr/bin/python3
bf="$build/bin/bundlefit"
models="$build/models"

if [ -n "$(git status --porcelain --untracked-files=no -- . ':!bench/results')" ]; then
  echo "run-all: uncommitted changes outside bench/results/; commit them first" >&2
  exit 2
fi

bash scripts/build.sh
if [ ! -d bench/codegen/node_modules ]; then
  (cd bench/codegen && ONNXRUNTIME_NODE_INSTALL=skip npm ci --silent)
fi

# name | command. Order: quick ones first, so a failure shows early.
benches=(
  "model_memory|$build/bin/bench_model_memory $models bench/results/model_memory.json"
  "conformance|$build/bin/onnx_conformance --json bench/results/conformance_interp.json"
  "conformance_bundle|$build/bin/onnx_conformance --engine bundle --json bench/results/conformance_bundle.json"
  "scale|$build/bin/bench_scale bench/results/scale.json"
  "cmsis_insns|$py bench/cost/measure_cmsis.py --work /tmp/bundlefit-cmsis-insns --out bench/results/cmsis_insns.json"
  "own_insns|$py bench/cost/measure_own.py --bundlefit $bf --out bench/results/own_insns.json"
  "apply_measured|$py bench/cost/apply_measured.py --insns bench/results/cmsis_insns.json --own bench/results/own_insns.json"
  "cost|$py bench/cost/bench_cost.py --bundlefit $bf --models-dir $models --out bench/results/cost.json --update-readme"
  "pick|$py bench/pick/bench_pick.py --bundlefit $bf --models $models --out bench/results/pick.json"
  "python_fit|$py bench/python/bench_fit.py --build $build --out bench/results/python_fit.json"
  "sweep|$py bench/sweep/bench_sweep.py --build $build --out bench/results/sweep.json"
  "codegen|$py bench/codegen/bench_codegen.py --bundlefit $bf --compile-reps 2 --rounds 7 --out bench/results/codegen.json"
  "codegen_vs_ort|$py bench/codegen/bench_codegen.py --bundlefit $bf --targets host --opts O2 --levels 0,2 --rounds 7 --out bench/results/codegen_vs_ort.json"
  "codegen_memory_opt|for n in 0 1 2; do $py bench/codegen/bench_codegen.py --bundlefit $bf --models ds_cnn,resnet8,mobilenet_v1_025,mobilenet_v2 --targets host --opts O2 --memory-opt \$n --out bench/results/codegen_memory_opt\$n.json || exit; done"
  "memory|$build/bin/bench_memory $models bench/results/memory.json --m7"
  "planner|$build/bin/bench_planner $shared/benchmarks/planner --out bench/results/planner.json"
  "planner_ablation|$build/bin/bench_planner $shared/benchmarks/planner --ablation --out bench/results/planner_ablation.json"
  "planner_perfect|$build/bin/bench_planner $shared/benchmarks/planner --perfect --out bench/results/planner_perfect.json"
  "mcu|$py bench/mcu/bench_mcu.py --bundlefit $bf --models-dir $models --shared $shared --out bench/results/mcu.json"
  "quant|$py bench/quant/bench_quant.py --bundlefit $bf --models-dir $models --out bench/results/quant.json"
  "tflite|$py bench/tflite/bench_tflite.py --bundlefit $bf --tflm $shared/third_party/tflm --out bench/results/tflite.json"
)

log=bench/results/run-all.log
# A full run starts the log afresh; a rerun of some benchmarks adds to it.
header="# bench/run-all.sh ${*:-(all)} at $(git rev-parse HEAD) on $(nproc) cores, started $(date -u +%FT%TZ)"
if [ $# -eq 0 ]; then echo "$header" >"$log"; else echo "$header" >>"$log"; fi
failed=()
for entry in "${benches[@]}"; do
  name=${entry%%|*}
  cmd=${entry#*|}
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
  echo "=== $name: $cmd"
  start=$(date +%s)
  if bash -c "$cmd"; then status=ok; else status=FAILED; failed+=("$name"); fi
  echo "$name $status $(( $(date +%s) - start )) s" | tee -a "$log"
done
echo "# finished $(date -u +%FT%TZ)" >>"$log"
cat "$log"
if [ ${#failed[@]} -gt 0 ]; then
  echo "run-all: failed: ${failed[*]}" >&2
  exit 1
fi
