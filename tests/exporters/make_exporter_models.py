#!/usr/bin/python3
"""Pre-quantized models as PyTorch and onnxruntime's quantizer write them, for
tests/exporters (compare_exporters.py runs them against onnxruntime).

PyTorch is not a dependency here, so the graphs are built with onnx.helper,
node for node what the exporters emit (torch/onnx/symbolic_helper.py:
quantize_helper, dequantize_helper, requantize_bias_helper; onnxruntime's
quantization/operators/*.py):

  pt_eager   torch.onnx.export (opset 13, constant folding on) of an eager-mode
             quantized model (QuantStub, Conv+ReLU, Conv, FloatFunctional.add,
             AdaptiveAvgPool, flatten, Linear, DeQuantStub), fbgemm qconfig
             (per-channel int8 weights, uint8 activations). Each quantized
             tensor is read through a no-op Cast(to=UINT8) before its
             DequantizeLinear; each bias's zero point is
             ConstantOfShape(int32 0) -> Cast(to=INT32) (torch's folding leaves
             ConstantOfShape); Linear is Gemm(x, Transpose(DQ(W)), DQ(b)).
  pt_fx      the same network as an FX-mode export without torch's constant
             folding: scales and zero points are initializers cast in the graph
             (Cast(scale, FLOAT), Cast(int64 zero point, UINT8)), each bias is
             quantized in the graph (Cast(Div(b, Mul(w_scale, x_scale)), INT32))
             with its zero point from Shape -> ConstantOfShape -> Cast.
  ort_qop_u8 onnxruntime quantize_static(quant_format=QOperator), uint8
             activations, per-channel int8 weights: QLinearConv, com.microsoft
             QLinearLeakyRelu, QLinearAdd, QLinearMul, QLinearSigmoid,
             QLinearConcat, QLinearAveragePool, QLinearGlobalAveragePool.
  ort_qop_s8 the same with int8 activations (QuantType.QInt8).
  ort_qop_pool_u8  QLinearConv -> MaxPool reading the uint8 tensor itself ->
             QLinearConv (onnxruntime's direct 8-bit operators).
  ort_matmul3d  QLinearMatMul of a 3-D activation by a constant (attention's
             projection; onnxruntime's quantizer emits it for a Linear on
             [batch, tokens, features]).
  ort_attention  QLinearMatMul of two activations, 4-D (attention's scores
             X x Transpose(X) on the uint8 tensors, then scores x X).

Writes NAME.onnx and NAME.input.npy (4 samples stacked on the first axis).
Only onnx and numpy.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SAMPLES = 4
RNG = np.random.default_rng(32)


# --- float reference (numpy), for the calibration ranges ---------------------
def conv(x, w, b, pad):
    n, c, h, wd = x.shape
    o, ci, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, o, oh, ow), np.float32)
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return y + b.reshape(1, -1, 1, 1)


def u8_params(lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = np.float32((hi - lo) / 255.0)
    return scale, np.uint8(np.clip(round(-lo / scale), 0, 255))


def s8_params(lo, hi):
    scale, zp = u8_params(lo, hi)
    return scale, np.int8(int(zp) - 128)


def weight_per_channel(w):
    """Symmetric int8 per output channel (fbgemm's per_channel_symmetric)."""
    m = np.abs(w.reshape(w.shape[0], -1)).max(axis=1)
    scale = (m / 127.0).astype(np.float32)
    q = np.clip(np.round(w / scale.reshape(-1, *[1] * (w.ndim - 1))), -128, 127).astype(np.int8)
    return q, scale


class G:
    """A graph under construction."""

    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def name(self, base):
        self.n += 1
        return f"{base}_{self.n}"

    def init(self, base, array):
        name = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(self, op_type, inputs, base=None, n_out=1, domain=None, **attrs):
        node_name = self.name(base or op_type)
        outs = [node_name + ("_out" if i == 0 else f"_out{i}") for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, node_name, domain=domain,
                                           **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self, name, inp, shape, out, opsets, doc):
        graph = helper.make_graph(
            self.nodes, name, [helper.make_tensor_value_info(inp, TensorProto.FLOAT, shape)],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, None)], self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                              producer_name="bundlefit tests/exporters", doc_string=doc)
        m.ir_version = 8
        return m


# --- the network both PyTorch flavours export --------------------------------
def torch_net():
    """Weights and calibration ranges of QuantStub -> Conv3x3+ReLU (c1) ->
    Conv1x1 (c2) -> add(c1, c2) -> AdaptiveAvgPool(1) -> flatten -> Linear(10)."""
    w1 = RNG.standard_normal((8, 3, 3, 3)).astype(np.float32) * 0.3
    b1 = RNG.standard_normal(8).astype(np.float32) * 0.1
    w2 = RNG.standard_normal((8, 8, 1, 1)).astype(np.float32) * 0.3
    b2 = RNG.standard_normal(8).astype(np.float32) * 0.1
    wl = RNG.standard_normal((10, 8)).astype(np.float32) * 0.5
    bl = RNG.standard_normal(10).astype(np.float32) * 0.1
    calib = RNG.standard_normal((8, 3, 8, 8)).astype(np.float32)
    t0 = calib
    t1 = np.maximum(conv(t0, w1, b1, 1), 0)
    t2 = conv(t1, w2, b2, 0)
    t3 = t1 + t2
    t4 = t3.mean(axis=(2, 3))
    t5 = t4 @ wl.T + bl
    ranges = [(float(t.min()), float(t.max())) for t in (t0, t1, t2, t3, t5)]
    return dict(w1=w1, b1=b1, w2=w2, b2=b2, wl=wl, bl=bl, ranges=ranges)


def pytorch_model(fx):
    """fx=False: the eager export (torch's constant folding on); fx=True: the
    FX export without constant folding (see the module docstring)."""
    net = torch_net()
    g = G()
    act = [u8_params(*r) for r in net["ranges"]]

    def scale_zp(i):
        s, z = act[i]
        if not fx:
            return g.init("scale", np.float32(s)), g.init("zero_point", np.uint8(z))
        # FX: the GraphModule's _scale_N / _zero_point_N buffers, cast in the graph.
        s_in = g.init("_scale", np.array(s, np.float32))
        z_in = g.init("_zero_point", np.array(int(z), np.int64))
        return (g.op("Cast", [s_in], to=TensorProto.FLOAT),
                g.op("Cast", [z_in], to=TensorProto.UINT8))

    def quantize(x, i):  # quantize_helper
        s, z = scale_zp(i)
        return g.op("QuantizeLinear", [x, s, z]), (s, z)

    def dequantize(q, params):  # dequantize_helper: Cast(value), Cast(scale), Cast(zp)
        s, z = params
        value = g.op("Cast", [q], to=TensorProto.UINT8)
        if fx:
            s = g.op("Cast", [s], to=TensorProto.FLOAT)
            z = g.op("Cast", [z], to=TensorProto.UINT8)
        return g.op("DequantizeLinear", [value, s, z])

    def weight(w):
        q, s = weight_per_channel(w)
        return (g.op("DequantizeLinear", [g.init("weight", q), g.init("w_scale", s),
                                          g.init("w_zero_point", np.zeros(len(s), np.int8))],
                     axis=0), s)

    def bias(b, x_scale_value, x_scale, w_scale):  # requantize_bias_helper + dequantize_helper
        if not fx:
            bs = (w_scale * np.float32(x_scale_value)).astype(np.float32)
            q = np.trunc(b / bs).astype(np.int32)  # Cast(Div(b, bs), INT32) folded by torch
            bs_name = g.init("bias_scale", bs)
            zp = g.op("ConstantOfShape", [g.init("bias_scale_shape", np.array([len(bs)], np.int64))],
                      value=helper.make_tensor("value", TensorProto.INT32, [1], [0]))
            zp = g.op("Cast", [zp], to=TensorProto.INT32)
            return g.op("DequantizeLinear", [g.init("q_bias", q), bs_name, zp], axis=0)
        bs = g.op("Mul", [g.init("w_scale_f", w_scale), x_scale])
        zp = g.op("ConstantOfShape", [g.op("Shape", [bs])],
                  value=helper.make_tensor("value", TensorProto.INT32, [1], [0]))
        q = g.op("Cast", [g.op("Div", [g.init("bias", b), bs])], to=TensorProto.INT32)
        return g.op("DequantizeLinear", [g.op("Cast", [q], to=TensorProto.INT32),
                                         g.op("Cast", [bs], to=TensorProto.FLOAT),
                                         g.op("Cast", [zp], to=TensorProto.INT32)], axis=0)

    q0, p0 = quantize("input", 0)
    x = dequantize(q0, p0)
    w, ws = weight(net["w1"])
    y = g.op("Conv", [x, w, bias(net["b1"], act[0][0], p0[0], ws)], kernel_shape=[3, 3],
             pads=[1, 1, 1, 1], strides=[1, 1], dilations=[1, 1], group=1)
    q1, p1 = quantize(g.op("Relu", [y]), 1)
    x = dequantize(q1, p1)
    w, ws = weight(net["w2"])
    y = g.op("Conv", [x, w, bias(net["b2"], act[1][0], p1[0], ws)], kernel_shape=[1, 1],
             pads=[0, 0, 0, 0], strides=[1, 1], dilations=[1, 1], group=1)
    q2, p2 = quantize(y, 2)
    q3, p3 = quantize(g.op("Add", [dequantize(q1, p1), dequantize(q2, p2)]), 3)
    # @quantized_args ops requantize with their input's parameters.
    q4, _ = g.op("QuantizeLinear", [g.op("GlobalAveragePool", [dequantize(q3, p3)]), *p3]), None
    q5 = g.op("QuantizeLinear", [g.op("Flatten", [dequantize(q4, p3)], axis=1), *p3])
    x = dequantize(q5, p3)
    w, ws = weight(net["wl"])
    wt = g.op("Transpose", [w], perm=[1, 0])
    y = g.op("Gemm", [x, wt, bias(net["bl"], act[3][0], p3[0], ws)], alpha=1.0, beta=1.0)
    q6, p6 = quantize(y, 4)
    out = dequantize(q6, p6)
    name = "pt_fx" if fx else "pt_eager"
    doc = ("PyTorch FX quantized export (no constant folding)" if fx else
           "PyTorch eager quantized export (opset 13)")
    return g.model(name, "input", [1, 3, 8, 8], out, [("", 13)], doc), act[4][0]


# --- onnxruntime's QOperator format ------------------------------------------
def qlinear_conv(g, qp, x, i, o, w, b, group):
    """QLinearConv from activation qp[i] to qp[o] ((scale name, zero point
    name, scale) each): per-channel int8 weights, int32 bias, same padding."""
    q, s = weight_per_channel(w)
    bias = np.round(b / (s * np.float32(qp[i][2]))).astype(np.int32)
    k = w.shape[2]
    return g.op("QLinearConv", [x, qp[i][0], qp[i][1], g.init("w", q), g.init("w_scale", s),
                                g.init("w_zero_point", np.zeros(len(s), np.int8)),
                                qp[o][0], qp[o][1], g.init("bias", bias)],
                kernel_shape=[k, k], pads=[k // 2] * 4, group=group)


def ort_qop_model(signed, to_mul=False):
    """QuantizeLinear -> QLinearConv -> QLinearLeakyRelu -> QLinearConv (dw) ->
    QLinearAdd -> QLinearSigmoid, QLinearMul -> QLinearConcat ->
    QLinearAveragePool -> QLinearGlobalAveragePool -> QLinearConv 1x1 -> DQ.
    to_mul: the same model ending after QLinearMul (NAME_to_mul), the part
    that is exact today (mixed-scale Concat is not yet)."""
    params = s8_params if signed else u8_params
    zdt = np.int8 if signed else np.uint8
    w1 = RNG.standard_normal((6, 3, 3, 3)).astype(np.float32) * 0.3
    b1 = RNG.standard_normal(6).astype(np.float32) * 0.1
    w2 = RNG.standard_normal((6, 1, 3, 3)).astype(np.float32) * 0.3
    b2 = RNG.standard_normal(6).astype(np.float32) * 0.1
    w3 = RNG.standard_normal((10, 12, 1, 1)).astype(np.float32) * 0.3
    b3 = RNG.standard_normal(10).astype(np.float32) * 0.1
    calib = RNG.standard_normal((8, 3, 8, 8)).astype(np.float32)

    def dwconv(x, w, b):
        return np.concatenate([conv(x[:, c:c + 1], w[c:c + 1], b[c:c + 1], 1)
                               for c in range(x.shape[1])], axis=1)
    t0 = calib
    t1 = conv(t0, w1, b1, 1)
    t2 = np.where(t1 > 0, t1, 0.1 * t1)
    t3 = dwconv(t2, w2, b2)
    t4 = t2 + t3
    t5 = 1 / (1 + np.exp(-t4))
    t6 = t4 * t5
    t7 = np.concatenate([t5, t6], axis=1)
    t8 = 0.25 * (t7[:, :, 0::2, 0::2] + t7[:, :, 1::2, 0::2] + t7[:, :, 0::2, 1::2] +
                 t7[:, :, 1::2, 1::2])
    t9 = t8.mean(axis=(2, 3), keepdims=True)
    t10 = conv(t9, w3, b3, 0)
    g = G()
    qp = []
    for t in (t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10):
        s, z = params(float(t.min()), float(t.max()))
        qp.append((g.init("scale", np.float32(s)), g.init("zero_point", zdt(z)), s))
    ms = "com.microsoft"

    def qconv(x, i, o, w, b, group):
        return qlinear_conv(g, qp, x, i, o, w, b, group)

    x = g.op("QuantizeLinear", ["input", qp[0][0], qp[0][1]])
    x1 = qconv(x, 0, 1, w1, b1, 1)
    x2 = g.op("QLinearLeakyRelu", [x1, *qp[1][:2], *qp[2][:2]], domain=ms, alpha=0.1)
    x3 = qconv(x2, 2, 3, w2, b2, 6)
    x4 = g.op("QLinearAdd", [x2, *qp[2][:2], x3, *qp[3][:2], *qp[4][:2]], domain=ms)
    x5 = g.op("QLinearSigmoid", [x4, *qp[4][:2], *qp[5][:2]], domain=ms)
    x6 = g.op("QLinearMul", [x4, *qp[4][:2], x5, *qp[5][:2], *qp[6][:2]], domain=ms)
    if to_mul:
        out = g.op("DequantizeLinear", [x6, qp[6][0], qp[6][1]])
        name = "ort_qop_s8_to_mul" if signed else "ort_qop_u8_to_mul"
        return (g.model(name, "input", [1, 3, 8, 8], out, [("", 13), (ms, 1)],
                        "onnxruntime quantize_static QOperator format"), qp[6][2])
    x7 = g.op("QLinearConcat", [*qp[7][:2], x5, *qp[5][:2], x6, *qp[6][:2]], domain=ms, axis=1)
    x8 = g.op("QLinearAveragePool", [x7, *qp[7][:2], *qp[8][:2]], domain=ms,
              kernel_shape=[2, 2], strides=[2, 2])
    x9 = g.op("QLinearGlobalAveragePool", [x8, *qp[8][:2], *qp[9][:2]], domain=ms,
              channels_last=0)
    x10 = qconv(x9, 9, 10, w3, b3, 1)
    out = g.op("DequantizeLinear", [x10, qp[10][0], qp[10][1]])
    name = "ort_qop_s8" if signed else "ort_qop_u8"
    return (g.model(name, "input", [1, 3, 8, 8], out, [("", 13), (ms, 1)],
                    "onnxruntime quantize_static QOperator format"), qp[10][2])


def ort_qop_pool_model():
    """onnxruntime's QOperator format lets MaxPool read the uint8 tensor
    itself (its "direct 8-bit" operators; so do Reshape, Transpose...):
    QuantizeLinear -> QLinearConv -> MaxPool (uint8) -> QLinearConv 1x1 -> DQ."""
    w1 = RNG.standard_normal((6, 3, 3, 3)).astype(np.float32) * 0.3
    b1 = RNG.standard_normal(6).astype(np.float32) * 0.1
    w2 = RNG.standard_normal((4, 6, 1, 1)).astype(np.float32) * 0.3
    b2 = RNG.standard_normal(4).astype(np.float32) * 0.1
    calib = RNG.standard_normal((8, 3, 8, 8)).astype(np.float32)
    t1 = conv(calib, w1, b1, 1)
    t2 = t1.reshape(8, 6, 4, 2, 4, 2).max(axis=(3, 5))
    t3 = conv(t2, w2, b2, 0)
    g = G()
    qp = []
    for t in (calib, t1, t3):
        sc, z = u8_params(float(t.min()), float(t.max()))
        qp.append((g.init("scale", np.float32(sc)), g.init("zero_point", np.uint8(z)), sc))

    def qconv(x, i, o, w, b):
        return qlinear_conv(g, qp, x, i, o, w, b, 1)
    x = g.op("QuantizeLinear", ["input", qp[0][0], qp[0][1]])
    x = qconv(x, 0, 1, w1, b1)
    x = g.op("MaxPool", [x], kernel_shape=[2, 2], strides=[2, 2])
    x = qconv(x, 1, 2, w2, b2)
    out = g.op("DequantizeLinear", [x, qp[2][0], qp[2][1]])
    return (g.model("ort_qop_pool_u8", "input", [1, 3, 8, 8], out, [("", 13)],
                    "onnxruntime QOperator format, MaxPool on uint8"), qp[2][2])


def ort_matmul3d_model():
    """A Linear on [batch, tokens, features] as quantize_static writes it:
    QLinearMatMul of the 3-D activation by a constant, then the bias as
    com.microsoft QLinearAdd."""
    w = RNG.standard_normal((16, 12)).astype(np.float32) * 0.3
    b = RNG.standard_normal(12).astype(np.float32) * 0.1
    calib = RNG.standard_normal((8, 5, 16)).astype(np.float32)
    y = calib @ w
    g = G()
    si, zi = u8_params(float(calib.min()), float(calib.max()))
    sm, zm = u8_params(float(y.min()), float(y.max()))
    sb, zb = u8_params(float(b.min()), float(b.max()))
    so, zo = u8_params(float((y + b).min()), float((y + b).max()))
    ws = np.float32(np.abs(w).max() / 127.0)  # per tensor, as the quantizer's default
    q = np.clip(np.round(w / ws), -127, 127).astype(np.int8)
    bq = np.clip(np.round(b / sb) + int(zb), 0, 255).astype(np.uint8)
    x = g.op("QuantizeLinear", ["input", g.init("x_scale", si), g.init("x_zero_point", zi)])
    m = g.op("QLinearMatMul", [x, g.init("x_scale", si), g.init("x_zero_point", zi),
                               g.init("w", q), g.init("w_scale", ws),
                               g.init("w_zero_point", np.int8(0)),
                               g.init("y_scale", sm), g.init("y_zero_point", zm)], base="attn_proj")
    yq = g.op("QLinearAdd", [m, g.init("m_scale", sm), g.init("m_zero_point", zm),
                             g.init("b", bq), g.init("b_scale", sb), g.init("b_zero_point", zb),
                             g.init("y_scale", so), g.init("y_zero_point", zo)],
              base="attn_proj_bias", domain="com.microsoft")
    out = g.op("DequantizeLinear", [yq, g.init("y_scale", so), g.init("y_zero_point", zo)])
    return (g.model("ort_matmul3d", "input", [1, 5, 16], out, [("", 13), ("com.microsoft", 1)],
                    "QLinearMatMul of a 3-D activation, QLinearAdd bias"), so)


def ort_dynamic_model():
    """quantize_dynamic of a Linear: DynamicQuantizeLinear -> MatMulInteger
    (int8 weights, per tensor) -> Cast -> Mul(., Mul(x_scale, w_scale)) ->
    Add(bias). bundlefit computes it in float, so the bound is not 1 LSB of an
    int8 output but the product's change from x's 8-bit rounding: the "output
    scale" written is max over inputs of x_scale / 2 * max_c sum_k |W[k, c]|."""
    w = RNG.standard_normal((16, 12)).astype(np.float32) * 0.3
    b = RNG.standard_normal(12).astype(np.float32) * 0.1
    ws = np.float32(np.abs(w).max() / 127.0)
    wq = np.clip(np.round(w / ws), -127, 127).astype(np.int8)
    g = G()
    y, ys, yz = g.op("DynamicQuantizeLinear", ["input"], n_out=3)
    mm = g.op("MatMulInteger", [y, g.init("w", wq), yz, g.init("w_zero_point", np.int8(0))],
              base="fc_MatMul_quant")
    cast = g.op("Cast", [mm], to=TensorProto.FLOAT)
    factor = g.op("Mul", [ys, g.init("w_scale", ws)], base="fc_scales_mul")
    out = g.op("Add", [g.op("Mul", [cast, factor], base="fc_output_quantized_cast_output"),
                       g.init("bias", b)])
    return (g.model("ort_dynamic", "input", [1, 16], out, [("", 13)],
                    "onnxruntime quantize_dynamic (MatMulInteger)"), None)


def ort_attention_model():
    """Attention's two activation x activation products as quantize_static
    writes them (QOperator, uint8): scores = QLinearMatMul(X, Transpose(X))
    on the uint8 tensors, then QLinearMatMul(scores, X); [batch 1, 2 heads,
    5 tokens, 8 features]."""
    calib = RNG.standard_normal((8, 2, 5, 8)).astype(np.float32)
    scores = calib @ calib.transpose(0, 1, 3, 2)
    out = scores @ calib
    si, zi = u8_params(float(calib.min()), float(calib.max()))
    ss, zs = u8_params(float(scores.min()), float(scores.max()))
    so, zo = u8_params(float(out.min()), float(out.max()))
    g = G()
    x = g.op("QuantizeLinear", ["input", g.init("x_scale", si), g.init("x_zero_point", zi)])
    k = g.op("Transpose", [x], base="k_transpose", perm=[0, 1, 3, 2])
    s = g.op("QLinearMatMul", [x, g.init("x_scale", si), g.init("x_zero_point", zi),
                               k, g.init("x_scale", si), g.init("x_zero_point", zi),
                               g.init("s_scale", ss), g.init("s_zero_point", zs)], base="scores")
    y = g.op("QLinearMatMul", [s, g.init("s_scale", ss), g.init("s_zero_point", zs),
                               x, g.init("x_scale", si), g.init("x_zero_point", zi),
                               g.init("y_scale", so), g.init("y_zero_point", zo)], base="context")
    result = g.op("DequantizeLinear", [y, g.init("y_scale", so), g.init("y_zero_point", zo)])
    return (g.model("ort_attention", "input", [1, 2, 5, 8], result, [("", 13)],
                    "QLinearMatMul of two activations (attention scores and context)"), so)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    makers = [(lambda: pytorch_model(False), [4, 3, 8, 8]), (lambda: pytorch_model(True), [4, 3, 8, 8]),
              (lambda: ort_qop_model(False), [4, 3, 8, 8]), (lambda: ort_qop_model(True), [4, 3, 8, 8]),
              (lambda: ort_qop_model(False, True), [4, 3, 8, 8]),
              (lambda: ort_qop_model(True, True), [4, 3, 8, 8]),
              (ort_qop_pool_model, [4, 3, 8, 8]),
              (ort_matmul3d_model, [4, 5, 16]), (ort_dynamic_model, [4, 16]),
              (ort_attention_model, [4, 2, 5, 8])]
    for make, shape in makers:
        model, out_scale = make()
        name = model.graph.name
        x = RNG.standard_normal(shape).astype(np.float32)
        if out_scale is None:  # dynamic: the bound of x's rounding (see above)
            w = numpy_helper.to_array(next(t for t in model.graph.initializer
                                           if t.name.startswith("w_") and t.dims))
            ws = numpy_helper.to_array(next(t for t in model.graph.initializer
                                            if t.name.startswith("w_scale")))
            x_scale = max((max(s.max(), 0) - min(s.min(), 0)) / 255.0 for s in x)
            out_scale = float(x_scale / 2 * np.abs(w.astype(np.float32) * ws).sum(axis=0).max())
        model.graph.doc_string = f"output scale {out_scale!r}"
        onnx.save(model, os.path.join(args.out, name + ".onnx"))
        np.save(os.path.join(args.out, name + ".input.npy"), x)
        print(f"wrote {name}.onnx")


if __name__ == "__main__":
    main()
