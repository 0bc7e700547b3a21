"""MobileNetV2 at any width and resolution, built in memory with ONNX's Python API.

The candidates of a width x resolution search (MCUNet-style): torchvision's
layout (inverted residuals, ReLU6, 1280-wide last conv scaled by width when
width > 1) with BatchNorm folded into each convolution's bias. The weights are
random (fixed seed): a fit answer depends on shapes, not values.

    model = mobilenet_v2(width=0.35, resolution=96)   # an onnx.ModelProto
    macs = count_macs(width=0.35, resolution=96)      # the accuracy proxy
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

# (expansion, channels, blocks, stride) per stage, as in the paper.
STAGES = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
          (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]


def make_divisible(value, divisor=8):
    """torchvision's channel rounding: to a multiple of 8, never 10% below."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def _layers(width, resolution, classes):
    """(kind, cin, cout, stride, hw_in, residual) for each layer, in order."""
    layers, hw = [], resolution
    cin = make_divisible(32 * width)
    layers.append(("conv3", 3, cin, 2, hw, False))
    hw = -(-hw // 2)
    for t, c, n, s in STAGES:
        cout = make_divisible(c * width)
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            if t != 1:
                layers.append(("conv1", cin, hidden, 1, hw, False))
            layers.append(("dw3", hidden, hidden, stride, hw, False))
            hw_out = -(-hw // stride)
            layers.append(("project", hidden, cout, 1, hw_out, stride == 1 and cin == cout))
            cin, hw = cout, hw_out
    last = make_divisible(1280 * max(1.0, width))
    layers.append(("conv1", cin, last, 1, hw, False))
    layers.append(("fc", last, classes, 1, 1, False))
    return layers


def count_macs(width, resolution, classes=1000):
    """Multiply-accumulates of one inference (the usual accuracy proxy)."""
    macs = 0
    for kind, cin, cout, stride, hw, _ in _layers(width, resolution, classes):
        out = -(-hw // stride)
        if kind == "conv3":
            macs += out * out * cout * cin * 9
        elif kind == "dw3":
            macs += out * out * cout * 9
        elif kind == "fc":
            macs += cin * cout
        else:
            macs += out * out * cout * cin
    return macs


def mobilenet_v2(width=1.0, resolution=224, classes=1000, seed=0):
    """The model as an onnx.ModelProto (opset 13, NCHW, batch 1, logits out)."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], []

    def const(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array, np.float32), name))
        return name

    const("relu6_min", np.array(0.0)), const("relu6_max", np.array(6.0))
    x, block_out, index = "input", None, 0
    for kind, cin, cout, stride, _, residual in _layers(width, resolution, classes):
        index += 1
        name = f"l{index}_{kind}"
        if kind == "fc":
            nodes.append(helper.make_node("GlobalAveragePool", [x], ["pooled"], name="gap"))
            nodes.append(helper.make_node("Flatten", ["pooled"], ["flat"], name="flatten"))
            w = const("fc.w", rng.standard_normal((cout, cin)) * np.sqrt(1.0 / cin))
            nodes.append(helper.make_node("Gemm", ["flat", w, const("fc.b", np.zeros(cout))], ["logits"],
                                          transB=1, name="classifier"))
            break
        k = 3 if kind in ("conv3", "dw3") else 1
        group = cin if kind == "dw3" else 1
        fan_in = cin // group * k * k
        w = const(name + ".w", rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2.0 / fan_in))
        b = const(name + ".b", rng.standard_normal(cout) * 0.01)
        nodes.append(helper.make_node("Conv", [x, w, b], [name], name=name, strides=[stride, stride],
                                      pads=[k // 2] * 4, group=group))
        x = name
        if kind == "project":  # linear bottleneck, plus the block's input when shapes agree
            if residual:
                nodes.append(helper.make_node("Add", [block_out, x], [name + "_add"], name=name + "_add"))
                x = name + "_add"
            block_out = x
            continue
        nodes.append(helper.make_node("Clip", [x, "relu6_min", "relu6_max"], [name + "_relu6"],
                                      name=name + "_relu6"))
        x = name + "_relu6"
        if kind == "conv3":
            block_out = x  # the stem's output is the first block's input
    graph = helper.make_graph(
        nodes, f"mobilenet_v2_{width}_{resolution}",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, resolution, resolution])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, classes])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    return model
