#!/usr/bin/python3
"""Exporters' pre-quantized models (make_exporter_models.py): they load, and
their bundles agree with onnxruntime.

usage: compare_exporters.py BUNDLEFIT MODELS_DIR WORK_DIR ORT_MODULE_DIR [--target T]

For every MODELS_DIR/*.onnx: `bundlefit run` (host, or --target under QEMU)
and onnxruntime-node (tests/qdq/ort_run.js) on NAME.input.npy; prints the
largest difference in LSBs of the output scale (the model's doc string
"output scale S") and how many elements differ. Fails when a model does not
load or run, or differs by more than its bound on any element. Without
onnxruntime-node the bundles still run (a model that does not load fails)
and the exit is then 77 (CTest SKIP), as with --target and no QEMU.
"""
import argparse
import glob
import os
import sys

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "qdq"))
from reference_runs import (SKIP, TargetUnavailable, missing_onnxruntime, run_bundle,  # noqa: E402
                            run_onnxruntime)

# ONNX's QDQ arithmetic is exact integer arithmetic plus one float rounding per
# requantization, and bundlefit computes what onnxruntime computes (tests/qdq:
# weight zero points, mixed-scale Concat tables, activation tables): every
# element equal.
MAX_LSB = 0.0
# ort_dynamic runs in float (DynamicQuantizeLinear's fallback), so it is
# measured against the rounding of its input, in that LSB: below one half.
BOUNDS = {"ort_dynamic": 0.5}
# Models with an int8 kernel for every node: a node kept in float (a warning)
# fails them, even when equal (ort_matmul3d's bias Add of a quantized
# constant ran in float, with a Dequantize and a Quantize around it).
ALL_INT8 = {"ort_matmul3d", "ort_attention"}
# Every model must load: a refusal fails the test (the last refused one, a 3-D
# QLinearMatMul, runs its MatMul in float since issue 32 item 2's fallback).


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundlefit")
    ap.add_argument("models")
    ap.add_argument("work")
    ap.add_argument("ort_module_dir")
    ap.add_argument("--target", default="host")
    args = ap.parse_args()
    args.ort_module_dir = os.path.abspath(args.ort_module_dir)
    missing = missing_onnxruntime(args.ort_module_dir)
    models = sorted(glob.glob(os.path.join(args.models, "*.onnx")))
    if not models:
        print(f"no models in {args.models}")
        return 1
    failed = 0
    for path in models:
        name = os.path.basename(path)[:-len(".onnx")]
        npy = os.path.join(args.models, name + ".input.npy")
        scale = float(onnx.load(path).graph.doc_string.split()[-1])
        try:
            ours, stderr = run_bundle(args.bundlefit, path, npy,
                                      os.path.join(args.work, name + "." + args.target),
                                      args.target)
        except TargetUnavailable as e:
            print(e)
            return SKIP
        except RuntimeError as e:
            print(f"{name}: FAIL: {e}")
            failed += 1
            continue
        if missing:
            print(f"{name:14s} {args.target}: runs (no onnxruntime to compare with)")
            continue
        ref = run_onnxruntime(args.ort_module_dir, path, npy,
                              os.path.join(args.work, name + ".ort.raw"))
        ref = ref.astype(np.float64).reshape(ours.shape)
        lsb = np.abs(ours.astype(np.float64) - ref) / scale
        worst = float(lsb.max())
        differing = int((lsb > 0.5).sum())
        ok = worst <= BOUNDS.get(name, MAX_LSB) + 1e-3
        failed += 0 if ok else 1
        notes = [l for l in stderr.splitlines() if l.startswith(("warning:", "note:"))]
        if name in ALL_INT8 and any("kept in float" in l for l in notes):
            ok = False
            failed += 1
        print(f"{name:14s} {args.target}: max |bundle - onnxruntime| = {worst:.3f} LSB, "
              f"{differing} of {lsb.size} elements differ{'' if ok else '  FAIL'}"
              + "".join(f"\n    {l}" for l in notes))
    print(f"{len(models) - failed} passed, {failed} failed")
    if missing and not failed:
        print(missing)  # every model ran; the comparison did not
        return SKIP
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
