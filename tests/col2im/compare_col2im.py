#!/usr/bin/python3
"""Col2Im (opset 18) against onnxruntime-node: the ONNX backend tests' cases
(test_col2im, _strides, _pads, _dilations; this machine's ONNX test data
predates opset 18, so the cases are rebuilt here with their parameters) plus
batch 2 x 3 channels, a 1-D image and an int8 build, on the host bundle and
the reference interpreter (`bundlefit run --compare`). The 3-D case
(test_col2im_5d) must be refused naming the node. Exit 0 when every element
is within 1e-5 of onnxruntime, 1 on any difference, 77 (SKIP) without
onnxruntime-node.

  compare_col2im.py BUNDLEFIT WORK ORT_MODULE_DIR [--target T]
"""
import json
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "qdq"))
from reference_runs import comparison_args, run_bundle, run_onnxruntime  # noqa: E402

# name: (input shape, image_shape, block_shape, attributes, Conv before it)
CASES = {
    "col2im": ((1, 5, 5), [5, 5], [1, 5], {}),
    "col2im_strides": ((1, 9, 4), [5, 5], [3, 3], {"strides": [2, 2]}),
    "col2im_pads": ((1, 5, 15), [5, 5], [1, 5], {"pads": [0, 1, 0, 1]}),
    "col2im_dilations": ((1, 4, 5), [6, 6], [2, 2], {"dilations": [1, 5]}),
    "col2im_batch_channels": ((2, 3 * 6, 12), [6, 7], [2, 3], {"strides": [2, 2], "pads": [1, 0, 1, 1]}),
    "col2im_1d": ((1, 2 * 3, 6), [8], [3], {"strides": [1], "dilations": [1]}),
    # A stride, dilation and leading pad of its own per axis (the backend
    # cases repeat one per axis, so a swapped height/width field passed them).
    "col2im_axes": ((1, 2 * 3, 6 * 4), [7, 9], [2, 3], {"strides": [1, 2], "dilations": [2, 1], "pads": [1, 0, 0, 1]}),
}
TOLERANCE = 1e-5


def col2im_model(path, shape, image, block, attrs, conv_first=False):
    nodes, inits = [], [numpy_helper.from_array(np.array(image, np.int64), "image_shape"),
                        numpy_helper.from_array(np.array(block, np.int64), "block_shape")]
    source, input_shape = "x", list(shape)
    if conv_first:
        # A pointwise Conv on [N, C x K, 1, L] reshaped to [N, C x K, L], so that an
        # int8 build has a quantized producer.
        rng = np.random.default_rng(3)
        input_shape = [shape[0], shape[1], 1, shape[2]]
        inits += [numpy_helper.from_array(rng.standard_normal((shape[1], shape[1], 1, 1)).astype(np.float32), "w"),
                  numpy_helper.from_array(np.array(shape, np.int64), "rows")]
        nodes += [helper.make_node("Conv", ["x", "w"], ["conv"], name="pointwise"),
                  helper.make_node("Reshape", ["conv", "rows"], ["columns"], name="to_columns")]
        source = "columns"
    nodes.append(helper.make_node("Col2Im", [source, "image_shape", "block_shape"], ["y"], name="fold", **attrs))
    graph = helper.make_graph(nodes, "col2im", [helper.make_tensor_value_info("x", TensorProto.FLOAT, input_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())


def compare(args, name, shape, image, block, attrs, extra=(), conv_first=False, tolerance=TOLERANCE):
    model = os.path.join(args.work, name + ".onnx")
    col2im_model(model, shape, image, block, attrs, conv_first)
    if conv_first:
        shape = (shape[0], shape[1], 1, shape[2])
    npy = os.path.join(args.work, name + ".input.npy")
    # 4 samples of batch 1 each, or one input as it is for a batch > 1.
    whole = shape[0] > 1
    samples = np.random.default_rng(7).standard_normal(shape if whole else (4,) + shape[1:])
    np.save(npy, samples.astype(np.float32))
    want = run_onnxruntime(args.ort_module_dir, model, npy, os.path.join(args.work, name + ".ort.raw"), whole)
    got, _ = run_bundle(args.bundlefit, model, npy, os.path.join(args.work, name + ".out"), args.target,
                        list(extra))
    got = got.reshape(-1)
    if got.size != want.size:
        print(f"{name}: {got.size} output values, onnxruntime {want.size}")
        return False
    worst = float(np.max(np.abs(got - want)))
    ok = worst <= tolerance
    print(f"{name}: {got.size} values, max |bundle - onnxruntime| {worst:.3g} ({'ok' if ok else 'FAIL'})")
    return ok


def interpreter_matches(args, name):
    """`run --compare`: the reference interpreter against the bundle, same inputs."""
    model = os.path.join(args.work, name + ".onnx")
    run = subprocess.run([args.bundlefit, "run", model, "--input", os.path.join(args.work, name + ".input.npy"),
                          "--output-dir", os.path.join(args.work, name + ".cmp"), "--compare", "--json", "-q"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        print(f"{name}: run --compare failed: {run.stderr.strip()}")
        return False
    report = json.loads(run.stdout)
    worst = max(o["max_abs_diff"] for o in report["outputs"])
    print(f"{name}: interpreter vs bundle max |diff| {worst:.3g}")
    return worst <= TOLERANCE


def main():
    args = comparison_args()
    if args is None:
        return 77
    ok = True
    for name, (shape, image, block, attrs) in CASES.items():
        ok &= compare(args, name, shape, image, block, attrs)
        if args.target == "host":
            ok &= interpreter_matches(args, name)
    # int8: the Conv quantizes, Col2Im stays float between Dequantize and Quantize.
    name = "col2im_int8"
    shape, image, block, attrs = CASES["col2im_strides"]
    col2im_model(os.path.join(args.work, name + ".onnx"), shape, image, block, attrs, conv_first=True)
    calib = os.path.join(args.work, name + ".calib.npy")
    np.save(calib, np.random.default_rng(11).standard_normal((16, shape[1], 1, shape[2])).astype(np.float32))
    profile = os.path.join(args.work, name + ".yaml")
    subprocess.run([args.bundlefit, "profile", os.path.join(args.work, name + ".onnx"), calib, "-o", profile, "-q"],
                   check=True)
    # int8 rounding of the Conv's output (scale ~ range / 255) summed over up to 4 windows.
    ok &= compare(args, name, shape, image, block, attrs, ["--load-profile", profile], conv_first=True,
                  tolerance=0.2)
    # Three spatial dims: refused with the node named, never a wrong answer.
    model = os.path.join(args.work, "col2im_5d.onnx")
    col2im_model(model, (1, 10, 12), [3, 4, 5], [1, 1, 5], {})
    refused = subprocess.run([args.bundlefit, "plan", model, "-q"], capture_output=True, text=True)
    said = refused.stderr.strip()
    if refused.returncode == 0 or "'fold'" not in said or "spatial" not in said:
        print(f"col2im_5d: expected a refusal naming node 'fold', got {refused.returncode}: {said}")
        ok = False
    else:
        print(f"col2im_5d: refused: {said}")
    print("col2im: every case within its tolerance of onnxruntime" if ok else "col2im: FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
