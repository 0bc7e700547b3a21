#!/usr/bin/python3
"""profiled_linear: a profiled float transformer block's Linear layers in int8.

A Linear on [batch, tokens, features] is a MatMul of a 3-D activation by a
constant, then an Add of a per-column bias. Compiled with --load-profile,
each must run as the int8 fully connected layer on the rows (bias folded
into its int32 sums), not in float: in the model (MatMul + Add, Relu, MatMul,
MatMul + Add) no MatMul, Gemm, Add or Relu may compute a float32 output, one
Quantize (the input) and one Dequantize (the output) are all the conversions,
and the outputs (in about [-3, 3]) stay within MAX_ERROR (absolute;
MAX_MEAN_ERROR on average) of onnxruntime's float outputs. (Measured: max
0.091, mean 0.017; the input's row view is the one float node.) host and,
with --target, a Cortex-M under QEMU.

  profiled_linear.py BUNDLEFIT WORK ORT_MODULE_DIR [--target cortex-m7]

Exit 77 (CTest SKIP) without onnxruntime-node or a runnable target.
"""
import os
import re
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from reference_runs import (SKIP, TargetUnavailable, comparison_args,  # noqa: E402
                            run_bundle, run_onnxruntime)

MAX_ERROR = 0.15
MAX_MEAN_ERROR = 0.03
SHAPE = [1, 6, 16]


def linear_model():
    rng = np.random.default_rng(32)
    w1 = (rng.standard_normal((16, 24)) * 0.3).astype(np.float32)
    b1 = (rng.standard_normal(24) * 0.2).astype(np.float32)
    w2 = (rng.standard_normal((24, 12)) * 0.25).astype(np.float32)
    w3 = (rng.standard_normal((12, 8)) * 0.3).astype(np.float32)
    b3 = (rng.standard_normal(8) * 0.2).astype(np.float32)
    inits = [numpy_helper.from_array(v, n) for n, v in
             (("w1", w1), ("b1", b1), ("w2", w2), ("w3", w3), ("b3", b3))]
    nodes = [helper.make_node("MatMul", ["input", "w1"], ["p1"], name="fc1"),
             helper.make_node("Add", ["p1", "b1"], ["h1"], name="fc1_bias"),
             helper.make_node("Relu", ["h1"], ["r1"], name="relu"),
             helper.make_node("MatMul", ["r1", "w2"], ["p2"], name="fc2"),
             helper.make_node("MatMul", ["p2", "w3"], ["p3"], name="fc3"),
             helper.make_node("Add", ["b3", "p3"], ["output"], name="fc3_bias")]
    graph = helper.make_graph(
        nodes, "profiled_linear", [helper.make_tensor_value_info("input", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, SHAPE[:2] + [8])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="tests/qdq/profiled_linear.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def main():
    args = comparison_args()
    if args is None:
        return SKIP
    path = os.path.join(args.work, "profiled_linear.onnx")
    onnx.save(linear_model(), path)
    rng = np.random.default_rng(7)
    calib = os.path.join(args.work, "calib")
    os.makedirs(calib, exist_ok=True)
    for k in range(16):
        np.save(os.path.join(calib, f"{k}.npy"), rng.normal(0, 1, SHAPE).astype(np.float32))
    profile = os.path.join(args.work, "profiled_linear.yaml")
    subprocess.run([args.bundlefit, "-q", "profile", path, calib, "-o", profile], check=True,
                   stdout=subprocess.DEVNULL)
    x = rng.normal(0, 1, [4] + SHAPE[1:]).astype(np.float32)
    npy = os.path.join(args.work, "input.npy")
    np.save(npy, x)
    try:
        ours, _ = run_bundle(args.bundlefit, path, npy, os.path.join(args.work, args.target),
                             args.target, extra=("--load-profile", profile))
        ref = run_onnxruntime(args.ort_module_dir, path, npy,
                              os.path.join(args.work, "ort.raw"))
    except TargetUnavailable as e:
        print(e)
        return SKIP
    except RuntimeError as e:
        print(f"profiled_linear: {e}")
        return 1
    plan = subprocess.run([args.bundlefit, "plan", path, "--load-profile", profile],
                          capture_output=True, text=True, check=True)
    text = plan.stdout + plan.stderr
    m = re.search(r"quantized (\d+) of (\d+) nodes to int8 \((\d+) Quantize, (\d+) Dequantize", text)
    if not m:
        print(f"profiled_linear: no quantization summary in `bundlefit plan`:\n{text}")
        return 1
    int8, total, quantize, dequantize = map(int, m.groups())
    floats = re.findall(r"^\s*\d+\s+(\S+)\s+(MatMul|Gemm|Add|Relu)\s+float32", text, re.M)
    error = np.abs(ours.astype(np.float64).ravel() - ref.astype(np.float64))
    problems = []
    if floats:
        problems.append("float " + ", ".join(f"{op} '{name}'" for name, op in floats))
    if quantize + dequantize > 2:
        problems.append("more than one Quantize and one Dequantize")
    if float(error.max()) > MAX_ERROR or float(error.mean()) > MAX_MEAN_ERROR:
        problems.append(f"error above {MAX_ERROR} (mean {MAX_MEAN_ERROR})")
    print(f"profiled_linear {args.target}: {int8} of {total} nodes int8, {quantize} Quantize, "
          f"{dequantize} Dequantize; |int8 - onnxruntime float| max {error.max():.4f} mean "
          f"{error.mean():.4f}  {'; '.join(problems) or 'ok'}")
    print(f"{0 if problems else 1} passed, {1 if problems else 0} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
