"""MobileNetV1 and DS-CNN at any width and resolution, built in memory (ONNX's Python API).

The families a keyword-spotting or visual-wake-words search sweeps (MLPerf
Tiny's DS-CNN and MobileNetV1): BatchNorm folded into each convolution's bias,
ReLU6 (MobileNetV1) or ReLU (DS-CNN), random weights from a fixed seed (a fit
answer depends on shapes, not values).

    model = mobilenet_v1(width=0.25, resolution=96, classes=2)  # an onnx.ModelProto
    model = ds_cnn(width=1.0, frames=49, mfcc=10, blocks=4)
    grid = zoo_grid()         # (name, builder, kwargs) of the 100-model zoo
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

# MobileNetV1's depthwise-separable blocks: (output channels, stride).
MOBILENET_V1_BLOCKS = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
                       (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1)]


class _Graph:
    """Nodes and initializers of one model, with fresh names."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits = [], []

    def const(self, name, array, dtype=np.float32):
        self.inits.append(numpy_helper.from_array(np.asarray(array, dtype), name))
        return name

    def conv(self, x, name, cin, cout, kernel, stride, pads, group=1, activation="relu6"):
        kh, kw = kernel
        fan_in = cin // group * kh * kw
        w = self.const(name + ".w", self.rng.standard_normal((cout, cin // group, kh, kw)) * np.sqrt(2.0 / fan_in))
        b = self.const(name + ".b", self.rng.standard_normal(cout) * 0.01)
        self.nodes.append(helper.make_node("Conv", [x, w, b], [name], name=name, strides=[stride[0], stride[1]],
                                           pads=pads, group=group))
        if activation == "relu":
            self.nodes.append(helper.make_node("Relu", [name], [name + "_relu"], name=name + "_relu"))
            return name + "_relu"
        self.nodes.append(helper.make_node("Clip", [name, "relu6_min", "relu6_max"], [name + "_relu6"],
                                           name=name + "_relu6"))
        return name + "_relu6"

    def head(self, x, cin, classes):
        self.nodes.append(helper.make_node("GlobalAveragePool", [x], ["pooled"], name="gap"))
        self.nodes.append(helper.make_node("Flatten", ["pooled"], ["flat"], name="flatten"))
        w = self.const("fc.w", self.rng.standard_normal((classes, cin)) * np.sqrt(1.0 / cin))
        self.nodes.append(helper.make_node("Gemm", ["flat", w, self.const("fc.b", np.zeros(classes))], ["logits"],
                                           transB=1, name="classifier"))
        return "logits"

    def model(self, name, input_shape, classes):
        graph = helper.make_graph(
            self.nodes, name, [helper.make_tensor_value_info("input", TensorProto.FLOAT, input_shape)],
            [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, classes])], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 7
        return model


def _same_pads(size, k, s):
    """Keras padding='same' for one dimension: (begin, end), the extra at the end."""
    out = -(-size // s)
    total = max((out - 1) * s + k - size, 0)
    return total // 2, total - total // 2


def mobilenet_v1(width=1.0, resolution=224, classes=1000, seed=0):
    """MobileNetV1 alpha=width (channels scaled, at least 8), RGB resolution x resolution."""
    g = _Graph(seed)
    g.const("relu6_min", np.array(0.0)), g.const("relu6_max", np.array(6.0))
    size = resolution

    def pads(stride):
        nonlocal size
        if stride == 1:
            return [1, 1, 1, 1]
        pb, pe = _same_pads(size, 3, 2)
        size = -(-size // 2)
        return [pb, pb, pe, pe]

    cin = max(8, int(32 * width))
    x = g.conv("input", "conv1", 3, cin, (3, 3), (2, 2), pads(2))
    for i, (c, s) in enumerate(MOBILENET_V1_BLOCKS, start=1):
        cout = max(8, int(c * width))
        x = g.conv(x, f"block{i}_dw", cin, cin, (3, 3), (s, s), pads(s), group=cin)
        x = g.conv(x, f"block{i}_pw", cin, cout, (1, 1), (1, 1), [0, 0, 0, 0])
        cin = cout
    g.head(x, cin, classes)
    return g.model(f"mobilenet_v1_{width}_{resolution}", [1, 3, resolution, resolution], classes)


def ds_cnn(width=1.0, frames=49, mfcc=10, blocks=4, classes=12, seed=0):
    """MLPerf Tiny's keyword-spotting DS-CNN: a 10x4 stride-2 conv, then depthwise-separable blocks."""
    g = _Graph(seed)
    channels = max(8, int(64 * width))
    hb, he = _same_pads(frames, 10, 2)
    wb, we = _same_pads(mfcc, 4, 2)
    x = g.conv("input", "conv1", 1, channels, (10, 4), (2, 2), [hb, wb, he, we], activation="relu")
    for i in range(1, blocks + 1):
        x = g.conv(x, f"block{i}_dw", channels, channels, (3, 3), (1, 1), [1, 1, 1, 1], group=channels,
                   activation="relu")
        x = g.conv(x, f"block{i}_pw", channels, channels, (1, 1), (1, 1), [0, 0, 0, 0], activation="relu")
    g.head(x, channels, classes)
    return g.model(f"ds_cnn_{width}_{frames}x{mfcc}_{blocks}", [1, 1, frames, mfcc], classes)


def zoo_grid():
    """The 100-model zoo of the sweep benchmarks: 60 MobileNetV1s and 40 DS-CNNs.

    On an nRF52840 (1 MB Flash, 256 KB RAM) about half of them fit as float:
    the wide or high-resolution MobileNetV1s do not.
    """
    grid = []
    for width in (0.1, 0.25, 0.35, 0.5, 0.75, 1.0):
        for resolution in (32, 48, 64, 96, 128):
            for classes in (2, 10):
                grid.append((f"mbv1_{width}_{resolution}_c{classes}.onnx", mobilenet_v1,
                             {"width": width, "resolution": resolution, "classes": classes}))
    for width in (0.5, 1.0, 1.5, 2.0, 2.5):
        for frames, mfcc in ((49, 10), (98, 40)):
            for blocks in (2, 4, 6, 8):
                grid.append((f"dscnn_{width}_{frames}x{mfcc}_b{blocks}.onnx", ds_cnn,
                             {"width": width, "frames": frames, "mfcc": mfcc, "blocks": blocks}))
    return grid
