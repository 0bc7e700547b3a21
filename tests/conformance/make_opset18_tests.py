#!/usr/bin/python3
"""ONNX backend tests rewritten into the spelling of opsets 18-21.

usage: make_opset18_tests.py SOURCE_NODE_DIR OUT_DIR

libonnx-testdata 1.12 stops at opset 17, so there are no backend tests of
the operators whose form changed in opsets 18-21. The semantics did not
change, so each opset-13..17 test below, rewritten in the newer form, must
give the expected outputs it ships:

  Reduce{L1,L2,LogSum,LogSumExp,Max,Mean,Min,Prod,SumSquare}  attribute axes
                      -> constant operand 1 (opset 18); ReduceSum bumped to 18
  Split               no split operand -> num_outputs (18); split operand kept
  Pad                 pads for every axis -> pads + axes operand listing the
                      axes last to first, negative (18; edge/reflect at 19)
  Resize              N and C untouched -> axes=[2, 3] with scales/sizes/roi
                      for those two axes only (18; tf_crop_and_resize at 19)
  AveragePool         explicit dilations of 1 (19)
  QuantizeLinear, DequantizeLinear   bumped to 21
  ScatterElements     bumped to 18

Operands that the original test feeds as graph inputs (Resize's scales,
Split's split, Pad's pads...) become initializers from test_data_set_0, so
only single-data-set tests are converted. Writes OUT_DIR/<test>_opset<N>/
(model.onnx and test_data_set_0 renumbered). Only onnx and numpy.
"""
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper

REDUCE = {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
          "ReduceMin", "ReduceProd", "ReduceSumSquare"}


def attr(node, name, default=None):
    for a in node.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def drop_attr(node, name):
    keep = [a for a in node.attribute if a.name != name]
    del node.attribute[:]
    node.attribute.extend(keep)


class Case:
    def __init__(self, src):
        self.src = src
        self.model = onnx.load(os.path.join(src, "model.onnx"))
        self.graph = self.model.graph
        data = os.path.join(src, "test_data_set_0")
        self.inputs = {}
        for i, inp in enumerate(self.graph.input):
            path = os.path.join(data, f"input_{i}.pb")
            t = onnx.TensorProto()
            with open(path, "rb") as f:
                t.ParseFromString(f.read())
            self.inputs[inp.name] = numpy_helper.to_array(t)

    def value(self, name):
        for t in self.graph.initializer:
            if t.name == name:
                return numpy_helper.to_array(t)
        return self.inputs[name]

    def constant(self, name, array):
        """Graph input or new value `name` becomes an initializer."""
        keep = [i for i in self.graph.input if i.name != name]
        del self.graph.input[:]
        self.graph.input.extend(keep)
        self.graph.initializer.append(numpy_helper.from_array(np.asarray(array), name))

    def write(self, out_root, opset):
        for o in self.model.opset_import:
            if o.domain in ("", "ai.onnx"):
                o.version = opset
        name = os.path.basename(self.src) + f"_opset{opset}"
        out = os.path.join(out_root, name)
        data = os.path.join(out, "test_data_set_0")
        os.makedirs(data, exist_ok=True)
        onnx.save(self.model, os.path.join(out, "model.onnx"))
        for i, inp in enumerate(self.graph.input):
            t = numpy_helper.from_array(self.inputs[inp.name], inp.name)
            with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
                f.write(t.SerializeToString())
        src_data = os.path.join(self.src, "test_data_set_0")
        for f in os.listdir(src_data):
            if f.startswith("output_"):
                shutil.copy(os.path.join(src_data, f), data)
        return name


def convert(case):
    """The opset to write the case at, after rewriting it; None to skip."""
    node = case.graph.node[0]
    op = node.op_type
    if len(case.graph.node) != 1:
        return None
    if op in REDUCE:
        axes = attr(node, "axes")
        if axes is not None:
            drop_attr(node, "axes")
            node.input.append(node.output[0] + "_axes")
            case.constant(node.input[1], np.array(axes, np.int64))
        return 18
    if op == "ReduceSum":
        return 18
    if op == "Split":
        if len(node.input) > 1 and node.input[1]:
            case.constant(node.input[1], case.value(node.input[1]))
        else:
            node.attribute.append(helper.make_attribute("num_outputs", len(node.output)))
        return 18
    if op == "Pad":
        rank = case.value(node.input[0]).ndim
        pads = case.value(node.input[1])
        order = list(range(rank))[::-1]
        case.constant(node.input[1], np.array([pads[a] for a in order] +
                                              [pads[rank + a] for a in order], np.int64))
        for i in range(2, len(node.input)):
            if node.input[i]:
                case.constant(node.input[i], case.value(node.input[i]))
        while len(node.input) < 3:
            node.input.append("")
        node.input.append("pad_axes")
        case.constant("pad_axes", np.array([a - rank for a in order], np.int64))
        return 18 if attr(node, "mode", b"constant") == b"constant" else 19
    if op == "Resize":
        if attr(node, "mode", b"nearest") == b"cubic":
            return None
        x = case.value(node.input[0])
        if x.ndim != 4:
            return None
        names = list(node.input) + [""] * (4 - len(node.input))
        roi = case.value(names[1]) if names[1] else None
        scales = case.value(names[2]) if names[2] else None
        sizes = case.value(names[3]) if names[3] else None
        if scales is not None and scales.size:
            if not np.all(scales[:2] == 1):
                return None
            case.constant(names[2], scales[2:].astype(np.float32))
        if sizes is not None and sizes.size:
            if not np.all(sizes[:2] == x.shape[:2]):
                return None
            case.constant(names[3], sizes[2:].astype(np.int64))
        for i, v in ((1, roi), (2, scales), (3, sizes)):
            if names[i] and v is not None and not v.size:
                case.constant(names[i], v)
        if roi is not None and roi.size:
            if not (np.all(roi[:2] == 0) and np.all(roi[4:6] == 1)):
                return None
            case.constant(names[1], np.concatenate([roi[2:4], roi[6:8]]).astype(np.float32))
        node.attribute.append(helper.make_attribute("axes", [2, 3]))
        return 19 if attr(node, "coordinate_transformation_mode") == b"tf_crop_and_resize" else 18
    if op == "AveragePool":
        rank = case.value(node.input[0]).ndim
        node.attribute.append(helper.make_attribute("dilations", [1] * (rank - 2)))
        return 19
    if op in ("QuantizeLinear", "DequantizeLinear"):
        return 21
    if op == "ScatterElements":
        return 18
    return None


def main():
    src_root, out_root = sys.argv[1:3]
    if os.path.isdir(out_root):
        shutil.rmtree(out_root)
    os.makedirs(out_root)
    written = 0
    for test in sorted(os.listdir(src_root)):
        src = os.path.join(src_root, test)
        if not os.path.isfile(os.path.join(src, "model.onnx")):
            continue
        if os.path.isdir(os.path.join(src, "test_data_set_1")):
            continue
        if not test.startswith(("test_reduce_", "test_split_", "test_resize_", "test_constant_pad",
                                "test_edge_pad", "test_reflect_pad", "test_averagepool_",
                                "test_quantizelinear", "test_dequantizelinear",
                                "test_scatter_elements")):
            continue
        case = Case(src)
        opset = convert(case)
        if opset is None:
            continue
        case.write(out_root, opset)
        written += 1
    print(f"wrote {written} opset 18-21 tests to {out_root}")


if __name__ == "__main__":
    main()
