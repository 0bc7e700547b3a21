#!/usr/bin/python3
"""Where a QDQ model's bundle and onnxruntime part: the difference at every layer.

usage: layer_diff.py BUNDLEFIT MODEL.onnx INPUT.npy WORK_DIR ORT_MODULE_DIR [--target T]

A diagnosis tool, not a test. For every QuantizeLinear of an activation, a
copy of the model cut there (its graph output is that activation's
DequantizeLinear) runs with `bundlefit run` and with onnxruntime-node
(ort_run.js) on the same inputs; one line per cut gives the largest
difference in LSBs of that activation's scale and how many elements differ.
Cutting instead of exposing intermediates as extra outputs keeps both
engines' graphs what they would be for a model that ends there (an extra
graph output would stop onnxruntime from fusing the DequantizeLinear away).
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

from reference_runs import TargetUnavailable, run_bundle, run_onnxruntime


def cut(model, q_node):
    """The model up to `q_node`'s DequantizeLinear, which becomes the output."""
    y_q = q_node.output[0]
    dq = next(n for n in model.graph.node if n.op_type == "DequantizeLinear" and n.input[0] == y_q)
    keep, needed = [], {dq.output[0]}
    for node in reversed(model.graph.node):
        if any(o in needed for o in node.output):
            keep.append(node)
            needed.update(node.input)
    keep.reverse()
    g = model.graph
    out = helper.make_tensor_value_info(dq.output[0], onnx.TensorProto.FLOAT, None)
    graph = helper.make_graph(keep, g.name + "_cut", list(g.input), [out],
                              initializer=[t for t in g.initializer if t.name in needed])
    m = helper.make_model(graph, opset_imports=model.opset_import)
    m.ir_version = model.ir_version
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    return m, float(inits[q_node.input[1]])


def main():
    ap = argparse.ArgumentParser()
    for a in ("bundlefit", "model", "input", "work", "ort_module_dir"):
        ap.add_argument(a)
    ap.add_argument("--target", default="host")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    model = onnx.load(args.model)
    inp = model.graph.input[0].name
    for q in [n for n in model.graph.node if n.op_type == "QuantizeLinear"]:
        if q.input[0] == inp:
            continue
        m, scale = cut(model, q)
        base = os.path.join(args.work, q.input[0])
        onnx.save(m, base + ".onnx")
        try:
            ours, _ = run_bundle(args.bundlefit, base + ".onnx", args.input, base + ".out",
                                 args.target)
            ref = run_onnxruntime(args.ort_module_dir, base + ".onnx", args.input,
                                  base + ".ort.raw").reshape(ours.shape)
        except (RuntimeError, TargetUnavailable) as e:
            print(f"{q.input[0]}: {e}")
            continue
        lsb = np.abs(ours.astype(np.float64) - ref) / scale
        print(f"{q.input[0]:24s} max {lsb.max():.3f} LSB, {int((lsb > 0.5).sum())} of {lsb.size} "
              "differ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
