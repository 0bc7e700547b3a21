#!/usr/bin/env python3
"""bundlefit vs TFLite Micro on generated int16x8 DEPTHWISE_CONV_2D, FULLY_CONNECTED, pooling,
SOFTMAX, UNIDIRECTIONAL_SEQUENCE_LSTM and LEAKY_RELU models (one without options: TFLM then
runs alpha 0), and CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, SUB and TRANSPOSE_CONV with
fused activations.

seanet has none of these operators, so this writes small one-operator .tflite
models (int16 activations with zero point 0, int8 weights per channel or per
tensor, int64 biases or none) as TFLite JSON and turns them into flatbuffers
with flatc and the importer's schema: depthwise convolutions over several
strides, dilations, depth multipliers and both paddings; fully-connected
layers with and without bias, batched and keep_num_dims (TFLM's int16
depthwise needs a bias); average and max pooling over several filters,
strides, both paddings and fused RELU/RELU6; softmaxes of several row
lengths, betas and input scales; convolutions, fully-connected layers, ADDs
(one broadcasting), a SUB and transposed convolutions (strided, SAME and
VALID) with a fused RELU, RELU6 or RELU_N1_TO_1, their
scales chosen so that the activation's bounds lie inside int16 where the
random sums cross them (each such output must hold values at its bounds, as
TFLM's CalculateActivationRangeQuantized places them); LSTMs (24 operands,
variable int16 states, int64 biases) batch- and time-major over several
steps, one with cell_clip, one whose hidden state saturates int16, one whose
biases pass int32. Each runs on seeded
random int16 inputs
through `tflm_run` and `bundlefit run`; the outputs must be equal byte for
byte (on the host, the reference interpreter's too: `run --compare`). A
depthwise whose depth_multiplier contradicts its weights, a per-channel
fully-connected, a pooling that rescales, a softmax whose output scale is
not 1/32768, an LSTM with int32 biases or a cell scale that is not a power of
two, a fused TANH and a RELU6 whose bound 6.0 is beyond int32 in the
output's scale (TFLM's Prepare fails) must be refused in one line naming them. With --use-cmsis among
the run options, --min-cmsis N fails when fewer than N models call CMSIS-NN
(read from `bundlefit run`'s status line). With --cmsis-nn DIR too, each
model is also compiled with `bundlefit compile --use-cmsis` for the same
target and its header compiled with DIR's arm_nnfunctions.h by the Arm
toolchain (BUNDLEFIT_CHECK_CMSIS_NN): a prototype the header states that
differs from the library's is a compile error, and every arm_ function the
object calls must have its prototype there.

Exit 77 (ctest SKIP) when ../shared/third_party/tflm is absent, or when a
Cortex-M target is asked and QEMU or the Arm toolchain is missing.

usage: int16x8_generated.py BUNDLEFIT TFLM_DIR SCHEMA WORK_DIR [--min-cmsis N]
                            [bundlefit run options...]
"""
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np

from tflm_skip import SKIP, skip_reason

ADD, AVERAGE_POOL_2D, CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED = 0, 1, 3, 4, 9
MAX_POOL_2D, SOFTMAX, SUB, TRANSPOSE_CONV = 17, 25, 41, 67
UNIDIRECTIONAL_SEQUENCE_LSTM, LEAKY_RELU = 44, 98
# The real-valued upper bound of the fused activations that have one.
UPPER_BOUND = {"RELU6": 6.0, "RELU_N1_TO_1": 1.0}


class Model:
    """A one-operator TFLite model as flatc's JSON."""

    def __init__(self):
        self.tensors, self.buffers = [], [{}]  # buffer 0: no data (TFLite's convention)

    def tensor(self, name, shape, dtype, scales, data=None, axis=0):
        buffer = 0
        if data is not None:
            self.buffers.append({"data": list(np.ascontiguousarray(data).view(np.uint8).ravel()
                                             .tolist())})
            buffer = len(self.buffers) - 1
        self.tensors.append({"name": name, "shape": list(shape), "type": dtype, "buffer": buffer,
                             "quantization": {"scale": [float(s) for s in scales],
                                              "zero_point": [0] * len(scales),
                                              "quantized_dimension": axis}})
        return len(self.tensors) - 1

    def json(self, code, name, inputs, output, options_type, options, graph_inputs=1):
        """The model; its first `graph_inputs` operator inputs are the subgraph's inputs.
        `options_type` None: an operator without builtin options."""
        operator = {"opcode_index": 0, "inputs": inputs, "outputs": [output]}
        if options_type is not None:
            operator.update({"builtin_options_type": options_type, "builtin_options": options})
        return {"version": 3,
                "operator_codes": [{"deprecated_builtin_code": code, "builtin_code": name,
                                    "version": 1}],
                "subgraphs": [{"tensors": self.tensors, "inputs": inputs[:graph_inputs],
                               "outputs": [output],
                               "operators": [operator]}],
                "buffers": self.buffers}


def out_scale(in_scale, w_scale, taps, rng):
    """An output scale that maps typical sums of `taps` products into int16, a little saturated."""
    return in_scale * w_scale * 20000.0 * 64.0 * np.sqrt(taps) / 9000.0 * rng.uniform(0.5, 1.5)


def bound_factor(rng, activation, y_scale):
    """The factor on a model's input and output scales (its integers unchanged) that puts the
    fused activation's upper bound at 4,000 to 12,000 of the output's integers, inside int16,
    where random sums cross it; 1 without such a bound."""
    if activation not in UPPER_BOUND:
        return 1.0
    return UPPER_BOUND[activation] / rng.uniform(4000, 12000) / y_scale


def with_activation(options, activation):
    if activation != "NONE":
        options["fused_activation_function"] = activation
    return options


def weighted(rng, model, x_shape, in_scale, weights, w_scales, axis, bias, taps, y_shape,
             activation):
    """Tensors x, int8 `weights` (scales `w_scales` along `axis`), int64 `bias` (None: none)
    and y: the operator inputs [x, w, b or -1] and y. The output scale maps typical sums of
    `taps` products into int16, scaled with the input's for the activation's bound."""
    scale = out_scale(in_scale, float(np.max(w_scales)), taps, rng)
    factor = bound_factor(rng, activation, scale)
    in_scale, scale = in_scale * factor, scale * factor
    inputs = [model.tensor("x", x_shape, "INT16", [in_scale]),
              model.tensor("w", weights.shape, "INT8", w_scales, weights, axis=axis)]
    if bias is None:
        inputs.append(-1)
    else:
        inputs.append(model.tensor("b", [len(bias)], "INT64", in_scale * np.asarray(w_scales),
                                   bias))
    return inputs, model.tensor("y", y_shape, "INT16", [scale])


def window_output(x_shape, kernel, stride, dilation, padding):
    """TFLite's output height and width of a window over NHWC x_shape."""
    h, w = x_shape[1], x_shape[2]
    span = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    if padding == "SAME":
        return -(-h // stride[0]), -(-w // stride[1])
    return (h - span[0]) // stride[0] + 1, (w - span[1]) // stride[1] + 1


def conv(rng, x_shape, m, kernel, stride, padding, activation):
    """CONV_2D with per-channel weights OHWI and a bias."""
    model = Model()
    in_scale = rng.uniform(1e-4, 1e-3)
    weights = rng.integers(-127, 128, size=(m, kernel[0], kernel[1], x_shape[3]), dtype=np.int8)
    w_scales = rng.uniform(0.002, 0.02, size=m)
    bias = rng.integers(-2**22, 2**22, size=m).astype(np.int64)
    oh, ow = window_output(x_shape, kernel, stride, (1, 1), padding)
    inputs, y = weighted(rng, model, x_shape, in_scale, weights, w_scales, 0, bias,
                         kernel[0] * kernel[1] * x_shape[3], [x_shape[0], oh, ow, m], activation)
    options = {"padding": padding, "stride_w": stride[1], "stride_h": stride[0],
               "dilation_w_factor": 1, "dilation_h_factor": 1}
    return model.json(CONV_2D, "CONV_2D", inputs, y, "Conv2DOptions",
                      with_activation(options, activation))


def transpose_conv(rng, x_shape, m, kernel, stride, padding, activation):
    """TRANSPOSE_CONV (operands output_shape, OHWI weights, x, bias) with per-channel weights;
    each output sums about KH*KW*C/(SH*SW) products. TFLM clamps to its fused activation."""
    model = Model()
    in_scale = rng.uniform(1e-4, 1e-3)
    weights = rng.integers(-127, 128, size=(m, kernel[0], kernel[1], x_shape[3]), dtype=np.int8)
    w_scales = rng.uniform(0.002, 0.02, size=m)
    bias = rng.integers(-2**22, 2**22, size=m).astype(np.int64)
    if padding == "SAME":
        oh, ow = x_shape[1] * stride[0], x_shape[2] * stride[1]
    else:
        oh, ow = [(x_shape[1 + i] - 1) * stride[i] + kernel[i] for i in (0, 1)]
    y_shape = [x_shape[0], oh, ow, m]
    taps = max(1, kernel[0] * kernel[1] * x_shape[3] // (stride[0] * stride[1]))
    (x, w, b), y = weighted(rng, model, x_shape, in_scale, weights, w_scales, 0, bias, taps,
                            y_shape, activation)
    shape = model.tensor("output_shape", [4], "INT32", [1.0], np.array(y_shape, np.int32))
    spec = model.json(TRANSPOSE_CONV, "TRANSPOSE_CONV", [shape, w, x, b], y,
                      "TransposeConvOptions",
                      with_activation({"padding": padding, "stride_w": stride[1],
                                       "stride_h": stride[0]}, activation))
    spec["subgraphs"][0]["inputs"] = [x]
    return spec


def depthwise(rng, x_shape, kernel, mult, stride, dilation, padding, bias, per_channel,
              activation="NONE"):
    m = x_shape[3] * mult
    model = Model()
    in_scale = rng.uniform(1e-4, 1e-3)
    weights = rng.integers(-127, 128, size=(1, kernel[0], kernel[1], m), dtype=np.int8)
    w_scales = rng.uniform(0.002, 0.02, size=m if per_channel else 1)
    values = rng.integers(-2**22, 2**22, size=m).astype(np.int64) if bias else None
    oh, ow = window_output(x_shape, kernel, stride, dilation, padding)
    inputs, y = weighted(rng, model, x_shape, in_scale, weights, w_scales, 3, values,
                         kernel[0] * kernel[1], [x_shape[0], oh, ow, m], activation)
    options = {"padding": padding, "stride_w": stride[1], "stride_h": stride[0],
               "depth_multiplier": mult, "dilation_w_factor": dilation[1],
               "dilation_h_factor": dilation[0]}
    return model.json(DEPTHWISE_CONV_2D, "DEPTHWISE_CONV_2D", inputs, y,
                      "DepthwiseConv2DOptions", with_activation(options, activation))


def fully_connected(rng, x_shape, outputs, bias, keep_num_dims, activation="NONE"):
    k = x_shape[-1]
    model = Model()
    in_scale = rng.uniform(1e-4, 1e-3)
    weights = rng.integers(-127, 128, size=(outputs, k), dtype=np.int8)
    w_scale = rng.uniform(0.002, 0.02)
    values = rng.integers(-2**24, 2**24, size=outputs).astype(np.int64) if bias else None
    batches = int(np.prod(x_shape)) // k
    y_shape = list(x_shape[:-1]) + [outputs] if keep_num_dims else [batches, outputs]
    inputs, y = weighted(rng, model, x_shape, in_scale, weights, [w_scale], 0, values, k,
                         y_shape, activation)
    return model.json(FULLY_CONNECTED, "FULLY_CONNECTED", inputs, y, "FullyConnectedOptions",
                      with_activation({"keep_num_dims": keep_num_dims}, activation))


def add(rng, a_shape, b_shape, activation, subtract=False):
    """ADD or SUB of two inputs (TFLite's general int16 rescaling, not pot_scale_int16); the
    output scale a little below the inputs' sum, so that sums saturate."""
    model = Model()
    a_scale, b_scale = rng.uniform(5e-4, 1e-3, size=2)
    scale = (a_scale + b_scale) * rng.uniform(0.5, 1.0)
    factor = bound_factor(rng, activation, scale)
    a = model.tensor("a", a_shape, "INT16", [a_scale * factor])
    b = model.tensor("b", b_shape, "INT16", [b_scale * factor])
    y_shape = list(np.broadcast_shapes(tuple(a_shape), tuple(b_shape)))
    y = model.tensor("y", y_shape, "INT16", [scale * factor])
    options = with_activation({"pot_scale_int16": False}, activation)
    if subtract:
        return model.json(SUB, "SUB", [a, b], y, "SubOptions", options, graph_inputs=2)
    return model.json(ADD, "ADD", [a, b], y, "AddOptions", options, graph_inputs=2)


def pool(rng, kind, x_shape, filt, stride, padding, activation="NONE"):
    """AVERAGE_POOL_2D or MAX_POOL_2D; TFLM requires the output's scale to be the input's."""
    n, h, w, c = x_shape
    model = Model()
    scale = rng.uniform(1e-4, 1e-3)
    x = model.tensor("x", x_shape, "INT16", [scale])
    if padding == "SAME":
        oh, ow = -(-h // stride[0]), -(-w // stride[1])
    else:
        oh, ow = (h - filt[0]) // stride[0] + 1, (w - filt[1]) // stride[1] + 1
    y = model.tensor("y", [n, oh, ow, c], "INT16", [scale])
    options = {"padding": padding, "stride_w": stride[1], "stride_h": stride[0],
               "filter_width": filt[1], "filter_height": filt[0],
               "fused_activation_function": activation}
    code = AVERAGE_POOL_2D if kind == "avg" else MAX_POOL_2D
    return model.json(code, "AVERAGE_POOL_2D" if kind == "avg" else "MAX_POOL_2D", [x], y,
                      "Pool2DOptions", options)


def softmax(rng, x_shape, beta, in_range):
    """SOFTMAX over the last axis; inputs spanning +-in_range, output scale 1/32768 (TFLM's)."""
    model = Model()
    x = model.tensor("x", x_shape, "INT16", [in_range / 32768.0])
    y = model.tensor("y", x_shape, "INT16", [1.0 / 32768.0])
    return model.json(SOFTMAX, "SOFTMAX", [x], y, "SoftmaxOptions", {"beta": beta})


def leaky_relu(x_shape, alpha):
    """LEAKY_RELU rescaling from 2^-12 to 2^-11; alpha None: no options (TFLM's alpha is then 0,
    its params starting zeroed)."""
    model = Model()
    x = model.tensor("x", x_shape, "INT16", [2.0 ** -12])
    y = model.tensor("y", x_shape, "INT16", [2.0 ** -11])
    if alpha is None:
        return model.json(LEAKY_RELU, "LEAKY_RELU", [x], y, None, None)
    return model.json(LEAKY_RELU, "LEAKY_RELU", [x], y, "LeakyReluOptions", {"alpha": alpha})


def lstm(rng, batch, steps, inputs, cells, time_major, in_scale, w_range, bias_range,
         cell_power, cell_clip, hidden_scale):
    """UNIDIRECTIONAL_SEQUENCE_LSTM int16x8 (TFLM's EvalLstm<int16_t, int8_t, int16_t,
    int64_t>): its 24 operands (no peephole, projection or layer norm), int8 weights with one
    scale per gate (input weights' from `w_range`, recurrent ones' from 0.01 to 0.03, so that
    the hidden state moves the gates), int64 biases in +-bias_range, variable int16 output and
    cell states (the cell's scale 2^cell_power, TFLM's power-of-two rule). The hidden state's
    scale 1/32768 holds tanh(cell) x output gate."""
    model = Model()
    x_shape = [steps, batch, inputs] if time_major else [batch, steps, inputs]
    x = model.tensor("x", x_shape, "INT16", [in_scale])
    w_scales = np.concatenate([rng.uniform(*w_range, size=4), rng.uniform(0.01, 0.03, size=4)])
    operands = [x]
    for g, columns in enumerate([inputs] * 4 + [cells] * 4):  # input, then recurrent, i f c o
        weights = rng.integers(-127, 128, size=(cells, columns), dtype=np.int8)
        operands.append(model.tensor(f"w{g}", [cells, columns], "INT8", [w_scales[g]], weights))
    operands += [-1] * 3  # peepholes
    for g in range(4):
        bias = rng.integers(-bias_range, bias_range + 1, size=cells, dtype=np.int64)
        operands.append(model.tensor(f"b{g}", [cells], "INT64", [in_scale * w_scales[g]], bias))
    operands += [-1] * 2  # projection
    for name, scale in (("output_state", hidden_scale), ("cell_state", 2.0 ** cell_power)):
        operands.append(model.tensor(name, [batch, cells], "INT16", [scale]))
        model.tensors[-1]["is_variable"] = True
    operands += [-1] * 4  # layer norm
    y = model.tensor("y", x_shape[:2] + [cells], "INT16", [hidden_scale])
    options = {"fused_activation_function": "TANH", "cell_clip": cell_clip,
               "time_major": time_major}
    return model.json(UNIDIRECTIONAL_SEQUENCE_LSTM, "UNIDIRECTIONAL_SEQUENCE_LSTM", operands, y,
                      "UnidirectionalSequenceLSTMOptions", options)


def models(rng):
    """(name, JSON) of every generated model."""
    # Every depthwise has a bias: tflm_run crashes on an int16 DEPTHWISE_CONV_2D without one.
    dw = [  # x shape, kernel, multiplier, stride, dilation, padding, bias, per-channel
        ([1, 9, 9, 4], (3, 3), 1, (1, 1), (1, 1), "SAME", True, True),
        ([1, 10, 7, 3], (3, 3), 2, (2, 2), (1, 1), "VALID", True, True),
        ([2, 8, 9, 2], (5, 3), 3, (2, 1), (2, 1), "SAME", True, True),
        ([1, 6, 6, 8], (3, 3), 1, (1, 2), (1, 1), "VALID", True, False),
        ([1, 12, 5, 16], (3, 1), 1, (1, 1), (1, 1), "SAME", True, True),
    ]
    for i, case in enumerate(dw):
        yield f"depthwise{i}", depthwise(rng, *case)
    fc = [  # x shape, outputs, bias, keep_num_dims
        ([1, 32], 10, True, False),
        ([4, 20], 7, False, False),
        ([3, 2, 16], 5, True, True),
        ([2, 300], 12, True, False),
        ([1, 600], 4, True, False),  # beyond CMSIS-NN's 512 int32 products: weights checked
    ]
    for i, case in enumerate(fc):
        yield f"fully_connected{i}", fully_connected(rng, *case)
    pools = [  # kind, x shape, filter, stride, padding[, fused activation]
        ("avg", [1, 9, 9, 4], (3, 3), (2, 2), "SAME"),
        ("avg", [2, 8, 7, 3], (2, 3), (1, 2), "VALID"),
        ("avg", [1, 6, 10, 16], (5, 5), (1, 1), "SAME"),  # edge windows of 9 to 25 taps
        ("avg", [1, 7, 7, 9], (7, 7), (1, 1), "VALID", "RELU"),  # global, 49 taps
        ("max", [1, 9, 9, 4], (3, 3), (2, 2), "SAME"),
        ("max", [2, 8, 7, 3], (2, 2), (2, 2), "VALID"),
        ("max", [1, 6, 10, 16], (4, 3), (3, 1), "SAME", "RELU6"),
    ]
    for i, case in enumerate(pools):
        yield f"{case[0]}_pool{i}", pool(rng, *case)
    softmaxes = [  # x shape, beta, input range
        ([1, 10], 1.0, 8.0),
        ([4, 33], 1.0, 20.0),
        ([2, 3, 100], 0.5, 12.0),
        ([3, 1000], 1.0, 4.0),
        ([1, 7], 2.0, 3.0),
        ([5, 1], 1.0, 8.0),  # one element per row: 1.0
        ([2, 16], 1.0, 300.0),  # all but the maximum's exps vanish
    ]
    for i, case in enumerate(softmaxes):
        yield f"softmax{i}", softmax(rng, *case)
    # Fused activations, after the models above so that their models and inputs stay the same.
    for act in ("RELU", "RELU6", "RELU_N1_TO_1"):
        suffix = act.lower()
        conv_case = {"RELU": ([1, 8, 8, 3], 6, (3, 3), (1, 1), "SAME"),
                     "RELU6": ([1, 9, 7, 4], 5, (3, 2), (2, 2), "VALID"),
                     "RELU_N1_TO_1": ([2, 6, 6, 8], 4, (1, 1), (1, 1), "VALID")}[act]
        yield f"conv_{suffix}", conv(rng, *conv_case, act)
        dw_case = {"RELU": ([1, 8, 8, 4], (3, 3), 1, (1, 1), (1, 1), "SAME"),
                   "RELU6": ([1, 9, 9, 3], (3, 3), 2, (2, 2), (1, 1), "VALID"),
                   "RELU_N1_TO_1": ([1, 7, 7, 6], (3, 3), 1, (1, 1), (2, 2), "SAME")}[act]
        yield f"depthwise_{suffix}", depthwise(rng, *dw_case, True, True, act)
        fc_case = {"RELU": ([1, 48], 10, True, False),
                   "RELU6": ([4, 20], 7, False, False),
                   "RELU_N1_TO_1": ([3, 2, 16], 5, True, True)}[act]
        yield f"fully_connected_{suffix}", fully_connected(rng, *fc_case, act)
        add_case = {"RELU": ([1, 6, 6, 8], [1, 6, 6, 8]),
                    "RELU6": ([2, 5, 7, 3], [1, 1, 7, 3]),  # broadcasting
                    "RELU_N1_TO_1": ([1, 40], [1, 40])}[act]
        yield f"add_{suffix}", add(rng, *add_case, act)
    yield "sub_relu6", add(rng, [1, 4, 4, 6], [1, 4, 4, 6], "RELU6", subtract=True)
    transpose_cases = {  # x shape, output channels, kernel, stride, padding
        "RELU": ([1, 5, 5, 3], 4, (3, 3), (2, 2), "SAME"),
        "RELU6": ([1, 4, 6, 8], 3, (4, 2), (2, 1), "VALID"),
        "RELU_N1_TO_1": ([2, 3, 3, 4], 5, (3, 3), (1, 1), "SAME")}
    for act, case in transpose_cases.items():
        yield f"transpose_conv_{act.lower()}", transpose_conv(rng, *case, act)
    # Several steps, so that the hidden and cell states feed back. Inputs at 2^-12 (+-8) and
    # weights summing to a few units at the gates' 2^-12, some saturating; the third's input
    # scale is so small that its biases, up to 2^34, pass int32 and drive the gates.
    lstms = [  # batch, steps, inputs, cells, time-major, input scale, weight scales, biases,
        # cell scale 2^power, cell_clip, hidden scale
        (2, 5, 12, 8, False, 2.0 ** -12, (0.001, 0.003), 2**22, -11, 0.0, 1 / 50000),
        (3, 6, 20, 16, True, 2.0 ** -12, (0.0005, 0.002), 2**22, -12, 3.0, 1 / 32768),
        (1, 8, 5, 4, False, 2.0 ** -26, (0.004, 0.008), 2**34, -11, 0.0, 1 / 40000),
    ]
    for i, case in enumerate(lstms):
        yield f"lstm{i}", lstm(rng, *case)
    yield "leaky_relu_alpha_3_tenths", leaky_relu([1, 6, 5, 3], 0.3)
    yield "leaky_relu_without_options", leaky_relu([2, 40], None)


def refusals(rng):
    """(name, JSON, text the one-line refusal must hold) of models bundlefit must refuse."""
    wrong = depthwise(rng, [1, 6, 6, 4], (3, 3), 2, (1, 1), (1, 1), "SAME", True, True)
    wrong["subgraphs"][0]["operators"][0]["builtin_options"]["depth_multiplier"] = 1
    yield "refused_depth_multiplier", wrong, "depth_multiplier 1 but the weights give 2"
    per_channel = fully_connected(rng, [1, 8], 3, True, False)
    per_channel["subgraphs"][0]["tensors"][1]["quantization"]["scale"] = [0.01, 0.02, 0.03]
    per_channel["subgraphs"][0]["tensors"][1]["quantization"]["zero_point"] = [0, 0, 0]
    yield "refused_per_channel_fc", per_channel, "FULLY_CONNECTED weights need one scale"
    rescaling = pool(rng, "avg", [1, 4, 4, 2], (2, 2), (2, 2), "VALID")
    rescaling["subgraphs"][0]["tensors"][1]["quantization"]["scale"] = [0.5]
    yield "refused_pool_scale", rescaling, "the output's scale must be the input's"
    wrong_scale = softmax(rng, [1, 8], 1.0, 8.0)
    wrong_scale["subgraphs"][0]["tensors"][1]["quantization"]["scale"] = [1.0 / 256]
    yield "refused_softmax_scale", wrong_scale, "the output's scale must be 1/32768"
    tanh = conv(rng, [1, 4, 4, 2], 3, (3, 3), (1, 1), "SAME", "RELU")
    tanh["subgraphs"][0]["operators"][0]["builtin_options"]["fused_activation_function"] = "TANH"
    yield "refused_fused_tanh", tanh, "int16x8 with fused activation TANH"
    tiny = conv(rng, [1, 4, 4, 2], 3, (3, 3), (1, 1), "SAME", "RELU6")
    tiny["subgraphs"][0]["tensors"][3]["quantization"]["scale"] = [1e-12]
    yield "refused_activation_bound", tiny, "the fused activation's bound 6.000000 is beyond int32"
    lstm_case = (1, 3, 4, 2, False, 2.0 ** -12, (0.001, 0.003), 2**20, -11, 0.0, 1 / 32768)
    int32_bias = lstm(rng, *lstm_case)
    for t in int32_bias["subgraphs"][0]["tensors"]:
        if t["type"] == "INT64":
            t["type"] = "INT32"
            buffer = int32_bias["buffers"][t["buffer"]]
            buffer["data"] = buffer["data"][:len(buffer["data"]) // 2]
    yield "refused_lstm_int32_bias", int32_bias, \
        "UNIDIRECTIONAL_SEQUENCE_LSTM int16x8 with INT32 biases: not supported (operator 0)"
    cell_scale = lstm(rng, *lstm_case)
    cell_scale["subgraphs"][0]["tensors"][14]["quantization"]["scale"] = [0.001]
    yield "refused_lstm_cell_scale", cell_scale, \
        "'cell_state') must have one scale, a power of two, and zero point 0"


def activation_bounds(spec):
    """The fused activation and the integers TFLM clamps the output to for it
    (CalculateActivationRangeQuantized: round(f / scale) in float, half away from zero, within
    int16); None without one."""
    op = spec["subgraphs"][0]["operators"][0]
    activation = op.get("builtin_options", {}).get("fused_activation_function", "NONE")
    if activation == "NONE" or spec["operator_codes"][0]["builtin_code"] == \
            "UNIDIRECTIONAL_SEQUENCE_LSTM":  # its TANH is the cell's, not a clamp
        return None
    y = spec["subgraphs"][0]["tensors"][op["outputs"][0]]
    scale = np.float32(y["quantization"]["scale"][0])

    def quantize(f):
        q = float(np.float32(f) / scale)
        return int(np.sign(q) * np.floor(abs(q) + 0.5))
    low = max(-32768, quantize(-1.0 if activation == "RELU_N1_TO_1" else 0.0))
    high = min(32767, quantize(UPPER_BOUND[activation])) if activation in UPPER_BOUND else 32767
    return activation, low, high


def clamp_unreached(spec, ours):
    """What of the fused activation's clamp the random output did not test: each of its bounds
    must lie inside int16 and be held by some output value ('' when all are). Checked on the
    operators whose models choose their scales for it (not pooling: the maximum of a random
    window is rarely below zero)."""
    bounds = activation_bounds(spec)
    if bounds is None or spec["operator_codes"][0]["builtin_code"] in ("AVERAGE_POOL_2D",
                                                                       "MAX_POOL_2D"):
        return ""
    activation, low, high = bounds
    needed = [low] + ([high] if activation in UPPER_BOUND else [])
    missing = [b for b in needed if b in (-32768, 32767) or not np.any(ours == b)]
    if not missing:
        return ""
    return f"{activation} clamps to [{low}, {high}]: no output value at {missing} inside int16"


def write_model(work, schema, name, spec):
    source = os.path.join(work, name + ".json")
    with open(source, "w") as f:
        json.dump(spec, f)
    subprocess.run(["flatc", "-b", "-o", work, schema, source], check=True)
    return os.path.join(work, name + ".tflite")  # the schema's file_extension


def check_header(bundlefit, model, name, work, options):
    """`bundlefit compile --use-cmsis` of `model` for the run's target, its header compiled against
    the real CMSIS-NN's arm_nnfunctions.h (`--cmsis-nn DIR`); a failure line, or ""."""
    target = options[options.index("--target") + 1]
    cmsis = options[options.index("--cmsis-nn") + 1]
    bundle = os.path.join(work, "bundle")
    shutil.rmtree(bundle, ignore_errors=True)
    compiled = subprocess.run([bundlefit, "-q", "compile", model, "-o", bundle, "--target", target,
                               "--use-cmsis", "--network-name", name],
                              capture_output=True, text=True)
    if compiled.returncode != 0:
        return f"{name}: bundlefit compile --use-cmsis exit {compiled.returncode}: " \
               f"{compiled.stderr.strip()}"
    header = os.path.join(bundle, name + ".h")
    cc = subprocess.run(["arm-none-eabi-gcc", f"-mcpu={target}", "-mthumb", "-mfloat-abi=hard",
                         "-fsyntax-only", "-DBUNDLEFIT_CHECK_CMSIS_NN", "-I",
                         os.path.join(cmsis, "Include"), "-x", "c", header],
                        capture_output=True, text=True)
    if cc.returncode != 0:
        return f"{name}: its header does not compile with {cmsis}/Include/arm_nnfunctions.h:\n" + \
            cc.stderr.strip()
    nm = subprocess.run(["arm-none-eabi-nm", "-u", os.path.join(bundle, name + ".o")],
                        capture_output=True, text=True, check=True)
    text = open(header).read()
    unchecked = [f for f in re.findall(r"\b(arm_\w+)$", nm.stdout, re.M)
                 if f" {f}(const " not in text]
    if unchecked:
        return f"{name}: the header states no prototype of {', '.join(unchecked)}"
    return ""


def main():
    if len(sys.argv) < 5:
        print(__doc__)
        return 2
    bundlefit, tflm_dir, schema, work = sys.argv[1:5]
    options = sys.argv[5:]
    min_cmsis = 0
    if options[:1] == ["--min-cmsis"]:
        min_cmsis, options = int(options[1]), options[2:]
    why = skip_reason(tflm_dir, options)
    if why:
        print(why)
        return SKIP
    tflm_run = os.path.join(tflm_dir, "bin", "tflm_run")
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(33)
    failures, exact, cmsis_models, total, headers = [], 0, 0, 0, 0
    for name, spec in models(rng):
        total += 1
        model = write_model(work, schema, name, spec)
        graph = spec["subgraphs"][0]
        src, dst = os.path.join(work, "tflm_in.bin"), os.path.join(work, "tflm_out.bin")
        inputs = []  # --input options of `bundlefit run`; tflm_run reads them concatenated
        with open(src, "wb") as f:
            for i, t in enumerate(graph["inputs"]):
                x = rng.integers(-32768, 32768, size=graph["tensors"][t]["shape"], dtype=np.int16)
                f.write(x.tobytes())
                inputs += ["--input", os.path.join(work, f"in{i}.npy")]
                np.save(inputs[-1], x)
        info = json.loads(subprocess.check_output([tflm_run, model, src, dst, "--no-breakdown"]))
        with open(dst, "rb") as f:
            theirs = f.read()
        unreached = clamp_unreached(spec, np.frombuffer(theirs, dtype=np.int16))
        if unreached:
            failures.append(f"{name}: TFLM's output does not test the clamp: {unreached}")
        out_dir = os.path.join(work, "out")
        shutil.rmtree(out_dir, ignore_errors=True)
        quiet = [] if "--use-cmsis" in options else ["-q"]
        # On the host, the reference interpreter's kernel too (--compare).
        report = os.path.join(work, "run.json")
        compare = [] if options else ["--compare", "--json", report]
        run = subprocess.run([bundlefit, "run", model, *inputs,
                              "--output-dir", out_dir, *quiet, *compare, *options],
                             capture_output=True, text=True)
        if run.returncode != 0:
            failures.append(f"{name}: bundlefit run exit {run.returncode}: {run.stderr.strip()}")
            continue
        if compare:
            with open(report) as f:
                diff = json.load(f)["outputs"][0].get("max_abs_diff")
            if diff != 0:
                failures.append(f"{name}: the interpreter's reference differs from the bundle "
                                f"(max |diff| {diff})")
        calls = re.search(r"^CMSIS-NN \(\w+ build\): (\d+) calls", run.stdout + run.stderr, re.M)
        cmsis_models += bool(calls and int(calls.group(1)) > 0)
        if "--cmsis-nn" in options:
            headers += 1
            failure = check_header(bundlefit, model, name, work, options)
            if failure:
                failures.append(failure)
        ours = np.load(os.path.join(out_dir, sorted(os.listdir(out_dir))[0]))
        if list(ours.shape) != info["outputs"][0]["shape"] or ours.dtype != np.int16:
            failures.append(f"{name}: output {ours.dtype}{list(ours.shape)}, TFLM's "
                            f"{info['outputs'][0]['shape']}")
        elif ours.tobytes() != theirs:
            diff = np.abs(ours.astype(np.int64).ravel() -
                          np.frombuffer(theirs, dtype=np.int16).astype(np.int64))
            failures.append(f"{name}: {int(np.count_nonzero(diff))} of {diff.size} values differ "
                            f"from TFLM's, max {int(diff.max())}")
        else:
            saturated = int(np.count_nonzero(np.abs(ours.astype(np.int32)) == 32767 + (ours < 0)))
            bounds = activation_bounds(spec)
            clamp = "" if bounds is None else \
                f", {bounds[0]} to [{bounds[1]}, {bounds[2]}]: " \
                f"{int(np.count_nonzero((ours == bounds[1]) | (ours == bounds[2])))} at a bound"
            print(f"{name}: {ours.size} values byte-identical to TFLM ({saturated} saturated"
                  f"{clamp})")
            exact += 1
    print(f"int16x8 generated: {exact} of {total} models byte-identical to TFLM (tflm_run)")
    for name, spec, text in refusals(rng):  # exit 5 (Unsupported), one line naming the model
        model = write_model(work, schema, name, spec)
        run = subprocess.run([bundlefit, "run", model, "--input", os.path.join(work, "in0.npy"),
                              "--output-dir", os.path.join(work, "out"), "-q", *options],
                             capture_output=True, text=True)
        lines = run.stderr.strip().splitlines()
        ok = run.returncode == 5 and len(lines) == 1 and model in lines[0] and text in lines[0]
        print(f"{name}: exit {run.returncode}" + ("" if ok else f" FAIL {run.stderr.strip()}"))
        if not ok:
            failures.append(f"{name}: not refused in one line naming the model and '{text}'")
    if "--use-cmsis" in options:
        print(f"CMSIS-NN calls in {cmsis_models} models")
    if headers:
        print(f"{headers} --use-cmsis headers compiled with the real arm_nnfunctions.h")
        if cmsis_models < min_cmsis:
            failures.append(f"{cmsis_models} models call CMSIS-NN, fewer than {min_cmsis}")
    for line in failures:
        print("FAIL " + line)
    return 1 if failures or exact < total else 0


if __name__ == "__main__":
    sys.exit(main())
