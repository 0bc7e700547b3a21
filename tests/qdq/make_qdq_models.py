#!/usr/bin/python3
"""Pre-quantized (QDQ) ONNX models from the repo's float models, for tests/qdq.

Takes LeNet from tests/models/make_models.py and a small CNN built with its
Builder (3x3 conv, depthwise conv, residual Add, average pooling, 1x1 conv,
global average pooling, Gemm, Softmax), evaluates them eagerly on a few random
calibration inputs (the Builder computes every tensor with numpy) and writes
QDQ models the way onnxruntime's static quantizer lays them out:

  input -> Q -> DQ -> Conv(DQ(int8 W), DQ(int32 bias)) -> Q -> DQ -> ... -> DQ -> output

in four flavours per model: weights per tensor (pt) or per output channel
(pc), activations int8 (s8) or uint8 (u8); for some models also in the
QOperator form (NAME_qop_*: each Conv a QLinearConv, each MatMul a QLinearMatMul, the rest QDQ). Activation scales come from the
calibration min/max (0 always included); MaxPool, Relu and Flatten reuse their
input's parameters and Softmax's output is 1/256 (zero point -128 / 0), as the
int8 kernels require; weights are symmetric int8 (max |w| / 127), biases int32
at input scale x weight scale.

Also writes NAME.input.npy (test inputs, not the calibration ones, stacked on
the first axis) for each model. Only onnx and numpy.

And the trained Fashion-MNIST CNN (tests/models/fashion_mnist) as
fashion_qdq_{pt,pc}_{s8,u8}.onnx, calibrated on its 200 calibration images
(pixel / 255) the same way; fashion_*.input.npy holds the first
FASHION_SAMPLES test images (fashion_accuracy.py reads all 1,000). Skipped,
with a line saying so, when the data files are not there.
"""
import argparse
import itertools
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import make_models as mm  # noqa: E402

CALIB = 8    # calibration inputs
SAMPLES = 4  # test inputs written to NAME.input.npy
SAME_PARAMS = {"MaxPool", "Relu", "Flatten", "Reshape"}


def small_cnn():
    b = mm.Builder("smallcnn", "input", [1, 3, 16, 16])
    x = b.conv("input", "conv1", 8, 3)
    x = b.relu(x, "relu1")
    d = b.conv(x, "dw", 8, 3, group=8)
    d = b.relu(d, "relu2")
    x = b.add(x, d, "residual")
    x = b.avgpool(x, "pool", (2, 2))
    x = b.conv(x, "pw", 16, 1, pads=[0, 0, 0, 0])
    x = b.gap(x, "gap")
    x = b.flatten(x, "flatten")
    x = b.gemm(x, "fc", 10, logit_std=2.0)
    x = b.softmax(x, "softmax")
    return b, b.finish([x], "small CNN for the QDQ tests")


def matmul(b, x, name, nout):
    """MatMul by a constant [K, nout] (no bias): QLinearMatMul's float form."""
    k = b.v(x).shape[1]
    w = (b.rng.standard_normal((k, nout)) * np.sqrt(2.0 / k)).astype(np.float32)
    y = (b.v(x).astype(np.float64) @ w).astype(np.float32)
    return b.node("MatMul", name, [x, b.init(name + ".weight", w)], y)


def avgpool_pad(b, x, name, k, pads):
    """AveragePool, stride 1, `pads` excluded from the count (count_include_pad=0)."""
    xv = b.v(x).astype(np.float64)
    n, c, h, w = xv.shape
    padded = np.pad(xv, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    ones = np.pad(np.ones((h, w)), ((pads[0], pads[2]), (pads[1], pads[3])))
    oh, ow = padded.shape[2] - k + 1, padded.shape[3] - k + 1
    total, count = np.zeros((n, c, oh, ow)), np.zeros((oh, ow))
    for i in range(k):
        for j in range(k):
            total += padded[:, :, i:i + oh, j:j + ow]
            count += ones[i:i + oh, j:j + ow]
    return b.node("AveragePool", name, [x], (total / count).astype(np.float32),
                  kernel_shape=[k, k], strides=[1, 1], pads=list(pads), count_include_pad=0)


def single(name, shape, layer):
    """One quantized layer: its output differs from onnxruntime's by rounding only."""
    def make():
        b = mm.Builder(name, "input", shape)
        y = layer(b)
        return b, b.finish([y], "one QDQ layer: " + name)
    return make


# Single layers: their outputs must be within 1 LSB of onnxruntime's.
SINGLE = {
    "op_conv": single("op_conv", [1, 4, 10, 10], lambda b: b.conv("input", "conv", 8, 3)),
    "op_dwconv": single("op_dwconv", [1, 4, 9, 9],
                        lambda b: b.conv("input", "dw", 8, 3, stride=2, group=4)),
    "op_gemm": single("op_gemm", [1, 32], lambda b: b.gemm("input", "fc", 16)),
    "op_matmul": single("op_matmul", [1, 32], lambda b: matmul(b, "input", "mm", 16)),
    "op_add": single("op_add", [1, 4, 6, 6],
                     lambda b: b.add("input", b.relu("input", "relu"), "add")),
    "op_maxpool": single("op_maxpool", [1, 4, 8, 8], lambda b: b.maxpool("input", "pool", 2, 2)),
    "op_gap": single("op_gap", [1, 8, 5, 5], lambda b: b.gap("input", "gap")),
    "op_softmax": single("op_softmax", [1, 10], lambda b: b.softmax("input", "softmax")),
    # Two inputs at different scales (the input's and a 1x1 conv's).
    "op_add_mix": single("op_add_mix", [1, 4, 8, 8], lambda b: b.add(
        "input", b.conv("input", "pw", 4, 1, pads=[0, 0, 0, 0], std=2.0), "add")),
    "op_mul_mix": single("op_mul_mix", [1, 4, 8, 8], lambda b: b.mul(
        "input", b.conv("input", "pw", 4, 1, pads=[0, 0, 0, 0]), "mul")),
    "op_concat_mix": single("op_concat_mix", [1, 4, 8, 8], lambda b: b.concat(
        ["input", b.conv("input", "pw", 4, 1, pads=[0, 0, 0, 0], std=3.0)], "concat")),
    "op_avgpool": single("op_avgpool", [1, 4, 8, 8], lambda b: b.avgpool("input", "pool", (2, 2))),
    "op_avgpool_pad": single("op_avgpool_pad", [1, 4, 8, 8],
                             lambda b: avgpool_pad(b, "input", "pool", 3, [1, 1, 1, 1])),
    # SiLU as exporters write it (Sigmoid, then Mul by its own input), and an
    # SE gate: Mul of the [1, 8, 6, 6] activation by a [1, 8, 1, 1] sigmoid
    # gate (GlobalAveragePool, 1x1 conv, Relu, 1x1 conv), as EfficientNet's.
    "op_silu": single("op_silu", [1, 4, 8, 8], lambda b: b.silu("input", "silu")),
    "op_se_gate": single("op_se_gate", [1, 8, 6, 6], lambda b: b.squeeze_excite(
        "input", "se", 4, b.relu, b.sigmoid)),
}
# Also written with asymmetric weights (NAME_FORM_pt_s8_wa8: int8 with zero
# points from each channel's min/max; _wu8: uint8 weights as onnxruntime's
# quantizer makes them, zero points near 128), beside the symmetric ones.
ASYMMETRIC_WEIGHTS = {"op_conv", "op_dwconv", "op_gemm", "op_matmul", "smallcnn"}
MODELS = {"lenet": mm.lenet, "smallcnn": small_cnn, **SINGLE}
# Also written in the QOperator form (their Convs as QLinearConv, MatMuls as
# QLinearMatMul): NAME_qop_*.
QOPERATOR = {"lenet", "smallcnn", "op_conv", "op_dwconv", "op_matmul"}


def build_calibrated(name):
    """The float model, its Builder evaluated on CALIB inputs."""
    init = mm.Builder.__init__

    def calibrating(self, *args, **kwargs):
        kwargs["calib_batch"] = CALIB
        init(self, *args, **kwargs)
    mm.Builder.__init__ = calibrating
    try:
        return MODELS[name]()
    finally:
        mm.Builder.__init__ = init


def activation_params(values, unsigned):
    lo = min(0.0, float(values.min()))
    hi = max(0.0, float(values.max()))
    scale = max(hi - lo, 1e-8) / 255.0
    qmin = 0 if unsigned else -128
    zp = int(np.clip(np.round(qmin - lo / scale), qmin, qmin + 255))
    return np.float32(scale), zp


FASHION_DIR = os.path.join(HERE, "..", "models", "fashion_mnist")
FASHION_SAMPLES = 16  # test images compared with onnxruntime (compare_qdq.py)


class OnnxEvaluator:
    """A float ONNX model of Conv, Relu, MaxPool, Flatten and Gemm evaluated
    in numpy on a batch (make_models' eager kernels): what QdqWriter reads of
    a Builder (v(name), input_shape), for a model that was not built here."""

    def __init__(self, model, x):
        self.input_shape = [1] + list(x.shape[1:])
        self.values = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
        self.values[model.graph.input[0].name] = x
        for node in model.graph.node:
            a = {at.name: helper.get_attribute_value(at) for at in node.attribute}
            ins = [self.values[i] for i in node.input]
            if node.op_type == "Conv":
                strides = a.get("strides", [1, 1])
                assert strides[0] == strides[1], node.name
                y = mm._conv(ins[0], ins[1], ins[2] if len(ins) > 2 else None, strides[0],
                             a.get("pads", [0, 0, 0, 0]), a.get("group", 1))
            elif node.op_type == "Relu":
                y = np.maximum(ins[0], 0)
            elif node.op_type == "MaxPool":
                y = mm._maxpool(ins[0], a["kernel_shape"], a["strides"], a.get("pads", [0] * 4))
            elif node.op_type == "Flatten":
                y = ins[0].reshape(ins[0].shape[0], -1)
            elif node.op_type == "Gemm":
                w = ins[1].T if a.get("transB", 0) else ins[1]
                y = (ins[0].astype(np.float64) @ w + ins[2]).astype(np.float32)
            else:
                raise SystemExit(f"OnnxEvaluator: no numpy kernel for {node.op_type}")
            self.values[node.output[0]] = y

    def v(self, name):
        return self.values[name]


def fashion_images(name):
    """A Fashion-MNIST .npy as the model's input (pixel / 255 in float32)."""
    return np.load(os.path.join(FASHION_DIR, name)).astype(np.float32) / np.float32(255)


def write_fashion(out):
    """fashion_qdq_*: the trained CNN in the four QDQ flavours."""
    path = os.path.join(FASHION_DIR, "fashion_cnn.onnx")
    needed = [path] + [os.path.join(FASHION_DIR, f) for f in ("calib_images.npy",
                                                              "test_images.npy")]
    if not all(os.path.exists(f) for f in needed):
        print(f"fashion: skipped ({FASHION_DIR} lacks the model or its images)")
        return
    model = onnx.load(path)
    calibration = OnnxEvaluator(model, fashion_images("calib_images.npy"))
    x = fashion_images("test_images.npy")[:FASHION_SAMPLES]
    for per_channel, unsigned in itertools.product((False, True), (False, True)):
        tag = f"fashion_qdq_{'pc' if per_channel else 'pt'}_{'u8' if unsigned else 's8'}"
        qdq = QdqWriter(model, calibration, per_channel, unsigned).run()
        with open(os.path.join(out, tag + ".onnx"), "wb") as f:
            f.write(qdq.SerializeToString())
        np.save(os.path.join(out, tag + ".input.npy"), x)
        print(tag, len(qdq.graph.node), "nodes")


class QdqWriter:
    def __init__(self, model, builder, per_channel, unsigned, qoperator=False, weights="s8"):
        self.g = model.graph
        self.weights = weights  # "s8" symmetric int8, "a8" asymmetric int8, "u8" uint8
        self.b = builder
        self.per_channel = per_channel
        self.unsigned = unsigned
        self.qoperator = qoperator  # Conv, MatMul as QLinearConv, QLinearMatMul (QOperator)
        self.params = {}   # float value -> (scale, zp)
        self.nodes, self.inits = [], list(self.g.initializer)
        self.drop = set()  # float weights replaced by quantized ones

    def zp_tensor(self, name, zp):
        dtype = np.uint8 if self.unsigned else np.int8
        return numpy_helper.from_array(np.array(zp, dtype), name)

    def quantized_input(self, x):
        """The name reading `x` through its Q -> DQ pair."""
        return x + "_dq"

    def qdq(self, x, scale, zp, quantize=True):
        self.params[x] = (scale, zp)
        self.inits.append(numpy_helper.from_array(np.array(scale, np.float32), x + "_scale"))
        self.inits.append(self.zp_tensor(x + "_zp", zp))
        if quantize:
            self.nodes.append(helper.make_node("QuantizeLinear", [x, x + "_scale", x + "_zp"],
                                               [x + "_q"], name=x + "_quantize"))
        self.nodes.append(helper.make_node("DequantizeLinear", [x + "_q", x + "_scale", x + "_zp"],
                                           [x + "_dq"], name=x + "_dequantize"))

    def weight(self, node, w_name, axis):
        w = numpy_helper.to_array(next(t for t in self.g.initializer if t.name == w_name))
        red = tuple(i for i in range(w.ndim) if i != axis) if self.per_channel else None
        shape = [1] * w.ndim
        if self.per_channel:
            shape[axis] = -1
        if self.weights == "s8":
            m = np.asarray(np.abs(w).max(axis=red))
            scale = (np.maximum(m, 1e-8) / 127.0).astype(np.float32)
            zp = np.zeros(scale.shape, np.int8)
            qmin, qmax = -127, 127
        else:  # onnxruntime's asymmetric weights: [min(w, 0), max(w, 0)] over 255 steps
            lo = np.minimum(np.asarray(w.min(axis=red)), 0)
            hi = np.maximum(np.asarray(w.max(axis=red)), 0)
            scale = (np.maximum(hi - lo, 1e-8) / 255.0).astype(np.float32)
            qmin, qmax = (0, 255) if self.weights == "u8" else (-128, 127)
            zp = np.clip(np.round(qmin - lo / scale), qmin, qmax).astype(
                np.uint8 if self.weights == "u8" else np.int8)
        q = np.clip(np.round(w / scale.reshape(shape)) + zp.astype(np.int32).reshape(shape),
                    qmin, qmax).astype(zp.dtype)
        self.drop.add(w_name)
        self.inits += [numpy_helper.from_array(q, w_name + "_q"),
                       numpy_helper.from_array(scale, w_name + "_scale"),
                       numpy_helper.from_array(zp, w_name + "_zp")]
        attrs = {"axis": axis} if self.per_channel else {}
        self.nodes.append(helper.make_node(
            "DequantizeLinear", [w_name + "_q", w_name + "_scale", w_name + "_zp"],
            [w_name + "_dq"], name=w_name + "_dequantize", **attrs))
        return scale

    def bias(self, b_name, scale):
        b = numpy_helper.to_array(next(t for t in self.g.initializer if t.name == b_name))
        scale = np.asarray(scale, np.float32)
        q = np.round(b / scale).astype(np.int32)
        self.drop.add(b_name)
        self.inits += [numpy_helper.from_array(q, b_name + "_q"),
                       numpy_helper.from_array(scale, b_name + "_scale"),
                       numpy_helper.from_array(np.zeros(scale.shape, np.int32), b_name + "_zp")]
        attrs = {"axis": 0} if scale.ndim == 1 else {}
        self.nodes.append(helper.make_node(
            "DequantizeLinear", [b_name + "_q", b_name + "_scale", b_name + "_zp"],
            [b_name + "_dq"], name=b_name + "_dequantize", **attrs))

    def run(self):
        inp = self.g.input[0].name
        self.qdq(inp, *activation_params(self.b.v(inp), self.unsigned))
        for node in self.g.node:
            x = node.input[0]
            ins = [self.quantized_input(i) if i in self.params else i for i in node.input]
            if node.op_type in ("Conv", "Gemm", "MatMul"):
                # Conv's output channels; Gemm here has transB=1; MatMul's columns.
                axis = 1 if node.op_type == "MatMul" else 0
                wscale = self.weight(node, node.input[1], axis)
                ins[1] = node.input[1] + "_dq"
                if len(node.input) > 2:
                    self.bias(node.input[2], self.params[x][0] * wscale)
                    ins[2] = node.input[2] + "_dq"
            y = node.output[0]
            if self.qoperator and node.op_type in ("Conv", "MatMul"):
                # QLinearConv / QLinearMatMul read the integers the
                # DequantizeLinears above read (weight, then bias if any).
                del self.nodes[-(len(node.input) - 1):]
                conv = node.op_type == "Conv"
                q = helper.make_node("QLinearConv" if conv else "QLinearMatMul", [
                    x + "_q", x + "_scale", x + "_zp",
                    node.input[1] + "_q", node.input[1] + "_scale", node.input[1] + "_zp",
                    y + "_scale", y + "_zp"] + ([node.input[2] + "_q"] if conv else []),
                    [y + "_q"], name=node.name)
                q.attribute.extend(node.attribute)
                self.nodes.append(q)
                self.qdq(y, *activation_params(self.b.v(y), self.unsigned), quantize=False)
                continue
            copy = helper.make_node(node.op_type, ins, list(node.output), name=node.name)
            copy.attribute.extend(node.attribute)
            self.nodes.append(copy)
            if node.op_type in SAME_PARAMS:
                params = self.params[x]
            elif node.op_type == "Softmax":
                params = (np.float32(1.0 / 256.0), 0 if self.unsigned else -128)
            else:
                params = activation_params(self.b.v(y), self.unsigned)
            self.qdq(y, *params)
        out = self.g.output[0]
        # The graph output is the last DequantizeLinear's result, under the output's name.
        last = self.nodes[-1]
        last.output[0] = out.name + "_dq_out"
        graph = helper.make_graph(
            self.nodes, self.g.name + "_qdq", list(self.g.input),
            [helper.make_tensor_value_info(out.name + "_dq_out", TensorProto.FLOAT,
                                           [d.dim_value for d in out.type.tensor_type.shape.dim])],
            initializer=[t for t in self.inits if t.name not in self.drop])
        model = helper.make_model(graph, producer_name="bundlefit-make_qdq_models",
                                  opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = mm.IR_VERSION
        return model


def write_ties(out):
    """op_ties_qdq_pt_{s8,u8}: input -> Q -> DQ -> Relu -> Q -> DQ with a
    power-of-two scale and inputs on the half steps, where rounding half to
    even (ONNX's QuantizeLinear) and half away from zero (TFLite's) differ."""
    for unsigned in (False, True):
        zp_type, zp = (np.uint8, 128) if unsigned else (np.int8, 0)
        inits = [numpy_helper.from_array(np.array(0.5, np.float32), "s"),
                 numpy_helper.from_array(np.array(zp, zp_type), "z")]
        nodes = [helper.make_node("QuantizeLinear", ["input", "s", "z"], ["x_q"]),
                 helper.make_node("DequantizeLinear", ["x_q", "s", "z"], ["x_dq"]),
                 helper.make_node("Relu", ["x_dq"], ["r"]),
                 helper.make_node("QuantizeLinear", ["r", "s", "z"], ["r_q"]),
                 helper.make_node("DequantizeLinear", ["r_q", "s", "z"], ["output"])]
        shape = [1, 64]
        graph = helper.make_graph(
            nodes, "ties", [helper.make_tensor_value_info("input", TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info("output", TensorProto.FLOAT, shape)], inits)
        model = helper.make_model(graph, producer_name="bundlefit-make_qdq_models",
                                  opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = mm.IR_VERSION
        tag = "op_ties_qdq_pt_" + ("u8" if unsigned else "s8")
        with open(os.path.join(out, tag + ".onnx"), "wb") as f:
            f.write(model.SerializeToString())
        # x / 0.5 = k + 0.5 exactly: -32.5 .. 31.5, every half step, twice.
        x = ((np.arange(SAMPLES * 64) % 64) - 32).astype(np.float32) * 0.5 + 0.25
        np.save(os.path.join(out, tag + ".input.npy"), x.reshape([SAMPLES] + shape[1:]))
        print(tag, len(nodes), "nodes")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output directory")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    for name in MODELS:
        builder, model = build_calibrated(name)
        rng = np.random.default_rng(1234)
        shape = [SAMPLES] + list(builder.input_shape[1:])
        kind_unit = name == "lenet"  # LeNet's inputs are images in [0, 1)
        x = rng.random(shape, dtype=np.float32) if kind_unit else \
            rng.standard_normal(shape, dtype=np.float32)
        forms = ["qdq", "qop"] if name in QOPERATOR else ["qdq"]
        weight_modes = ["s8", "a8", "u8"] if name in ASYMMETRIC_WEIGHTS else ["s8"]
        for form, per_channel, unsigned, weights in itertools.product(
                forms, (False, True), (False, True), weight_modes):
            if form == "qop" and weights == "u8" and not unsigned:
                continue  # onnxruntime has no QLinearConv/MatMul of int8 x by uint8 w
            tag = f"{name}_{form}_{'pc' if per_channel else 'pt'}_{'u8' if unsigned else 's8'}"
            tag += "" if weights == "s8" else "_w" + weights
            qdq = QdqWriter(model, builder, per_channel, unsigned, form == "qop", weights).run()
            with open(os.path.join(args.out, tag + ".onnx"), "wb") as f:
                f.write(qdq.SerializeToString())
            np.save(os.path.join(args.out, tag + ".input.npy"), x)
            print(tag, len(qdq.graph.node), "nodes")
    write_ties(args.out)
    write_fashion(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
