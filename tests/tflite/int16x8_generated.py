#!/usr/bin/env python3
"""bundlefit vs TFLite Micro on generated int16x8 DEPTHWISE_CONV_2D, FULLY_CONNECTED, pooling and
SOFTMAX models.

seanet has none of these operators, so this writes small one-operator .tflite
models (int16 activations with zero point 0, int8 weights per channel or per
tensor, int64 biases or none) as TFLite JSON and turns them into flatbuffers
with flatc and the importer's schema: depthwise convolutions over several
strides, dilations, depth multipliers and both paddings; fully-connected
layers with and without bias, batched and keep_num_dims (TFLM's int16
depthwise needs a bias); average and max pooling over several filters,
strides, both paddings and fused RELU/RELU6; softmaxes of several row
lengths, betas and input scales. Each runs on seeded random int16 inputs
through `tflm_run` and `bundlefit run`; the outputs must be equal byte for
byte (on the host, the reference interpreter's too: `run --compare`). A
depthwise whose depth_multiplier contradicts its weights, a per-channel
fully-connected, a pooling that rescales and a softmax whose output scale is
not 1/32768 must be refused in one line naming them. With --use-cmsis among
the run options, --min-cmsis N fails when fewer than N models call CMSIS-NN
(read from `bundlefit run`'s status line).

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

AVERAGE_POOL_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, MAX_POOL_2D, SOFTMAX = 1, 4, 9, 17, 25


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

    def json(self, code, name, inputs, output, options_type, options):
        return {"version": 3,
                "operator_codes": [{"deprecated_builtin_code": code, "builtin_code": name,
                                    "version": 1}],
                "subgraphs": [{"tensors": self.tensors, "inputs": [inputs[0]], "outputs": [output],
                               "operators": [{"opcode_index": 0, "inputs": inputs,
                                              "outputs": [output],
                                              "builtin_options_type": options_type,
                                              "builtin_options": options}]}],
                "buffers": self.buffers}


def out_scale(in_scale, w_scale, taps, rng):
    """An output scale that maps typical sums of `taps` products into int16, a little saturated."""
    return in_scale * w_scale * 20000.0 * 64.0 * np.sqrt(taps) / 9000.0 * rng.uniform(0.5, 1.5)


def depthwise(rng, x_shape, kernel, mult, stride, dilation, padding, bias, per_channel):
    n, h, w, c = x_shape
    m = c * mult
    model = Model()
    in_scale = rng.uniform(1e-4, 1e-3)
    weights = rng.integers(-127, 128, size=(1, kernel[0], kernel[1], m), dtype=np.int8)
    w_scales = rng.uniform(0.002, 0.02, size=m if per_channel else 1)
    x = model.tensor("x", x_shape, "INT16", [in_scale])
    wt = model.tensor("w", weights.shape, "INT8", w_scales, weights, axis=3)
    inputs = [x, wt]
    if bias:
        values = rng.integers(-2**22, 2**22, size=m).astype(np.int64)
        inputs.append(model.tensor("b", [m], "INT64", in_scale * w_scales, values))
    else:
        inputs.append(-1)
    span = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    if padding == "SAME":
        oh, ow = -(-h // stride[0]), -(-w // stride[1])
    else:
        oh, ow = (h - span[0]) // stride[0] + 1, (w - span[1]) // stride[1] + 1
    scale = out_scale(in_scale, float(np.max(w_scales)), kernel[0] * kernel[1], rng)
    y = model.tensor("y", [n, oh, ow, m], "INT16", [scale])
    options = {"padding": padding, "stride_w": stride[1], "stride_h": stride[0],
               "depth_multiplier": mult, "dilation_w_factor": dilation[1],
               "dilation_h_factor": dilation[0]}
    return model.json(DEPTHWISE_CONV_2D, "DEPTHWISE_CONV_2D", inputs, y,
                      "DepthwiseConv2DOptions", options)


def fully_connected(rng, x_shape, outputs, bias, keep_num_dims):
    k = x_shape[-1]
    model = Model()
    in_scale = rng.uniform(1e-4, 1e-3)
    weights = rng.integers(-127, 128, size=(outputs, k), dtype=np.int8)
    w_scale = rng.uniform(0.002, 0.02)
    x = model.tensor("x", x_shape, "INT16", [in_scale])
    wt = model.tensor("w", weights.shape, "INT8", [w_scale], weights)
    inputs = [x, wt]
    if bias:
        values = rng.integers(-2**24, 2**24, size=outputs).astype(np.int64)
        inputs.append(model.tensor("b", [outputs], "INT64", [in_scale * w_scale], values))
    else:
        inputs.append(-1)
    batches = int(np.prod(x_shape)) // k
    y_shape = list(x_shape[:-1]) + [outputs] if keep_num_dims else [batches, outputs]
    y = model.tensor("y", y_shape, "INT16", [out_scale(in_scale, w_scale, k, rng)])
    return model.json(FULLY_CONNECTED, "FULLY_CONNECTED", inputs, y, "FullyConnectedOptions",
                      {"keep_num_dims": keep_num_dims})


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


def write_model(work, schema, name, spec):
    source = os.path.join(work, name + ".json")
    with open(source, "w") as f:
        json.dump(spec, f)
    subprocess.run(["flatc", "-b", "-o", work, schema, source], check=True)
    return os.path.join(work, name + ".tflite")  # the schema's file_extension


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
    failures, exact, cmsis_models, total = [], 0, 0, 0
    for name, spec in models(rng):
        total += 1
        model = write_model(work, schema, name, spec)
        x_shape = spec["subgraphs"][0]["tensors"][0]["shape"]
        x = rng.integers(-32768, 32768, size=x_shape, dtype=np.int16)
        src, dst = os.path.join(work, "tflm_in.bin"), os.path.join(work, "tflm_out.bin")
        x.tofile(src)
        info = json.loads(subprocess.check_output([tflm_run, model, src, dst, "--no-breakdown"]))
        with open(dst, "rb") as f:
            theirs = f.read()
        np.save(os.path.join(work, "in.npy"), x)
        out_dir = os.path.join(work, "out")
        shutil.rmtree(out_dir, ignore_errors=True)
        quiet = [] if "--use-cmsis" in options else ["-q"]
        # On the host, the reference interpreter's kernel too (--compare).
        report = os.path.join(work, "run.json")
        compare = [] if options else ["--compare", "--json", report]
        run = subprocess.run([bundlefit, "run", model, "--input", os.path.join(work, "in.npy"),
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
            print(f"{name}: {ours.size} values byte-identical to TFLM ({saturated} saturated)")
            exact += 1
    print(f"int16x8 generated: {exact} of {total} models byte-identical to TFLM (tflm_run)")
    for name, spec, text in refusals(rng):  # exit 5 (Unsupported), one line naming the model
        model = write_model(work, schema, name, spec)
        run = subprocess.run([bundlefit, "run", model, "--input", os.path.join(work, "in.npy"),
                              "--output-dir", os.path.join(work, "out"), "-q", *options],
                             capture_output=True, text=True)
        lines = run.stderr.strip().splitlines()
        ok = run.returncode == 5 and len(lines) == 1 and model in lines[0] and text in lines[0]
        print(f"{name}: exit {run.returncode}" + ("" if ok else f" FAIL {run.stderr.strip()}"))
        if not ok:
            failures.append(f"{name}: not refused in one line naming the model and '{text}'")
    if "--use-cmsis" in options:
        print(f"CMSIS-NN calls in {cmsis_models} models")
        if cmsis_models < min_cmsis:
            failures.append(f"{cmsis_models} models call CMSIS-NN, fewer than {min_cmsis}")
    for line in failures:
        print("FAIL " + line)
    return 1 if failures or exact < total else 0


if __name__ == "__main__":
    sys.exit(main())
