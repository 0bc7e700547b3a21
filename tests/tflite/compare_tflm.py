#!/usr/bin/env python3
"""bundlefit's bundles vs TFLite Micro (tflm_run), byte for byte.

For each TFLite example model in ../shared/third_party/tflm/models, random
inputs (seeded) and, for micro_speech, the features of its four WAVs
(computed by tflm_run on TFLM's audio preprocessor, whose Signal* custom ops
bundlefit does not run) go through `tflm_run` and through `bundlefit run`
(one batch build), and every output byte must be equal.

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

SKIP = 77
TYPES = {"INT8": np.int8, "INT16": np.int16, "FLOAT32": np.float32}
# TFLM's micro_speech labels, in the model's output order.
SPEECH_LABELS = ["silence", "unknown", "yes", "no"]


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


def compare(bundlefit, tflm_run, model, arrays, work, options):
    """Samples whose outputs differ, and the first difference."""
    info, _ = tflm(tflm_run, model, b"", work)
    ours = run_bundlefit(bundlefit, model, arrays, work, options)
    if len(ours) != len(info["outputs"]):
        return len(arrays[0]), f"{len(ours)} outputs, TFLM has {len(info['outputs'])}"
    for o, spec in zip(ours, info["outputs"]):
        if o.dtype != TYPES[spec["type"]]:
            return len(arrays[0]), f"output dtype {o.dtype}, TFLM's {spec['type']}"
    bad, first = 0, ""
    count = len(arrays[0])
    for k in range(count):
        _, want = tflm(tflm_run, model, b"".join(a[k:k + 1].tobytes() for a in arrays), work)
        got = b"".join(o[k:k + 1].tobytes() for o in ours)
        if got != want:
            bad += 1
            if not first:
                first = (f"sample {k}: bundlefit {np.frombuffer(got, ours[0].dtype)[:8]} "
                         f"TFLM {np.frombuffer(want, ours[0].dtype)[:8]}")
    return bad, first


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    bundlefit, tflm_dir, work = sys.argv[1:4]
    options = sys.argv[4:]
    tflm_run = os.path.join(tflm_dir, "bin", "tflm_run")
    models = os.path.join(tflm_dir, "models")
    if "--use-cmsis" in options:
        cmsis = options[options.index("--cmsis-nn") + 1]
        if not os.path.isdir(cmsis):
            print(f"SKIP: {cmsis} is absent")
            return SKIP
    if not os.path.exists(tflm_run):
        print(f"SKIP: {tflm_run} is absent (../shared/third_party/tflm beside the clone)")
        return SKIP
    if "--target" in options:
        target = options[options.index("--target") + 1]
        if target != "host" and not (shutil.which("qemu-system-arm") and
                                     shutil.which("arm-none-eabi-gcc")):
            print("SKIP: qemu-system-arm or arm-none-eabi-gcc is missing")
            return SKIP
    os.makedirs(work, exist_ok=True)
    failures = 0
    cases = [("hello_world/hello_world_int8.tflite", 64), ("micro_speech/micro_speech_quantized.tflite", 16)]
    for relative, count in cases:
        model = os.path.join(models, relative)
        info, _ = tflm(tflm_run, model, b"", work)
        bad, first = compare(bundlefit, tflm_run, model, random_inputs(info, count, 33), work, options)
        print(f"{relative}: {count - bad} of {count} random inputs byte-identical to TFLM"
              + (f"; {first}" if bad else ""))
        failures += bad
    # micro_speech on the features of its four WAVs: same bytes, same labels.
    model = os.path.join(models, "micro_speech", "micro_speech_quantized.tflite")
    features = speech_features(tflm_run, models, work)
    names = list(features)
    batch = np.concatenate([features[n] for n in names])
    bad, first = compare(bundlefit, tflm_run, model, [batch], work, options)
    ours = run_bundlefit(bundlefit, model, [batch], work, options)[0]
    labels = [SPEECH_LABELS[int(np.argmax(row))] for row in ours]
    print("micro_speech WAVs: " + ", ".join(f"{n} -> {l}" for n, l in zip(names, labels))
          + f"; {len(names) - bad} of {len(names)} byte-identical to TFLM" + (f"; {first}" if bad else ""))
    failures += bad
    print(f"{'FAIL' if failures else 'OK'}: {failures} samples differ from TFLM")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
