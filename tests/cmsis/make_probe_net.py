#!/usr/bin/python3
"""The CMSIS-NN probe net: every awkward geometry --use-cmsis hands CMSIS-NN.

    make_probe_net.py OUT_DIR  ->  OUT_DIR/cmsis_probe.onnx, cmsis_probe.input.npy

x [1,4,16,16]
 -> Conv 3x3 pad 1, 4->8, Relu                        (general conv, im2col buffer)
 -> depthwise Conv 5x5, channel multiplier 2, stride 2, pad 2   -> [1,16,8,8]
 -> AveragePool 3x3 stride 1 pad 1 (overlapping, padded windows)
 -> Conv 1x1 stride 2, 16->8                          (arm_convolve_1x1_s8, strided)
 -> Conv 3x3 dilation 2 pad 2, 8->8, Relu             (dilated) -> [1,8,4,4] = d
 branch a: depthwise 3x3 pad 1 -> AveragePool 2x2 stride 2   (fused at --memory-opt >= 1
           on bundlefit's own kernels) -> Flatten -> Gemm 32->10 -> Softmax
 branch b: AveragePool (4,1) -> [1,8,1,4] -> Conv 1x3 pad (0,1), 8->12  (1xN conv:
           stride_w * in_c % 4 == 0) -> Flatten -> Gemm 48->6
Fixed seed; float32, opset 13.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(1515)
    inits, nodes = [], []

    def const(name, shape, scale):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def conv(name, x, cin, cout, k, stride=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1), group=1):
        w = const(name + "_w", (cout, cin // group) + tuple(k), (2.0 / (cin // group * k[0] * k[1])) ** 0.5)
        b = const(name + "_b", (cout,), 0.05)
        nodes.append(helper.make_node("Conv", [x, w, b], [name], kernel_shape=list(k), strides=list(stride),
                                      pads=list(pads), dilations=list(dil), group=group))
        return name

    def relu(x):
        nodes.append(helper.make_node("Relu", [x], [x + "_relu"]))
        return x + "_relu"

    def avgpool(name, x, k, stride, pads=(0, 0, 0, 0)):
        nodes.append(helper.make_node("AveragePool", [x], [name], kernel_shape=list(k), strides=list(stride),
                                      pads=list(pads)))
        return name

    def gemm(name, x, k, n):
        flat = name + "_flat"
        nodes.append(helper.make_node("Flatten", [x], [flat], axis=1))
        w = const(name + "_w", (n, k), (1.0 / k) ** 0.5)
        b = const(name + "_b", (n,), 0.05)
        nodes.append(helper.make_node("Gemm", [flat, w, b], [name], transB=1))
        return name

    x = "x"
    c0 = relu(conv("c0", x, 4, 8, (3, 3), pads=(1, 1, 1, 1)))
    dw5 = conv("dw5", c0, 8, 16, (5, 5), stride=(2, 2), pads=(2, 2, 2, 2), group=8)
    ap3 = avgpool("ap3", dw5, (3, 3), (1, 1), (1, 1, 1, 1))
    p1 = conv("pw_s2", ap3, 16, 8, (1, 1), stride=(2, 2))
    d = relu(conv("dil", p1, 8, 8, (3, 3), pads=(2, 2, 2, 2), dil=(2, 2)))
    dw3 = conv("dw3", d, 8, 8, (3, 3), pads=(1, 1, 1, 1), group=8)
    ap2 = avgpool("ap2", dw3, (2, 2), (2, 2))
    fa = gemm("fc_a", ap2, 32, 10)
    nodes.append(helper.make_node("Softmax", [fa], ["scores"], axis=1))
    col = avgpool("col", d, (4, 1), (4, 1))
    c1n = conv("conv_1xn", col, 8, 12, (1, 3), pads=(0, 1, 0, 1))
    gemm("fc_b", c1n, 48, 6)

    graph = helper.make_graph(
        nodes, "cmsis_probe", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 16, 16])],
        [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 10]),
         helper.make_tensor_value_info("fc_b", TensorProto.FLOAT, [1, 6])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "cmsis_probe.onnx"))
    np.save(os.path.join(out, "cmsis_probe.input.npy"),
            rng.uniform(-1, 1, (1, 4, 16, 16)).astype(np.float32))


if __name__ == "__main__":
    main()
