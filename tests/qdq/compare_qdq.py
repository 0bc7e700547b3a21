#!/usr/bin/python3
"""Bundle outputs vs onnxruntime's on the QDQ models of make_qdq_models.py.

usage: compare_qdq.py BUNDLEFIT MODELS_DIR WORK_DIR ORT_MODULE_DIR [--target T]
                      [--max-lsb N] [--only REGEX]

For every MODELS_DIR/*_qdq_*.onnx and *_qop_*.onnx (the table of
make_qdq_models.py: per op x per-tensor/per-channel weights x int8/uint8
activations x symmetric/asymmetric/uint8 weights x scale mixes; --only keeps
the names matching REGEX): `bundlefit run` (host, or --target under QEMU) on
NAME.input.npy, onnxruntime-node (tests/qdq/ort_run.js) on the same samples,
and each element's difference in units of the output's scale (the scale of
the graph output's DequantizeLinear). Prints one line per model with the
counts of elements 0, 1 and >= 2 LSB off, and fails (exit 1) when any
element differs (--max-lsb N allows up to N LSB).
Exit 77 (CTest SKIP) when onnxruntime-node is not installed or, with
--target, QEMU/toolchain is missing (bundlefit exit 7).
"""
import argparse
import glob
import re
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

from reference_runs import (SKIP, TargetUnavailable, missing_onnxruntime, run_bundle,
                            run_onnxruntime)

# Largest |bundle - onnxruntime| allowed, in LSBs of the output scale: none
# (issue 32: exact or refused, never silently wrong). Pre-quantized Conv and
# Gemm requantize with one rounding (BF_I8_SINGLE_ROUNDING), as ONNX's
# QLinearConv and onnxruntime do, and take asymmetric and uint8 weights with
# their zero points (bf_conv2d_wzp_s8), so the int8 values agree at every
# layer. Double rounding (TFLM's and CMSIS-NN's default) differed on about
# one output in 2^(1-shift) per layer: 5-6 of 3,200 on op_conv.
# AveragePool at other output parameters averages in float as onnxruntime's
# QLinearAveragePool (bf_avgpool2d_requant_s8) and Mul rounds as its
# QLinearMul (bf_mul_ratio_s8), one rounding each: no model is exempt.
MAX_LSB = 0.0


def boundary_params(model_path):
    """(input scale, zero point), (output scale, zero point): the model's
    first QuantizeLinear of the graph input and its output's DequantizeLinear;
    uint8 zero points as int8 ones (minus 128), as bundlefit keeps them."""
    model = onnx.load(model_path)
    inp, out = model.graph.input[0].name, model.graph.output[0].name
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}

    def params(node):
        zp = inits[node.input[2]]
        return float(inits[node.input[1]]), int(zp) - (128 if zp.dtype == np.uint8 else 0)
    q = next(n for n in model.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == inp)
    dq = next((n for n in model.graph.node if n.op_type == "DequantizeLinear" and n.output[0] == out),
              None)
    if dq is None:
        raise SystemExit(f"{model_path}: the graph output is not a DequantizeLinear output")
    return params(q), params(dq)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundlefit")
    ap.add_argument("models")
    ap.add_argument("work")
    ap.add_argument("ort_module_dir")
    ap.add_argument("--target", default="host")
    ap.add_argument("--only", default=None, help="only the models whose name matches this regex")
    ap.add_argument("--max-lsb", type=float, default=None)
    ap.add_argument("--all-int8", action="store_true",
                    help="fail a model any of whose nodes bundlefit keeps in float (a warning): "
                         "equal to onnxruntime is not enough where an int8 kernel is expected")
    ap.add_argument("--keep-int8-io", action="store_true",
                    help="int8 bundle inputs/outputs: the input quantized as QuantizeLinear "
                         "does (half to even), the output dequantized here")
    args = ap.parse_args()
    args.ort_module_dir = os.path.abspath(args.ort_module_dir)  # node resolves it from ort_run.js
    missing = missing_onnxruntime(args.ort_module_dir)
    if missing:
        print(missing)
        return SKIP
    models = sorted(glob.glob(os.path.join(args.models, "*_q[do][qp]_*.onnx")))
    if args.only:
        models = [m for m in models if re.search(args.only, os.path.basename(m)[:-len(".onnx")])]
    if not models:
        print(f"no *_qdq_*.onnx or *_qop_*.onnx in {args.models}"
              f"{' matching ' + args.only if args.only else ''}")
        return 1
    worst_overall = 0.0
    failed = 0
    for path in models:
        name = os.path.basename(path)[:-len(".onnx")]
        npy = os.path.join(args.models, name + ".input.npy")
        (in_scale, in_zp), (out_scale, out_zp) = boundary_params(path)
        flavour = args.target + (".int8io" if args.keep_int8_io else "")
        outdir = os.path.join(args.work, name + "." + flavour)
        bundle_in = npy
        if args.keep_int8_io:
            x = np.load(npy)
            bundle_in = os.path.join(args.work, name + ".int8.npy")
            os.makedirs(args.work, exist_ok=True)
            np.save(bundle_in, np.clip(np.round(x / np.float32(in_scale)) + in_zp, -128,
                                       127).astype(np.int8))
        try:
            ours, stderr = run_bundle(args.bundlefit, path, bundle_in, outdir, args.target,
                                      ["--keep-int8-io"] if args.keep_int8_io else [])
        except TargetUnavailable as e:
            print(e)
            return SKIP
        except RuntimeError as e:
            print(f"{name}: {e}")
            failed += 1
            continue
        warnings = [l for l in stderr.splitlines() if l.startswith("warning:")]
        if args.keep_int8_io:
            if ours.dtype != np.int8:
                print(f"{name}: --keep-int8-io output is {ours.dtype}, not int8")
                failed += 1
                continue
            ours = (ours.astype(np.float64) - out_zp) * out_scale
        ours = ours.astype(np.float64)
        try:
            ref = run_onnxruntime(args.ort_module_dir, path, npy,
                                  os.path.join(args.work, name + ".ort.raw"))
        except RuntimeError as e:
            print(f"{name}: {e}")
            failed += 1
            continue
        ref = ref.astype(np.float64).reshape(ours.shape)
        lsb = np.abs(ours - ref) / out_scale
        worst = float(lsb.max())
        worst_overall = max(worst_overall, worst)
        # Whole LSBs: the two float dequantizations may round apart by an ulp.
        bound = MAX_LSB if args.max_lsb is None else args.max_lsb
        steps = np.rint(lsb)
        off1, off2 = int((steps == 1).sum()), int((steps >= 2).sum())
        ok = worst <= bound + 1e-3
        kept = [l for l in warnings if "kept in float" in l]
        if args.all_int8 and kept:
            failed += 1
            print(f"{name}: FAIL, not all int8: {kept[0]}")
        failed += 0 if ok else 1
        print(f"{name:28s} {flavour}: {lsb.size - off1 - off2} exact, {off1} 1 LSB off, "
              f"{off2} >=2 LSB off (max {worst:.0f})"
              f"{'' if ok else '  FAIL (> %g LSB)' % bound}"
              f"{'; ' + str(len(warnings)) + ' warnings' if warnings else ''}")
    print(f"{len(models) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
