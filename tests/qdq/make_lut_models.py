#!/usr/bin/python3
"""QDQ models of one activation each, for the int8 lookup-table kernels.

  input -> Q -> DQ -> OP -> Q -> DQ -> output

for OP in Sigmoid, Tanh, HardSigmoid, HardSwish, LeakyRelu, Elu and Gelu
(opset 20; approximate "none" and "tanh"), the first three also without
attributes (ONNX's defaults), with int8
(s8) and uint8 (u8) activations; each writes NAME.input.npy whose first
sample holds every one of the 256 input codes exactly (and the others
random values past both ends of the range, which saturate). compare_qdq.py
then runs them in bundlefit and onnxruntime: a table built from the
parameters must agree on every element (--max-lsb 0). Also Resize models
(RESIZES), nearest (upsampling by scales, sizes with align_corners/ceil,
asymmetric/floor downsampling at opset 18: the int8 copy by indices) and
linear (half_pixel by 2, align_corners sizes, asymmetric downsampling,
pytorch_half_pixel by 3 x 1.7: onnxruntime blends them in float, as the
int8 kernel does). And fallback/: a
Softplus (no int8 kernel) between pairs, which runs in float. Only onnx and
numpy.

usage: make_lut_models.py --out DIR
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SHAPE = [1, 4, 8, 8]  # 256 elements: one sample covers every int8 code
SAMPLES = 3

# op, attributes, input range, output range (the float op's image of it).
OPS = [
    ("Sigmoid", {}, (-8.0, 6.0), (0.0, 1.0)),
    ("Tanh", {}, (-3.0, 4.0), (-1.0, 1.0)),
    ("HardSigmoid", {"alpha": 0.25, "beta": 0.4}, (-4.0, 3.5), (0.0, 1.0)),
    ("HardSwish", {}, (-5.0, 7.0), (-0.375, 7.0)),
    ("LeakyRelu", {"alpha": 0.1}, (-6.0, 5.0), (-0.6, 5.0)),
    ("Elu", {"alpha": 0.7}, (-4.0, 3.0), (-0.7, 3.0)),
    ("Gelu", {}, (-5.0, 4.0), (-0.17, 4.0)),
    ("Gelu", {"approximate": "tanh"}, (-4.5, 6.0), (-0.17, 6.0)),
]
# The attributed ops again with no attributes, named OP_default: the table
# must take ONNX's defaults (LeakyRelu 0.01, HardSigmoid 0.2/0.5, Elu 1.0)
# from the op's definition (bundlefit/ops/ActivationDefaults.h, UnaryMathOps.cpp).
DEFAULTS = [
    ("HardSigmoid", {}, (-4.0, 3.5), (0.0, 1.0)),
    ("LeakyRelu", {}, (-6.0, 5.0), (-0.06, 5.0)),
    ("Elu", {}, (-4.0, 3.0), (-1.0, 3.0)),
]
# Ops newer than opset 17, and the opset their models import: onnx's
# checker here (1.12) predates them, so those models are not checked.
OPSET = {"Gelu": 20}
# GELU as torch.onnx.export writes it before opset 20 (symbolic_opset9.gelu):
# Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5). bundlefit's fuseGelu makes
# it one Gelu, hence one table; onnxruntime runs the five float nodes.
CHAINS = {"GeluErfChain": ("Gelu", (-5.0, 4.0), (-0.17, 4.0))}


def gelu_chain_nodes():
    consts = [numpy_helper.from_array(np.array(v, np.float32), n)
              for n, v in (("sqrt2", 1.4142135), ("one", 1.0), ("half", 0.5))]
    nodes = [helper.make_node("Div", ["x", "sqrt2"], ["scaled"], name="div"),
             helper.make_node("Erf", ["scaled"], ["erf"], name="erf"),
             helper.make_node("Add", ["erf", "one"], ["gate"], name="add"),
             helper.make_node("Mul", ["x", "gate"], ["xg"], name="mul"),
             helper.make_node("Mul", ["xg", "half"], ["y"], name="mul_half")]
    return consts, nodes


def params(lo, hi, dtype):
    """Scale and zero point covering [lo, hi] (0 included), as onnxruntime's
    MinMax calibration picks them."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = np.float32((hi - lo) / 255.0)
    qmin = -128 if dtype == "s8" else 0
    zp = int(np.clip(round(qmin - lo / scale), qmin, qmin + 255))
    return scale, zp


def model(op, attrs, in_range, out_range, dtype):
    np_type, onnx_type = (np.int8, TensorProto.INT8) if dtype == "s8" else (np.uint8,
                                                                             TensorProto.UINT8)
    si, zi = params(*in_range, dtype)
    so, zo = params(*out_range, dtype)
    inits = [numpy_helper.from_array(np.array(si, np.float32), "in_scale"),
             numpy_helper.from_array(np.array(zi, np_type), "in_zp"),
             numpy_helper.from_array(np.array(so, np.float32), "out_scale"),
             numpy_helper.from_array(np.array(zo, np_type), "out_zp")]
    if op in CHAINS:
        chain_consts, body = gelu_chain_nodes()
        inits += chain_consts
    else:
        body = [helper.make_node(op, ["x"], ["y"], name=op.lower(), **attrs)]
    nodes = [helper.make_node("QuantizeLinear", ["input", "in_scale", "in_zp"], ["xq"], name="q_in"),
             helper.make_node("DequantizeLinear", ["xq", "in_scale", "in_zp"], ["x"], name="dq_in"),
             *body,
             helper.make_node("QuantizeLinear", ["y", "out_scale", "out_zp"], ["yq"], name="q_out"),
             helper.make_node("DequantizeLinear", ["yq", "out_scale", "out_zp"], ["output"],
                              name="dq_out")]
    graph = helper.make_graph(
        nodes, f"lut_{op.lower()}", [helper.make_tensor_value_info("input", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, SHAPE)], inits)
    opset = OPSET.get(op, 17)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="tests/qdq/make_lut_models.py")
    m.ir_version = 8 if opset <= 17 else 9
    if opset <= 17:
        onnx.checker.check_model(m)
    # Every code once, then values up to a quarter of the range past each end.
    qmin = -128 if dtype == "s8" else 0
    rng = np.random.default_rng(len(op) * 7 + (dtype == "u8"))
    codes = rng.permutation(np.arange(qmin, qmin + 256))
    first = ((codes - zi) * si).astype(np.float32)
    lo, hi = (qmin - zi) * si, (qmin + 255 - zi) * si
    span = hi - lo
    rest = rng.uniform(lo - span / 4, hi + span / 4, size=(SAMPLES - 1, 256)).astype(np.float32)
    samples = np.concatenate([first[None], rest]).reshape([SAMPLES] + SHAPE[1:])
    return m, samples


# Resize (no table: src/ops/resize/ResizeInt8.cpp) with the same parameters
# on both sides, as onnxruntime's quantizer writes it: name, attributes,
# scales or sizes, opset. Nearest copies codes; linear blends in float.
RESIZES = [
    ("resize_up2", {"mode": "nearest"}, {"scales": [1, 1, 2, 2]}, 13),
    ("resize_sizes_ceil", {"mode": "nearest", "coordinate_transformation_mode": "align_corners",
                           "nearest_mode": "ceil"}, {"sizes": [1, 4, 5, 13]}, 13),
    ("resize_down_asym", {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                          "nearest_mode": "floor"}, {"scales": [1, 1, 0.5, 0.75]}, 18),
    ("resize_linear_up2", {"mode": "linear"}, {"scales": [1, 1, 2, 2]}, 13),
    ("resize_linear_sizes_ac", {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
     {"sizes": [1, 4, 5, 13]}, 13),
    ("resize_linear_down_asym", {"mode": "linear", "coordinate_transformation_mode": "asymmetric"},
     {"scales": [1, 1, 0.5, 0.75]}, 18),
    ("resize_linear_pt", {"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"},
     {"scales": [1, 1, 3, 1.7]}, 13),
]


def resize_model(name, attrs, operand, opset, dtype):
    """input -> Q -> DQ -> Resize -> Q -> DQ, one scale and zero point, and the
    every-code samples of model()."""
    base, samples = model("Relu", {}, (-3.0, 5.0), (-3.0, 5.0), dtype)
    g = base.graph
    relu = [n for n in g.node if n.op_type == "Relu"][0]
    inputs = ["x", ""]
    if "scales" in operand:
        g.initializer.append(numpy_helper.from_array(np.array(operand["scales"], np.float32),
                                                     "scales"))
        inputs.append("scales")
    else:
        g.initializer.append(numpy_helper.from_array(np.array(operand["sizes"], np.int64),
                                                     "sizes"))
        inputs += ["", "sizes"]
    resize = helper.make_node("Resize", inputs, ["y"], name=name, **attrs)
    g.node.insert(list(g.node).index(relu), resize)
    g.node.remove(relu)
    # The output's parameters are the input's.
    for init in g.initializer:
        if init.name == "out_scale":
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(
                [i for i in g.initializer if i.name == "in_scale"][0]), "out_scale"))
        if init.name == "out_zp":
            init.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(
                [i for i in g.initializer if i.name == "in_zp"][0]), "out_zp"))
    g.ClearField("output")
    g.output.append(helper.make_tensor_value_info("output", TensorProto.FLOAT, None))
    base.opset_import[0].version = opset
    return base, samples


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = [(op, attrs, r_in, r_out, attrs.get("approximate")) for op, attrs, r_in, r_out in OPS]
    rows += [(*row, "default") for row in DEFAULTS]
    rows += [(name, {}, r_in, r_out, None) for name, (_, r_in, r_out) in CHAINS.items()]
    for op, attrs, in_range, out_range, tag in rows:
        for dtype in ("s8", "u8"):
            m, samples = model(op, attrs, in_range, out_range, dtype)
            name = f"{op.lower()}{'_' + tag if tag else ''}_qdq_{dtype}"
            onnx.save(m, os.path.join(args.out, name + ".onnx"))
            np.save(os.path.join(args.out, name + ".input.npy"), samples)
    for name, attrs, operand, opset in RESIZES:
        for dtype in ("s8", "u8"):
            m, samples = resize_model(name, attrs, operand, opset, dtype)
            onnx.save(m, os.path.join(args.out, f"{name}_qdq_{dtype}.onnx"))
            np.save(os.path.join(args.out, f"{name}_qdq_{dtype}.input.npy"), samples)
    # An op with no int8 kernel as the model's only quantized op: it runs in
    # float between the pairs (a note, not a refusal), its input and output
    # rounded as the QuantizeLinear nodes do.
    fallback = os.path.join(args.out, "fallback")
    os.makedirs(fallback, exist_ok=True)
    m, samples = model("Softplus", {}, (-4.0, 4.0), (0.0, 4.1), "s8")
    onnx.save(m, os.path.join(fallback, "softplus_qdq_s8.onnx"))
    np.save(os.path.join(fallback, "softplus_qdq_s8.input.npy"), samples)
    print(f"wrote {2 * len(rows)} activation and {2 * len(RESIZES)} Resize QDQ models to {args.out}, 1 to {fallback}")


if __name__ == "__main__":
    main()
