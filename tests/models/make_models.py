#!/usr/bin/python3
"""bundlefit reference model zoo.

Builds a small set of float32, batch-1, NCHW ONNX models with onnx.helper
(no torch, no downloads) and writes, for every model NAME:

    DIR/NAME.onnx        the model (opset 13, IR 7)
    DIR/NAME.input.npy   a fixed-seed float32 input of the model's input shape

Usage (use Debian's python: it has python3-onnx 1.12 and numpy):

    /usr/bin/python3 tests/models/make_models.py --out DIR [--only lenet,resnet8]

Without --only, every model but BENCH_ONLY (the full EfficientNet-B0 and
MobileNetV3-small, which bench/memory builds) is written.

Prints one line per model: name, nodes, params, weight bytes, file bytes.
Everything is seeded per model (seed = crc32(name)), so the output is
bit-identical from run to run and independent of --only.

Weights: He-normal for conv/fc weights, small random biases. BatchNormalization
statistics are data-dependent: while the graph is built, every op is also
evaluated eagerly in numpy on a calibration input (the model's own input, or a
batch of 64 for the autoencoder) and each BN gets that tensor's per-channel
mean/variance, randomly perturbed (+-10%), with gamma ~ U(0.7,1.3) and beta ~
N(0, 0.1). The classifier layer is rescaled so the logits have std ~2.
Activations therefore stay O(1) through deep nets (MobileNetV2) and the
softmax outputs are not saturated. The eager values are only used for that
(and by check_models.py for sanity); they are not a verified reference.
"""
import argparse
import os
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
IR_VERSION = 7  # the IR version that goes with opset 13


# ----------------------------------------------------------------------------
# eager numpy kernels (only what the builder needs)
# ----------------------------------------------------------------------------
def _conv(x, w, b, stride, pads, group):
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh = (h + pads[0] + pads[2] - kh) // stride + 1
    ow = (wd + pads[1] + pads[3] - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), np.float64)
    og = o // group
    for i in range(kh):
        for j in range(kw):
            xs = xp[:, :, i:i + stride * (oh - 1) + 1:stride,
                    j:j + stride * (ow - 1) + 1:stride]
            if group == 1:
                out += (w[:, :, i, j] @ xs.reshape(n, c, oh * ow)).reshape(n, o, oh, ow)
            elif group == c and o == c:  # depthwise
                out += xs * w[:, 0, i, j][None, :, None, None]
            else:
                for g in range(group):
                    xg = xs[:, g * cg:(g + 1) * cg].reshape(n, cg, oh * ow)
                    out[:, g * og:(g + 1) * og] += (w[g * og:(g + 1) * og, :, i, j] @ xg).reshape(n, og, oh, ow)
    if b is not None:
        out += b[None, :, None, None]
    return out.astype(np.float32)


def _maxpool(x, k, stride, pads):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])),
                constant_values=-np.inf)
    oh = (h + pads[0] + pads[2] - k[0]) // stride[0] + 1
    ow = (w + pads[1] + pads[3] - k[1]) // stride[1] + 1
    out = np.full((n, c, oh, ow), -np.inf, np.float32)
    for i in range(k[0]):
        for j in range(k[1]):
            out = np.maximum(out, xp[:, :, i:i + stride[0] * (oh - 1) + 1:stride[0],
                                     j:j + stride[1] * (ow - 1) + 1:stride[1]])
    return out


def _avgpool(x, k, stride):
    n, c, h, w = x.shape
    oh = (h - k[0]) // stride[0] + 1
    ow = (w - k[1]) // stride[1] + 1
    out = np.zeros((n, c, oh, ow), np.float64)
    for i in range(k[0]):
        for j in range(k[1]):
            out += x[:, :, i:i + stride[0] * (oh - 1) + 1:stride[0],
                     j:j + stride[1] * (ow - 1) + 1:stride[1]]
    return (out / (k[0] * k[1])).astype(np.float32)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(np.float32)


def tf_same_pads(size, k, s):
    """TF/Keras padding='same' for one spatial dim: (begin, end), extra at the end."""
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return total // 2, total - total // 2


# ----------------------------------------------------------------------------
# graph builder: records ONNX nodes/initializers and evaluates them eagerly
# ----------------------------------------------------------------------------
class Builder:
    def __init__(self, name, input_name, input_shape, calib_batch=1, input_kind="normal"):
        self.name = name
        seed = zlib.crc32(name.encode())
        self.rng = np.random.default_rng(seed)
        in_rng = np.random.default_rng(seed + 1)
        self.nodes, self.inits, self.vals = [], [], {}
        self.used = set()
        self.input_name, self.input_shape = input_name, list(input_shape)
        shape = [calib_batch] + list(input_shape[1:])
        if input_kind == "unit":
            x = in_rng.random(shape, dtype=np.float32)
        else:
            x = in_rng.standard_normal(shape, dtype=np.float32)
        self.input_value = x[:1].copy()  # what gets saved as NAME.input.npy
        self.vals[input_name] = x
        self.used.add(input_name)
        self.outputs = []

    # -- bookkeeping --------------------------------------------------------
    def _uniq(self, n):
        assert n not in self.used, "duplicate name " + n
        self.used.add(n)
        return n

    def init(self, name, arr):
        arr = np.asarray(arr)
        self._uniq(name)
        self.inits.append(numpy_helper.from_array(arr, name))
        self.vals[name] = arr
        return name

    def node(self, op, name, inputs, value, **attrs):
        """One node with one output; output tensor is named like the node."""
        self._uniq(name)
        self.nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        self.vals[name] = value
        return name

    def v(self, t):
        return self.vals[t]

    # -- layers -------------------------------------------------------------
    def conv(self, x, name, cout, k, stride=1, pads=None, group=1, bias=True, std=None):
        kh, kw = (k, k) if isinstance(k, int) else k
        cin = self.v(x).shape[1]
        if pads is None:
            pads = [kh // 2, kw // 2, kh // 2, kw // 2]
        fan_in = cin // group * kh * kw
        std = np.sqrt(2.0 / fan_in) if std is None else std
        w = (self.rng.standard_normal((cout, cin // group, kh, kw)) * std).astype(np.float32)
        ins = [x, self.init(name + ".weight", w)]
        b = None
        if bias:
            b = (self.rng.standard_normal(cout) * 0.05).astype(np.float32)
            ins.append(self.init(name + ".bias", b))
        y = _conv(self.v(x), w, b, stride, pads, group)
        return self.node("Conv", name, ins, y, kernel_shape=[kh, kw], strides=[stride, stride],
                         pads=list(pads), dilations=[1, 1], group=group)

    def bn(self, x, name, eps=1e-3):
        xv = self.v(x).astype(np.float64)
        axes = (0,) if xv.ndim == 2 else (0, 2, 3)
        c = xv.shape[1]
        mean = xv.mean(axis=axes) + 0.1 * xv.std(axis=axes) * self.rng.standard_normal(c)
        var = np.maximum(xv.var(axis=axes), 1e-2) * self.rng.uniform(0.9, 1.1, c)
        gamma = self.rng.uniform(0.7, 1.3, c)
        beta = self.rng.standard_normal(c) * 0.1
        p = [a.astype(np.float32) for a in (gamma, beta, mean, var)]
        ins = [x] + [self.init(name + s, a) for s, a in zip((".scale", ".bias", ".mean", ".var"), p)]
        sh = (1, c) if xv.ndim == 2 else (1, c, 1, 1)
        y = (xv - p[2].reshape(sh)) / np.sqrt(p[3].reshape(sh) + eps) * p[0].reshape(sh) + p[1].reshape(sh)
        return self.node("BatchNormalization", name, ins, y.astype(np.float32), epsilon=eps)

    def relu(self, x, name):
        return self.node("Relu", name, [x], np.maximum(self.v(x), 0))

    def relu6(self, x, name):
        if "relu6_min" not in self.vals:  # shared scalar bounds (opset-13 Clip takes inputs)
            self.init("relu6_min", np.array(0.0, np.float32))
            self.init("relu6_max", np.array(6.0, np.float32))
        return self.node("Clip", name, [x, "relu6_min", "relu6_max"], np.clip(self.v(x), 0, 6))

    def sigmoid(self, x, name):
        return self.node("Sigmoid", name, [x], (1 / (1 + np.exp(-self.v(x).astype(np.float64)))).astype(np.float32))

    def hard_sigmoid(self, x, name):
        """PyTorch's Hardsigmoid, relu6(x + 3) / 6, as ONNX HardSigmoid(alpha=1/6, beta=0.5)."""
        y = np.clip(self.v(x) / 6.0 + 0.5, 0, 1).astype(np.float32)
        return self.node("HardSigmoid", name, [x], y, alpha=1.0 / 6.0, beta=0.5)

    def mul(self, a, b, name):
        return self.node("Mul", name, [a, b], self.v(a) * self.v(b))

    def silu(self, x, name):
        """x * sigmoid(x), as exporters write SiLU/Swish (no ONNX op before opset 22)."""
        return self.mul(x, self.sigmoid(x, name + "_sigmoid"), name)

    def hard_swish(self, x, name):
        """x * hardsigmoid(x), as pre-opset-14 exporters write HardSwish."""
        return self.mul(x, self.hard_sigmoid(x, name + "_hsigmoid"), name)

    def squeeze_excite(self, x, name, squeeze, act, gate):
        """SE: GlobalAveragePool -> 1x1 conv -> act -> 1x1 conv -> gate -> Mul(x, [1,C,1,1])."""
        c = self.v(x).shape[1]
        s = self.gap(x, name + "_pool")
        s = self.conv(s, name + "_reduce", squeeze, 1, pads=[0, 0, 0, 0])
        s = act(s, name + "_act")
        s = self.conv(s, name + "_expand", c, 1, pads=[0, 0, 0, 0])
        s = gate(s, name + "_gate")
        return self.mul(x, s, name + "_scale")

    def add(self, a, b, name):
        return self.node("Add", name, [a, b], self.v(a) + self.v(b))

    def concat(self, xs, name, axis=1):
        return self.node("Concat", name, xs, np.concatenate([self.v(x) for x in xs], axis), axis=axis)

    def maxpool(self, x, name, k, stride, pads=(0, 0, 0, 0)):
        y = _maxpool(self.v(x), (k, k), (stride, stride), pads)
        return self.node("MaxPool", name, [x], y, kernel_shape=[k, k], strides=[stride, stride],
                         pads=list(pads))

    def avgpool(self, x, name, k, stride=None):
        k = tuple(k)
        stride = tuple(stride or k)
        y = _avgpool(self.v(x), k, stride)
        return self.node("AveragePool", name, [x], y, kernel_shape=list(k), strides=list(stride))

    def gap(self, x, name):
        return self.node("GlobalAveragePool", name, [x], self.v(x).mean(axis=(2, 3), keepdims=True))

    def flatten(self, x, name):
        xv = self.v(x)
        return self.node("Flatten", name, [x], xv.reshape(xv.shape[0], -1), axis=1)

    def flatten_torch_style(self, x, prefix):
        """x.view(x.size(0), -1) as exported by PyTorch: Shape->Gather->Unsqueeze->Concat->Reshape."""
        xv = self.v(x)
        shp = self.node("Shape", prefix + "_shape", [x], np.array(xv.shape, np.int64))
        c0 = self._const(prefix + "_const_0", np.array(0, np.int64))
        g = self.node("Gather", prefix + "_batch", [shp, c0], np.array(xv.shape[0], np.int64), axis=0)
        ax = self._const(prefix + "_const_axes", np.array([0], np.int64))
        u = self.node("Unsqueeze", prefix + "_batch_1d", [g, ax], np.array([xv.shape[0]], np.int64))
        m1 = self._const(prefix + "_const_minus1", np.array([-1], np.int64))
        cat = self.node("Concat", prefix + "_target_shape", [u, m1],
                        np.array([xv.shape[0], -1], np.int64), axis=0)
        return self.node("Reshape", prefix, [x, cat], xv.reshape(xv.shape[0], -1))

    def _const(self, name, arr):
        self._uniq(name)
        self.nodes.append(helper.make_node("Constant", [], [name], name=name,
                                           value=numpy_helper.from_array(arr, name)))
        self.vals[name] = arr
        return name

    def gemm(self, x, name, nout, logit_std=None):
        xv = self.v(x)
        k = xv.shape[1]
        w = (self.rng.standard_normal((nout, k)) * np.sqrt(2.0 / k)).astype(np.float32)
        b = (self.rng.standard_normal(nout) * 0.05).astype(np.float32)
        if logit_std is not None:  # classifier: rescale so logits are spread but not saturating
            z = xv @ w.T
            s = float(z.std()) if z.size > 1 else 1.0
            w = (w * (logit_std / max(s, 1e-6))).astype(np.float32)
        ins = [x, self.init(name + ".weight", w), self.init(name + ".bias", b)]
        y = (xv.astype(np.float64) @ w.T.astype(np.float64) + b).astype(np.float32)
        return self.node("Gemm", name, ins, y, transB=1, alpha=1.0, beta=1.0)

    def softmax(self, x, name):
        return self.node("Softmax", name, [x], _softmax(self.v(x), 1), axis=1)

    # -- finish -------------------------------------------------------------
    def finish(self, outputs, doc, order=None):
        nodes = self.nodes
        if order is not None:  # explicit node order (branchy)
            by = {n.name: n for n in nodes}
            assert sorted(order) == sorted(by), "order must be a permutation of the nodes"
            nodes = [by[n] for n in order]
        outs = []
        for o in outputs:
            shp = [1] + list(self.v(o).shape[1:])
            outs.append(helper.make_tensor_value_info(o, TensorProto.FLOAT, shp))
        graph = helper.make_graph(
            nodes, self.name,
            [helper.make_tensor_value_info(self.input_name, TensorProto.FLOAT, self.input_shape)],
            outs, initializer=self.inits)
        model = helper.make_model(graph, producer_name="bundlefit-make_models",
                                  opset_imports=[helper.make_opsetid("", OPSET)], doc_string=doc)
        model.ir_version = IR_VERSION
        self.outputs = outputs
        return model


# ----------------------------------------------------------------------------
# models
# ----------------------------------------------------------------------------
def lenet():
    """Caffe LeNet MNIST (Glow LeNetMnist / NXP AN13001)."""
    b = Builder("lenet", "data", [1, 1, 28, 28], input_kind="unit")
    x = b.conv("data", "conv1", 20, 5, pads=[0, 0, 0, 0])        # 20x24x24
    x = b.maxpool(x, "pool1", 2, 2)                                # 20x12x12
    x = b.conv(x, "conv2", 50, 5, pads=[0, 0, 0, 0])             # 50x8x8
    x = b.maxpool(x, "pool2", 2, 2)                                # 50x4x4
    x = b.flatten(x, "flatten")                                    # 800
    x = b.gemm(x, "fc1", 500)
    x = b.relu(x, "relu1")
    x = b.gemm(x, "fc2", 10, logit_std=2.0)
    x = b.softmax(x, "softmax")
    return b, b.finish([x], "Caffe LeNet MNIST as in Glow LeNetMnist / NXP AN13001")


def resnet8():
    """MLPerf Tiny image classification ResNet-8 (CIFAR-10). Keras 'same' padding."""
    b = Builder("resnet8", "input", [1, 3, 32, 32])
    x = b.conv("input", "conv1", 16, 3)
    x = b.bn(x, "conv1_bn")
    x = b.relu(x, "conv1_relu")
    size = 32
    for si, (c, s) in enumerate([(16, 1), (32, 2), (64, 2)], start=1):
        p = f"stage{si}"
        if s == 2:
            pb, pe = tf_same_pads(size, 3, 2)
            pads = [pb, pb, pe, pe]
            size //= 2
        else:
            pads = [1, 1, 1, 1]
        y = b.conv(x, p + "_conv1", c, 3, stride=s, pads=pads)
        y = b.bn(y, p + "_bn1")
        y = b.relu(y, p + "_relu1")
        y = b.conv(y, p + "_conv2", c, 3)
        y = b.bn(y, p + "_bn2")
        if s != 1:
            x = b.conv(x, p + "_shortcut", c, 1, stride=s, pads=[0, 0, 0, 0])
        x = b.add(x, y, p + "_add")
        x = b.relu(x, p + "_relu2")
    x = b.avgpool(x, "avgpool", (8, 8))
    x = b.flatten(x, "flatten")
    x = b.gemm(x, "fc", 10, logit_std=2.0)
    x = b.softmax(x, "softmax")
    return b, b.finish([x], "MLPerf Tiny IC ResNet-8 (CIFAR-10), NCHW")


def ds_cnn():
    """MLPerf Tiny keyword spotting DS-CNN (small), 49x10 MFCC input, 12 classes."""
    b = Builder("ds_cnn", "input", [1, 1, 49, 10])
    hb, he = tf_same_pads(49, 10, 2)
    wb, we = tf_same_pads(10, 4, 2)
    x = b.conv("input", "conv1", 64, (10, 4), stride=2, pads=[hb, wb, he, we])  # 64x25x5
    x = b.bn(x, "conv1_bn")
    x = b.relu(x, "conv1_relu")
    for i in range(1, 5):
        p = f"block{i}"
        x = b.conv(x, p + "_dw", 64, 3, group=64)
        x = b.bn(x, p + "_dw_bn")
        x = b.relu(x, p + "_dw_relu")
        x = b.conv(x, p + "_pw", 64, 1, pads=[0, 0, 0, 0])
        x = b.bn(x, p + "_pw_bn")
        x = b.relu(x, p + "_pw_relu")
    h, w = b.v(x).shape[2:]
    x = b.avgpool(x, "avgpool", (h, w))
    x = b.flatten(x, "flatten")
    x = b.gemm(x, "fc", 12, logit_std=2.0)
    x = b.softmax(x, "softmax")
    return b, b.finish([x], "MLPerf Tiny KWS DS-CNN small, NCHW [1,1,49,10]")


def mobilenet_v1_025():
    """MobileNetV1 alpha=0.25, 96x96 RGB, 2 classes (MLPerf Tiny visual wake words)."""
    b = Builder("mobilenet_v1_025", "input", [1, 3, 96, 96])
    size = 96

    def pads_for(stride):
        nonlocal size
        if stride == 1:
            return [1, 1, 1, 1]
        pb, pe = tf_same_pads(size, 3, 2)  # Keras: ZeroPadding2D(((0,1),(0,1)))
        size = -(-size // 2)
        return [pb, pb, pe, pe]

    x = b.conv("input", "conv1", 8, 3, stride=2, pads=pads_for(2), bias=False)
    x = b.bn(x, "conv1_bn")
    x = b.relu6(x, "conv1_relu6")
    cfg = [(16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2),
           (128, 1), (128, 1), (128, 1), (128, 1), (128, 1), (256, 2), (256, 1)]
    for i, (c, s) in enumerate(cfg, start=1):
        p = f"block{i}"
        cin = b.v(x).shape[1]
        x = b.conv(x, p + "_dw", cin, 3, stride=s, pads=pads_for(s), group=cin, bias=False)
        x = b.bn(x, p + "_dw_bn")
        x = b.relu6(x, p + "_dw_relu6")
        x = b.conv(x, p + "_pw", c, 1, pads=[0, 0, 0, 0], bias=False)
        x = b.bn(x, p + "_pw_bn")
        x = b.relu6(x, p + "_pw_relu6")
    x = b.gap(x, "gap")
    x = b.flatten(x, "flatten")
    x = b.gemm(x, "fc", 2, logit_std=0.75)
    x = b.softmax(x, "softmax")
    return b, b.finish([x], "MobileNetV1 0.25, 96x96, 2 classes (MLPerf Tiny VWW), NCHW")


def autoencoder():
    """MLPerf Tiny anomaly detection (ToyADMOS) FC autoencoder, 640 -> 8 -> 640."""
    b = Builder("autoencoder", "input", [1, 640], calib_batch=64)
    x = "input"
    dims = [("enc", 128)] * 4 + [("bottleneck", 8)] + [("dec", 128)] * 4
    count = {}
    for kind, d in dims:
        count[kind] = count.get(kind, 0) + 1
        p = kind if kind == "bottleneck" else f"{kind}{count[kind]}"
        x = b.gemm(x, p + "_fc", d)
        x = b.bn(x, p + "_bn")
        x = b.relu(x, p + "_relu")
    x = b.gemm(x, "output_fc", 640)
    return b, b.finish([x], "MLPerf Tiny AD FC autoencoder [1,640]")


def mobilenet_v2():
    """MobileNetV2 1.0, 224x224, 1000 classes (torchvision layout: conv bias-free, BN, ReLU6)."""
    b = Builder("mobilenet_v2", "input", [1, 3, 224, 224])
    x = b.conv("input", "conv1", 32, 3, stride=2, bias=False)
    x = b.bn(x, "conv1_bn")
    x = b.relu6(x, "conv1_relu6")
    cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
           (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
    for si, (t, c, n, s) in enumerate(cfg, start=1):
        for bi in range(1, n + 1):
            p = f"stage{si}_block{bi}"
            stride = s if bi == 1 else 1
            cin = b.v(x).shape[1]
            inp = x
            y = x
            if t != 1:
                y = b.conv(y, p + "_expand", cin * t, 1, pads=[0, 0, 0, 0], bias=False)
                y = b.bn(y, p + "_expand_bn")
                y = b.relu6(y, p + "_expand_relu6")
            hid = b.v(y).shape[1]
            y = b.conv(y, p + "_dw", hid, 3, stride=stride, group=hid, bias=False)
            y = b.bn(y, p + "_dw_bn")
            y = b.relu6(y, p + "_dw_relu6")
            y = b.conv(y, p + "_project", c, 1, pads=[0, 0, 0, 0], bias=False)
            y = b.bn(y, p + "_project_bn")
            if stride == 1 and cin == c:
                y = b.add(inp, y, p + "_add")
            x = y
    x = b.conv(x, "conv_last", 1280, 1, pads=[0, 0, 0, 0], bias=False)
    x = b.bn(x, "conv_last_bn")
    x = b.relu6(x, "conv_last_relu6")
    x = b.gap(x, "gap")
    x = b.flatten_torch_style(x, "flatten")
    x = b.gemm(x, "classifier", 1000, logit_std=2.0)
    return b, b.finish([x], "MobileNetV2 1.0 224x224, torchvision layout, NCHW, logits out")


# Branchy: the order in which the nodes are stored in the file is deliberately
# memory-poor (breadth-first: every consumer of fire1_relu -- including the
# 512 KiB incep_b_expand -- is run before any branch is finished). Running the
# big branch first (incep_b_expand -> incep_b_reduce) and then the small ones
# gives a much lower peak; see BRANCHY_GOOD_ORDER and check_models.py.
BRANCHY_GOOD_ORDER = [
    "stem_conv", "stem_relu",
    "fire1_squeeze", "fire1_expand1x1", "fire1_expand3x3", "fire1_concat", "fire1_relu",
    "incep_b_expand", "incep_b_reduce", "incep_a_conv1x1", "incep_c_conv3x3",
    "incep_d_pool", "incep_d_conv1x1", "incep_concat",
    "fire2_squeeze", "fire2_expand1x1", "fire2_expand3x3", "fire2_concat",
    "gap", "flatten", "fc", "softmax",
]
BRANCHY_FILE_ORDER = [  # what a FIFO Kahn/BFS topological sort would emit
    "stem_conv", "stem_relu",
    "fire1_squeeze", "fire1_expand1x1", "fire1_expand3x3", "fire1_concat", "fire1_relu",
    "incep_a_conv1x1", "incep_b_expand", "incep_c_conv3x3", "incep_d_pool",
    "incep_b_reduce", "incep_d_conv1x1", "incep_concat",
    "fire2_squeeze", "fire2_expand1x1", "fire2_expand3x3", "fire2_concat",
    "gap", "flatten", "fc", "softmax",
]


def branchy():
    """Fire + inception net whose branch order changes the peak live memory."""
    b = Builder("branchy", "data", [1, 8, 32, 32])
    x = b.conv("data", "stem_conv", 16, 3)                        # 16x32x32  64 KiB
    x = b.relu(x, "stem_relu")
    s = b.conv(x, "fire1_squeeze", 8, 1, pads=[0, 0, 0, 0])        # 8x32x32   32 KiB
    e1 = b.conv(s, "fire1_expand1x1", 32, 1, pads=[0, 0, 0, 0])    # 32x32x32 128 KiB
    e3 = b.conv(s, "fire1_expand3x3", 32, 3)                       # 32x32x32 128 KiB
    x = b.concat([e1, e3], "fire1_concat")                         # 64x32x32 256 KiB
    x = b.relu(x, "fire1_relu")
    a = b.conv(x, "incep_a_conv1x1", 16, 1, pads=[0, 0, 0, 0])     # 16ch      64 KiB
    bb = b.conv(x, "incep_b_expand", 128, 1, pads=[0, 0, 0, 0])    # 128ch    512 KiB (big)
    bb = b.conv(bb, "incep_b_reduce", 16, 1, pads=[0, 0, 0, 0])    # 16ch      64 KiB
    c = b.conv(x, "incep_c_conv3x3", 16, 3)                        # 16ch      64 KiB
    d = b.maxpool(x, "incep_d_pool", 3, 1, pads=(1, 1, 1, 1))      # 64ch     256 KiB
    d = b.conv(d, "incep_d_conv1x1", 16, 1, pads=[0, 0, 0, 0])     # 16ch      64 KiB
    x = b.concat([a, bb, c, d], "incep_concat")                    # 64ch     256 KiB
    s = b.conv(x, "fire2_squeeze", 16, 1, pads=[0, 0, 0, 0])
    e1 = b.conv(s, "fire2_expand1x1", 32, 1, pads=[0, 0, 0, 0])
    e3 = b.conv(s, "fire2_expand3x3", 32, 3)
    x = b.concat([e1, e3], "fire2_concat")
    x = b.gap(x, "gap")
    x = b.flatten(x, "flatten")
    x = b.gemm(x, "fc", 10, logit_std=2.0)
    x = b.softmax(x, "softmax")
    doc = ("Scheduling test net. Node order in this file is deliberately memory-poor "
           "(breadth-first over the inception branches); a memory-aware scheduler "
           "should run incep_b_expand/incep_b_reduce first.")
    return b, b.finish([x], doc, order=BRANCHY_FILE_ORDER)


def _scaled(c, width):
    """Channels at a width multiplier, a multiple of 8 (torchvision's _make_divisible)."""
    v = c * width
    n = max(8, int(v + 4) // 8 * 8)
    return n + 8 if n < 0.9 * v else n


def efficientnet_b0(name="efficientnet_b0", res=224, width=1.0, classes=1000):
    """EfficientNet-B0 (torchvision layout): conv bias-free + BN + SiLU written as
    x*Sigmoid(x), MBConv blocks with squeeze-and-excitation (squeeze = block input / 4)."""
    b = Builder(name, "input", [1, 3, res, res])
    x = b.conv("input", "stem", _scaled(32, width), 3, stride=2, bias=False)
    x = b.silu(b.bn(x, "stem_bn"), "stem_silu")
    cfg = [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
           (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]
    for si, (t, k, s, c, n) in enumerate(cfg, start=1):
        for bi in range(1, n + 1):
            p = f"stage{si}_block{bi}"
            stride = s if bi == 1 else 1
            cin, cout = b.v(x).shape[1], _scaled(c, width)
            y = x
            if t != 1:
                y = b.conv(y, p + "_expand", cin * t, 1, pads=[0, 0, 0, 0], bias=False)
                y = b.silu(b.bn(y, p + "_expand_bn"), p + "_expand_silu")
            hid = b.v(y).shape[1]
            y = b.conv(y, p + "_dw", hid, k, stride=stride, group=hid, bias=False)
            y = b.silu(b.bn(y, p + "_dw_bn"), p + "_dw_silu")
            y = b.squeeze_excite(y, p + "_se", max(1, cin // 4), b.silu, b.sigmoid)
            y = b.conv(y, p + "_project", cout, 1, pads=[0, 0, 0, 0], bias=False)
            y = b.bn(y, p + "_project_bn")
            if stride == 1 and cin == cout:
                y = b.add(x, y, p + "_add")
            x = y
    x = b.conv(x, "head", _scaled(1280, width), 1, pads=[0, 0, 0, 0], bias=False)
    x = b.silu(b.bn(x, "head_bn"), "head_silu")
    x = b.flatten(b.gap(x, "gap"), "flatten")
    x = b.gemm(x, "classifier", classes, logit_std=2.0)
    return b, b.finish([x], f"EfficientNet-B0 width {width} {res}x{res}, torchvision layout, NCHW, logits out")


# (kernel, expanded, out, SE, hard-swish, stride), torchvision's _mobilenet_v3_conf
MOBILENET_V3_SMALL = [(3, 16, 16, True, False, 2), (3, 72, 24, False, False, 2), (3, 88, 24, False, False, 1),
                      (5, 96, 40, True, True, 2), (5, 240, 40, True, True, 1), (5, 240, 40, True, True, 1),
                      (5, 120, 48, True, True, 1), (5, 144, 48, True, True, 1), (5, 288, 96, True, True, 2),
                      (5, 576, 96, True, True, 1), (5, 576, 96, True, True, 1)]
MOBILENET_V3_LARGE = [(3, 16, 16, False, False, 1), (3, 64, 24, False, False, 2), (3, 72, 24, False, False, 1),
                      (5, 72, 40, True, False, 2), (5, 120, 40, True, False, 1), (5, 120, 40, True, False, 1),
                      (3, 240, 80, False, True, 2), (3, 200, 80, False, True, 1), (3, 184, 80, False, True, 1),
                      (3, 184, 80, False, True, 1), (3, 480, 112, True, True, 1), (3, 672, 112, True, True, 1),
                      (5, 672, 160, True, True, 2), (5, 960, 160, True, True, 1), (5, 960, 160, True, True, 1)]


def mobilenet_v3_small(name="mobilenet_v3_small", res=224, width=1.0, classes=1000,
                       cfg=MOBILENET_V3_SMALL, last_channel=1024, doc_name="MobileNetV3-small"):
    """MobileNetV3-small (torchvision layout; -large with cfg=MOBILENET_V3_LARGE,
    last_channel=1280): HardSwish written as x*HardSigmoid(x) (opset < 14), ReLU in
    the early blocks, SE with ReLU and HardSigmoid."""
    b = Builder(name, "input", [1, 3, res, res])
    x = b.conv("input", "stem", _scaled(16, width), 3, stride=2, bias=False)
    x = b.hard_swish(b.bn(x, "stem_bn"), "stem_hswish")
    for bi, (k, e, c, se, hs, stride) in enumerate(cfg, start=1):
        p = f"block{bi}"
        act = b.hard_swish if hs else b.relu
        cin, hid, cout = b.v(x).shape[1], _scaled(e, width), _scaled(c, width)
        y = x
        if hid != cin:
            y = b.conv(y, p + "_expand", hid, 1, pads=[0, 0, 0, 0], bias=False)
            y = act(b.bn(y, p + "_expand_bn"), p + "_expand_act")
        y = b.conv(y, p + "_dw", hid, k, stride=stride, group=hid, bias=False)
        y = act(b.bn(y, p + "_dw_bn"), p + "_dw_act")
        if se:
            y = b.squeeze_excite(y, p + "_se", _scaled(hid // 4, 1.0), b.relu, b.hard_sigmoid)
        y = b.conv(y, p + "_project", cout, 1, pads=[0, 0, 0, 0], bias=False)
        y = b.bn(y, p + "_project_bn")
        if stride == 1 and cin == cout:
            y = b.add(x, y, p + "_add")
        x = y
    x = b.conv(x, "head", 6 * b.v(x).shape[1], 1, pads=[0, 0, 0, 0], bias=False)
    x = b.hard_swish(b.bn(x, "head_bn"), "head_hswish")
    x = b.flatten(b.gap(x, "gap"), "flatten")
    x = b.gemm(x, "classifier_fc1", last_channel)
    x = b.hard_swish(x, "classifier_hswish")
    x = b.gemm(x, "classifier", classes, logit_std=2.0)
    return b, b.finish([x], f"{doc_name} width {width} {res}x{res}, torchvision layout, NCHW, logits out")


def mnasnet1_0():
    """MnasNet 1.0 (torchvision `mnasnet1_0` layout): conv bias-free + BN + ReLU, inverted
    residuals with 3x3 and 5x5 depthwise convolutions, no squeeze-and-excitation."""
    b = Builder("mnasnet1_0", "input", [1, 3, 224, 224])
    x = b.relu(b.bn(b.conv("input", "stem", 32, 3, stride=2, bias=False), "stem_bn"), "stem_relu")
    x = b.relu(b.bn(b.conv(x, "sep_dw", 32, 3, group=32, bias=False), "sep_dw_bn"), "sep_dw_relu")
    x = b.bn(b.conv(x, "sep_project", 16, 1, pads=[0, 0, 0, 0], bias=False), "sep_project_bn")
    # (out, kernel, stride, expansion, repeats), torchvision's _stack calls
    cfg = [(24, 3, 2, 3, 3), (40, 5, 2, 3, 3), (80, 5, 2, 6, 3), (96, 3, 1, 6, 2),
           (192, 5, 2, 6, 4), (320, 3, 1, 6, 1)]
    for si, (c, k, s, t, n) in enumerate(cfg, start=1):
        for bi in range(1, n + 1):
            p = f"stage{si}_block{bi}"
            stride = s if bi == 1 else 1
            cin = b.v(x).shape[1]
            y = b.conv(x, p + "_expand", cin * t, 1, pads=[0, 0, 0, 0], bias=False)
            y = b.relu(b.bn(y, p + "_expand_bn"), p + "_expand_relu")
            y = b.conv(y, p + "_dw", cin * t, k, stride=stride, group=cin * t, bias=False)
            y = b.relu(b.bn(y, p + "_dw_bn"), p + "_dw_relu")
            y = b.bn(b.conv(y, p + "_project", c, 1, pads=[0, 0, 0, 0], bias=False), p + "_project_bn")
            if stride == 1 and cin == c:
                y = b.add(x, y, p + "_add")
            x = y
    x = b.conv(x, "head", 1280, 1, pads=[0, 0, 0, 0], bias=False)
    x = b.relu(b.bn(x, "head_bn"), "head_relu")
    x = b.flatten(b.gap(x, "gap"), "flatten")
    x = b.gemm(x, "classifier", 1000, logit_std=2.0)
    return b, b.finish([x], "MnasNet 1.0 224x224, torchvision layout, NCHW, logits out")


def resnet18():
    """ResNet-18 (torchvision `resnet18` layout): 7x7/2 stem + BN + ReLU, 3x3/2 max pool,
    four stages of two basic blocks (64, 128, 256, 512), 1x1/2 conv + BN projection
    shortcuts, global average pool, fc 1000."""
    b = Builder("resnet18", "input", [1, 3, 224, 224])
    x = b.relu(b.bn(b.conv("input", "stem", 64, 7, stride=2, bias=False), "stem_bn"), "stem_relu")
    x = b.maxpool(x, "stem_pool", 3, 2, pads=(1, 1, 1, 1))
    for si, c in enumerate([64, 128, 256, 512], start=1):
        for bi in range(1, 3):
            p = f"layer{si}_block{bi}"
            stride = 2 if si > 1 and bi == 1 else 1
            y = b.relu(b.bn(b.conv(x, p + "_conv1", c, 3, stride=stride, bias=False), p + "_bn1"), p + "_relu1")
            y = b.bn(b.conv(y, p + "_conv2", c, 3, bias=False), p + "_bn2")
            if stride != 1 or b.v(x).shape[1] != c:
                x = b.bn(b.conv(x, p + "_down", c, 1, stride=stride, pads=[0, 0, 0, 0], bias=False),
                         p + "_down_bn")
            x = b.relu(b.add(y, x, p + "_add"), p + "_relu2")
    x = b.flatten(b.gap(x, "gap"), "flatten")
    x = b.gemm(x, "fc", 1000, logit_std=2.0)
    return b, b.finish([x], "ResNet-18 224x224, torchvision layout, NCHW, logits out")


def squeezenet1_1():
    """SqueezeNet 1.1 (torchvision `squeezenet1_1` layout): 3x3/2 conv 64 + ReLU, fire
    modules (1x1 squeeze + ReLU, 1x1 and 3x3 expands + ReLU, Concat) between 3x3/2 max
    pools (ceil_mode gives the same sizes at 224), 1x1 conv 1000 + ReLU, global average
    pool."""
    b = Builder("squeezenet1_1", "input", [1, 3, 224, 224])
    x = b.relu(b.conv("input", "conv1", 64, 3, stride=2, pads=[0, 0, 0, 0]), "conv1_relu")

    def fire(x, p, squeeze, expand):
        s = b.relu(b.conv(x, p + "_squeeze", squeeze, 1, pads=[0, 0, 0, 0]), p + "_squeeze_relu")
        e1 = b.relu(b.conv(s, p + "_expand1x1", expand, 1, pads=[0, 0, 0, 0]), p + "_expand1x1_relu")
        e3 = b.relu(b.conv(s, p + "_expand3x3", expand, 3), p + "_expand3x3_relu")
        return b.concat([e1, e3], p + "_concat")

    for i, layer in enumerate(["pool", (16, 64), (16, 64), "pool", (32, 128), (32, 128), "pool",
                               (48, 192), (48, 192), (64, 256), (64, 256)], start=1):
        x = b.maxpool(x, f"pool{i}", 3, 2) if layer == "pool" else fire(x, f"fire{i}", *layer)
    x = b.relu(b.conv(x, "classifier", 1000, 1, pads=[0, 0, 0, 0], std=0.02), "classifier_relu")
    x = b.flatten(b.gap(x, "gap"), "flatten")
    return b, b.finish([x], "SqueezeNet 1.1 224x224, torchvision layout, NCHW, scores out")


MODELS = {
    "lenet": lenet,
    "resnet8": resnet8,
    "ds_cnn": ds_cnn,
    "mobilenet_v1_025": mobilenet_v1_025,
    "autoencoder": autoencoder,
    "mobilenet_v2": mobilenet_v2,
    "branchy": branchy,
    # Small versions for the tests (whole model in seconds on the host); the
    # full ones (21 MB and 10 MB) are built for bench/memory only.
    "efficientnet_b0_tiny": lambda: efficientnet_b0("efficientnet_b0_tiny", 64, 0.25, 10),
    "mobilenet_v3_small_tiny": lambda: mobilenet_v3_small("mobilenet_v3_small_tiny", 64, 0.25, 10),
    "efficientnet_b0": efficientnet_b0,
    "mobilenet_v3_small": mobilenet_v3_small,
    "mnasnet1_0": mnasnet1_0,
    "mobilenet_v3_large": lambda: mobilenet_v3_small("mobilenet_v3_large", cfg=MOBILENET_V3_LARGE,
                                                     last_channel=1280, doc_name="MobileNetV3-large"),
    "resnet18": resnet18,
    "squeezenet1_1": squeezenet1_1,
}
# Built only when named with --only (bench/memory's bench_models target), so
# the default build and CI do not write 140 MB more.
BENCH_ONLY = {"efficientnet_b0", "mobilenet_v3_small", "mnasnet1_0", "mobilenet_v3_large", "resnet18",
              "squeezenet1_1"}

LENET_ALIGNED_WEIGHT_BYTES = 1_724_608


def align(n, a=64):
    return (n + a - 1) // a * a


def param_count(model):
    return sum(int(np.prod(t.dims)) for t in model.graph.initializer)


def weight_bytes(model):
    return sum(numpy_helper.to_array(t).nbytes for t in model.graph.initializer)


def validate(model, builder=None):
    """checker + strict shape inference. Every node output must get a fully static
    inferred shape, except the Reshape at the end of a PyTorch-style flatten chain
    (onnx 1.12 cannot see through Shape->Gather->...; folding it is the compiler's
    job). If the builder is given, inferred shapes must equal the eager shapes."""
    onnx.checker.check_model(model)
    inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    known = {vi.name: vi for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    unknown_ok = {n.output[0] for n in model.graph.node
                  if n.op_type == "Reshape" and n.input[1] not in {t.name for t in model.graph.initializer}}
    for n in inferred.graph.node:
        for o in n.output:
            vi = known.get(o)
            tt = vi.type.tensor_type if vi is not None else None
            if tt is None or not tt.HasField("shape"):
                assert o in unknown_ok, f"no inferred shape for {o}"
                continue
            dims = tt.shape.dim
            assert all(d.HasField("dim_value") for d in dims), f"non-static shape for {o}"
            if builder is not None and n.op_type not in ("Shape", "Constant", "Gather", "Unsqueeze") \
                    and not (n.op_type == "Concat" and tt.elem_type == TensorProto.INT64):
                want = [1] + list(builder.v(o).shape[1:])
                got = [d.dim_value for d in dims]
                assert got == want, f"{o}: inferred shape {got} != eager shape {want}"
    names = [n.name for n in model.graph.node]
    assert all(names) and len(set(names)) == len(names), "node names must be unique and non-empty"
    return inferred


def check_lenet(model):
    inits = model.graph.initializer
    assert len(inits) == 8, f"lenet must have exactly 8 initializers, has {len(inits)}"
    total = sum(align(numpy_helper.to_array(t).nbytes) for t in inits)
    assert total == LENET_ALIGNED_WEIGHT_BYTES, f"lenet 64-aligned weight bytes {total}"
    return total


def build(name):
    b, model = MODELS[name]()
    validate(model, b)
    if name == "lenet":
        check_lenet(model)
    return b, model


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--only", default="", help="comma-separated model names")
    args = ap.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or [n for n in MODELS if n not in BENCH_ONLY]
    bad = [n for n in names if n not in MODELS]
    if bad:
        ap.error(f"unknown model(s) {bad}; known: {', '.join(MODELS)}")
    os.makedirs(args.out, exist_ok=True)
    for name in names:
        b, model = build(name)
        path = os.path.join(args.out, name + ".onnx")
        data = model.SerializeToString()
        with open(path, "wb") as f:
            f.write(data)
        np.save(os.path.join(args.out, name + ".input.npy"), b.input_value.astype(np.float32))
        extra = ""
        if name == "lenet":
            extra = f" aligned64_weight_bytes={check_lenet(model)}"
        print(f"{name:18s} nodes={len(model.graph.node):4d} params={param_count(model):9d} "
              f"weight_bytes={weight_bytes(model):10d} file_bytes={len(data):10d}{extra}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
