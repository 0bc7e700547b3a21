#!/usr/bin/env python3
"""bundlefit's bundles vs TFLite Micro (tflm_run), byte for byte (int8 models).

For each TFLite example model in ../shared/third_party/tflm/models, random
inputs (seeded) and, for micro_speech, the features of its four WAVs
(computed by tflm_run on TFLM's audio preprocessor, whose Signal* custom ops
bundlefit does not run) go through `tflm_run` and through `bundlefit run`
(one batch build): every output byte of the int8 models must be equal;
hello_world's float model must be within 1e-5 (relative) of TFLM's, its
byte-identical samples counted (bundlefit's float dot products are summed in
vectorized order). mnist_lstm's float model (UNIDIRECTIONAL_SEQUENCE_LSTM) classifies its
ten sample digits as TFLM does and as labelled, within 1e-5 of TFLM's outputs; its int8
model (TFLM's integer LSTM: int16 gates and cell state) byte for byte on random inputs,
sparse digit-like ones (mostly background, whose outputs saturate less) and the ten digits.
--use-cmsis leaves the float models out (CMSIS-NN is int8).

Exit 77 (ctest SKIP) when ../shared/third_party/tflm is absent, or when a
Cortex-M target is asked and QEMU or the Arm toolchain is missing.

usage: compare_tflm.py BUNDLEFIT TFLM_DIR WORK_DIR [bundlefit run options...]
"""
import json
import os
import shutil
import subprocess
import sys
import wave

import numpy as np

from gray_png import read_gray_png
from tflm_skip import SKIP, skip_reason

TYPES = {"INT8": np.int8, "INT16": np.int16, "FLOAT32": np.float32}
# TFLM's micro_speech labels, in the model's output order.
SPEECH_LABELS = ["silence", "unknown", "yes", "no"]
# mnist_lstm float: 28 float32 steps; bundlefit's Sigmoid and Tanh are its own (no libm).
MNIST_TOLERANCE = 1e-5


def tflm(tflm_run, model, in_bytes, work, *flags):
    """(JSON, output bytes) of one tflm_run invocation."""
    src, dst = os.path.join(work, "tflm_in.bin"), os.path.join(work, "tflm_out.bin")
    if in_bytes:
        with open(src, "wb") as f:
            f.write(in_bytes)
    else:
        src = "-"  # zeros: the JSON describes the model
    info = json.loads(subprocess.check_output([tflm_run, model, src, dst, "--no-breakdown", *flags]))
    with open(dst, "rb") as f:
        return info, f.read()


def random_inputs(info, count, seed):
    """One array per model input, `count` samples stacked along axis 0."""
    rng = np.random.default_rng(seed)
    arrays = []
    for spec in info["inputs"]:
        shape = [count] + spec["shape"][1:]
        dtype = TYPES[spec["type"]]
        if dtype == np.float32:
            arrays.append(rng.uniform(-2, 2, size=shape).astype(np.float32))
        else:
            info_ = np.iinfo(dtype)
            arrays.append(rng.integers(info_.min, info_.max + 1, size=shape).astype(dtype))
    return arrays


def speech_features(tflm_run, models, work):
    """{wav name: int8[1,1960]}: 49 frames of 30 ms, stride 20 ms, streamed
    through TFLM's int8 audio preprocessor as TFLM's micro_speech does."""
    pre = os.path.join(models, "micro_speech", "audio_preprocessor_int8.tflite")
    features = {}
    for name in ["yes", "no", "silence", "noise"]:
        with wave.open(os.path.join(models, "micro_speech", f"{name}_1000ms.wav")) as w:
            audio = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
        frames = b"".join(audio[i * 320:i * 320 + 480].tobytes() for i in range(49))
        _, out = tflm(tflm_run, pre, frames, work, "--stream")
        features[name] = np.frombuffer(out, dtype=np.int8).reshape(1, 1960)
    return features


def run_bundlefit(bundlefit, model, arrays, work, options):
    out_dir = os.path.join(work, "out")
    shutil.rmtree(out_dir, ignore_errors=True)
    args = [bundlefit, "run", model, "--output-dir", out_dir, "-q", *options]
    for i, array in enumerate(arrays):
        path = os.path.join(work, f"in{i}.npy")
        np.save(path, array)
        args += ["--input", path]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return [np.load(os.path.join(out_dir, f)) for f in sorted(os.listdir(out_dir))]


def compare(bundlefit, tflm_run, model, arrays, work, options, tolerance=0.0):
    """Samples whose outputs differ, the first difference, and how many are byte-identical.
    `tolerance` > 0 (float models): a sample differs when an output is further than
    tolerance x max(1, |TFLM's|) from TFLM's; bundlefit's float kernels sum dot products in
    vectorized order, TFLM's reference kernels one term at a time."""
    info, _ = tflm(tflm_run, model, b"", work)
    ours = run_bundlefit(bundlefit, model, arrays, work, options)
    if len(ours) != len(info["outputs"]):
        return len(arrays[0]), f"{len(ours)} outputs, TFLM has {len(info['outputs'])}"
    for o, spec in zip(ours, info["outputs"]):
        if o.dtype != TYPES[spec["type"]]:
            return len(arrays[0]), f"output dtype {o.dtype}, TFLM's {spec['type']}"
    bad, first, identical = 0, "", 0
    count = len(arrays[0])
    for k in range(count):
        _, want = tflm(tflm_run, model, b"".join(a[k:k + 1].tobytes() for a in arrays), work)
        got = b"".join(o[k:k + 1].tobytes() for o in ours)
        identical += got == want
        if got == want:
            continue
        if tolerance > 0:
            g = np.frombuffer(got, ours[0].dtype).astype(np.float64)
            w = np.frombuffer(want, ours[0].dtype).astype(np.float64)
            if np.all(np.abs(g - w) <= tolerance * np.maximum(1.0, np.abs(w))):
                continue
        bad += 1
        if not first:
            first = (f"sample {k}: bundlefit {np.frombuffer(got, ours[0].dtype)[:8]} "
                     f"TFLM {np.frombuffer(want, ours[0].dtype)[:8]}")
    return bad, first, identical


def mnist_digits(bundlefit, tflm_run, models, work, options, int8=False):
    """mnist_lstm (UNIDIRECTIONAL_SEQUENCE_LSTM) on its ten sample digits as TFLM's example
    feeds them (float: pixels / 255; int8: the input's scale 1/255 and zero point -128, so
    pixel - 128): each must classify as TFLM classifies it and as its file's label; float
    within MNIST_TOLERANCE of TFLM's outputs, int8 byte for byte. Returns the failures."""
    name = "trained_lstm_int8.tflite" if int8 else "trained_lstm.tflite"
    model = os.path.join(models, "mnist_lstm", name)
    pixels = np.stack([read_gray_png(os.path.join(models, "mnist_lstm", f"sample{d}.png"))
                       for d in range(10)])
    digits = ((pixels.astype(np.int16) - 128).astype(np.int8) if int8
              else pixels.astype(np.float32) / 255.0)
    ours = run_bundlefit(bundlefit, model, [digits], work, options)[0].reshape(10, -1)
    failures, worst, labels, identical = 0, 0.0, [], 0
    for d in range(10):
        _, want = tflm(tflm_run, model, digits[d].tobytes(), work)
        identical += ours[d].tobytes() == want
        want = np.frombuffer(want, ours.dtype)
        diff = float(np.max(np.abs(ours[d].astype(np.float64) - want)))
        worst = max(worst, diff)
        label = int(np.argmax(ours[d]))
        labels.append(label)
        if (label != int(np.argmax(want)) or label != d or
                (diff > 0 if int8 else diff > MNIST_TOLERANCE)):
            failures += 1
            print(f"mnist_lstm {name} sample{d}.png: bundlefit {label} {ours[d]}, TFLM {want}")
    closeness = (f"{identical} of 10 byte-identical to TFLM" if int8 else
                 f"max |diff| vs TFLM {worst:.3g} (tolerance {MNIST_TOLERANCE:g})")
    print(f"mnist_lstm {'int8' if int8 else 'float'} digits: classified {labels} "
          f"({10 - failures} of 10 as TFLM and their labels); {closeness}")
    return failures


def sparse_digits(count, seed):
    """int8 [count, 28, 28] like the digits: background (-128) with a fifth of the pixels
    random."""
    rng = np.random.default_rng(seed)
    pixels = rng.integers(-128, 128, size=(count, 28, 28))
    return [np.where(rng.random((count, 28, 28)) < 0.2, pixels, -128).astype(np.int8)]


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    bundlefit, tflm_dir, work = sys.argv[1:4]
    options = sys.argv[4:]
    tflm_run = os.path.join(tflm_dir, "bin", "tflm_run")
    models = os.path.join(tflm_dir, "models")
    why = skip_reason(tflm_dir, options)
    if why:
        print(why)
        return SKIP
    os.makedirs(work, exist_ok=True)
    failures = 0
    # int8 models byte for byte; the float one within 1e-5 (relative), its byte-identical
    # samples counted.
    cases = [("hello_world/hello_world_int8.tflite", 64, 0.0),
             ("micro_speech/micro_speech_quantized.tflite", 16, 0.0),
             ("mnist_lstm/trained_lstm_int8.tflite", 16, 0.0),
             ("hello_world/hello_world_float.tflite", 64, 1e-5),
             ("mnist_lstm/trained_lstm.tflite", 8, MNIST_TOLERANCE)]
    for relative, count, tolerance in cases:
        if tolerance and "--use-cmsis" in options:
            continue
        model = os.path.join(models, relative)
        info, _ = tflm(tflm_run, model, b"", work)
        bad, first, identical = compare(bundlefit, tflm_run, model, random_inputs(info, count, 33),
                                        work, options, tolerance)
        within = f", {count - bad} of {count} within {tolerance:g}" if tolerance else ""
        print(f"{relative}: {identical} of {count} random inputs byte-identical to TFLM{within}"
              + (f"; {first}" if bad else ""))
        failures += bad
    # micro_speech on the features of its four WAVs: same bytes, same labels.
    model = os.path.join(models, "micro_speech", "micro_speech_quantized.tflite")
    features = speech_features(tflm_run, models, work)
    names = list(features)
    batch = np.concatenate([features[n] for n in names])
    bad, first, _ = compare(bundlefit, tflm_run, model, [batch], work, options)
    ours = run_bundlefit(bundlefit, model, [batch], work, options)[0]
    labels = [SPEECH_LABELS[int(np.argmax(row))] for row in ours]
    print("micro_speech WAVs: " + ", ".join(f"{n} -> {l}" for n, l in zip(names, labels))
          + f"; {len(names) - bad} of {len(names)} byte-identical to TFLM" + (f"; {first}" if bad else ""))
    failures += bad
    # mnist_lstm int8 on sparse digit-like inputs and on its digits.
    model = os.path.join(models, "mnist_lstm", "trained_lstm_int8.tflite")
    bad, first, identical = compare(bundlefit, tflm_run, model, sparse_digits(16, 33), work,
                                    options)
    print(f"mnist_lstm/trained_lstm_int8.tflite: {identical} of 16 sparse digit-like inputs "
          "byte-identical to TFLM" + (f"; {first}" if bad else ""))
    failures += bad
    failures += mnist_digits(bundlefit, tflm_run, models, work, options, int8=True)
    if "--use-cmsis" not in options:
        failures += mnist_digits(bundlefit, tflm_run, models, work, options)
    print(f"{'FAIL' if failures else 'OK'}: {failures} samples differ from TFLM")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
