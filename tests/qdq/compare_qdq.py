#!/usr/bin/python3
"""Bundle outputs vs onnxruntime's on the QDQ models of make_qdq_models.py.

usage: compare_qdq.py BUNDLEFIT MODELS_DIR WORK_DIR ORT_MODULE_DIR [--target T] [--max-lsb N]

For every MODELS_DIR/*_qdq_*.onnx: `bundlefit run` (host, or --target under
QEMU) on NAME.input.npy, onnxruntime-node (tests/qdq/ort_run.js) on the same
samples, and the largest difference in units of the output's scale (the
scale of the graph output's DequantizeLinear). Prints one line per model and
fails (exit 1) when any element differs by more than the model's bound
(BOUNDS; --max-lsb overrides them all).
Exit 77 (CTest SKIP) when onnxruntime-node is not installed or, with
--target, QEMU/toolchain is missing (bundlefit exit 7).
"""
import argparse
import glob
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

SKIP = 77

# Largest |bundle - onnxruntime| allowed, in LSBs of the output scale, by
# model-name prefix. onnxruntime requantizes in float with round-half-even,
# the int8 kernels (CMSIS-NN's arithmetic) with a Q31 multiplier, so one layer
# may differ by 1 LSB where the exact value is within a hair of .5: the bound
# for a single layer. In a network a 1-LSB difference is an input difference
# for the next layer and grows (measured: LeNet 2, the small CNN 3 with
# per-tensor weights, 1 per channel). A regression in any layer shows up as
# more (average pools as pooling + Rescale instead of one depthwise Conv,
# quant/PoolsAsConvs.cpp: 4 LSB on op_gap, 5 on the small CNN).
BOUNDS = [("op_", 1), ("lenet", 2), ("smallcnn", 3)]


def bound_for(name, override):
    if override is not None:
        return override
    return next(b for prefix, b in BOUNDS if name.startswith(prefix))


def output_scale(model_path):
    model = onnx.load(model_path)
    out = model.graph.output[0].name
    inits = {t.name: t for t in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "DequantizeLinear" and node.output[0] == out:
            return float(numpy_helper.to_array(inits[node.input[1]]))
    raise SystemExit(f"{model_path}: the graph output is not a DequantizeLinear output")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundlefit")
    ap.add_argument("models")
    ap.add_argument("work")
    ap.add_argument("ort_module_dir")
    ap.add_argument("--target", default="host")
    ap.add_argument("--max-lsb", type=float, default=None)
    args = ap.parse_args()
    args.ort_module_dir = os.path.abspath(args.ort_module_dir)  # node resolves it from ort_run.js
    here = os.path.dirname(os.path.abspath(__file__))
    if not os.path.isdir(os.path.join(args.ort_module_dir, "node_modules", "onnxruntime-node")):
        print(f"SKIP: onnxruntime-node is not installed in {args.ort_module_dir} "
              "(cd bench/codegen && ONNXRUNTIME_NODE_INSTALL=skip npm ci)")
        return SKIP
    models = sorted(glob.glob(os.path.join(args.models, "*_q[do][qp]_*.onnx")))
    if not models:
        print(f"no *_qdq_*.onnx in {args.models}")
        return 1
    worst_overall = 0.0
    failed = 0
    for path in models:
        name = os.path.basename(path)[:-len(".onnx")]
        npy = os.path.join(args.models, name + ".input.npy")
        outdir = os.path.join(args.work, name + "." + args.target)
        cmd = [args.bundlefit, "run", path, "--input", npy, "--output-dir", outdir, "-q"]
        if args.target != "host":
            cmd += ["--target", args.target]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode == 7 and args.target != "host":
            print(f"SKIP: {args.target} not runnable here: {run.stderr.strip()}")
            return SKIP
        if run.returncode != 0:
            print(f"{name}: bundlefit run failed ({run.returncode}): {run.stderr.strip()}")
            failed += 1
            continue
        warnings = [l for l in run.stderr.splitlines() if l.startswith("warning:")]
        outs = glob.glob(os.path.join(outdir, "*.npy"))
        ours = np.load(outs[0]).astype(np.float64)
        raw = os.path.join(args.work, name + ".ort.raw")
        ort = subprocess.run(["node", os.path.join(here, "ort_run.js"), args.ort_module_dir, path,
                              npy, raw], capture_output=True, text=True)
        if ort.returncode != 0:
            print(f"{name}: onnxruntime failed: {ort.stderr.strip()}")
            failed += 1
            continue
        ref = np.fromfile(raw, dtype=np.float32).astype(np.float64).reshape(ours.shape)
        lsb = np.abs(ours - ref) / output_scale(path)
        worst = float(lsb.max())
        worst_overall = max(worst_overall, worst)
        # 1e-3: the two float dequantizations may round apart by an ulp.
        bound = bound_for(name, args.max_lsb)
        ok = worst <= bound + 1e-3
        failed += 0 if ok else 1
        print(f"{name:22s} {args.target}: max |bundle - onnxruntime| = {worst:.3f} LSB over "
              f"{lsb.size} values, {int((lsb > 0.5).sum())} differ"
              f"{'' if ok else '  FAIL (> %g LSB)' % bound}"
              f"{'; ' + str(len(warnings)) + ' warnings' if warnings else ''}")
    print(f"{len(models) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
