#!/usr/bin/env python3
"""bundlefit vs TFLite Micro on TFLM's seanet integration tests (int16x8 layers).

../shared/third_party/tflm/models/seanet/<op>/<op>N.tflite: 127 one-operator
models (int16 activations, int8 weights, int64 biases) with TFLM's input and
golden CSVs. Each layer runs through `bundlefit run` on its golden input and
through `tflm_run`; its output must equal tflm_run's byte for byte (and is
counted against the golden CSV too: tflm_run itself differs from 3 goldens by
1 on 1-2 values, within TFLM's test tolerance). A layer whose operator
bundlefit does not run must be refused before any work: exit code 5
(Unsupported) with the operator's name in the one-line error. Prints N of 127
byte-identical and the refused layers by operator; fails on any mismatch,
crash or unnamed refusal, or when fewer than MIN_EXACT layers are exact (so a
regression that refuses everything cannot pass).

Exit 77 (ctest SKIP) when ../shared/third_party/tflm is absent, or when a
Cortex-M target is asked and QEMU or the Arm toolchain is missing.

--per-op K runs only the first K layers of each operator (Cortex-M7 under QEMU: each
layer is one bundle build and link, so CI runs a sample there); --ops a,b only the layers of
those folders (add, conv, ...); MIN_EXACT counts those. With --use-cmsis among the run options,
each bundle's CMSIS-NN calls are counted from `bundlefit run`'s status line, and --min-cmsis N
fails when fewer than N layers call CMSIS-NN (so a mapping that silently falls back to
bundlefit's own kernels cannot pass).

usage: seanet_int16.py BUNDLEFIT TFLM_DIR WORK_DIR MIN_EXACT [--per-op K] [--ops a,b]
                       [--min-cmsis N] [bundlefit run options...]
"""
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter

import numpy as np

from tflm_skip import SKIP, skip_reason

UNSUPPORTED = 5
TYPES = {"INT16": np.int16, "INT32": np.int32, "INT8": np.int8}


def layers(seanet):
    """(folder, stem) of every layer, in folder then numeric order."""
    found = []
    for folder in sorted(os.listdir(seanet)):
        for name in os.listdir(os.path.join(seanet, folder)):
            m = re.fullmatch(r"(\D+)(\d+)\.tflite", name)
            if m:
                found.append((folder, m.group(1), int(m.group(2))))
    return [(folder, f"{op}{n}") for folder, op, n in sorted(found)]


def read_csv(path, dtype):
    with open(path) as f:
        return np.array([int(v) for v in f.read().replace("\n", ",").split(",") if v.strip()],
                        dtype=dtype)


def tflm(tflm_run, model, arrays, work):
    src, dst = os.path.join(work, "tflm_in.bin"), os.path.join(work, "tflm_out.bin")
    with open(src, "wb") as f:
        f.write(b"".join(a.tobytes() for a in arrays))
    info = json.loads(subprocess.check_output([tflm_run, model, src, dst, "--no-breakdown"]))
    with open(dst, "rb") as f:
        return info, f.read()


def main():
    if len(sys.argv) < 5:
        print(__doc__)
        return 2
    bundlefit, tflm_dir, work, min_exact = sys.argv[1:5]
    options = sys.argv[5:]
    per_op, ops, min_cmsis = None, None, 0
    while options[:1] and options[0] in ("--per-op", "--ops", "--min-cmsis"):
        if options[0] == "--per-op":
            per_op = int(options[1])
        elif options[0] == "--ops":
            ops = options[1].split(",")
        else:
            min_cmsis = int(options[1])
        options = options[2:]
    tflm_run = os.path.join(tflm_dir, "bin", "tflm_run")
    seanet = os.path.join(tflm_dir, "models", "seanet")
    why = skip_reason(tflm_dir, options, needs=[os.path.join("models", "seanet")])
    if why:
        print(why)
        return SKIP
    os.makedirs(work, exist_ok=True)
    exact, golden_equal, failures = 0, 0, []
    refused, cmsis_layers = Counter(), Counter()
    all_layers = layers(seanet)
    if ops is not None:
        all_layers = [(f, s) for f, s in all_layers if f in ops]
    if per_op is not None:
        all_layers = [(f, s) for f, s in all_layers
                      if int(re.sub(r"\D", "", s) or 0) < per_op]
    for folder, stem in all_layers:
        model = os.path.join(seanet, folder, stem + ".tflite")
        info = json.loads(subprocess.check_output(
            [tflm_run, model, "-", os.path.join(work, "zeros.bin"), "--no-breakdown"]))
        arrays = []
        for i, spec in enumerate(info["inputs"]):
            dtype = TYPES[spec["type"]]
            csv = os.path.join(seanet, folder, f"{stem}_input{i}_{spec['type'].lower()}.csv")
            arrays.append(read_csv(csv, dtype).reshape(spec["shape"]))
        out_spec = info["outputs"][0]
        out_type = TYPES[out_spec["type"]]
        _, theirs = tflm(tflm_run, model, arrays, work)
        out_dir = os.path.join(work, "out")
        shutil.rmtree(out_dir, ignore_errors=True)
        # Not -q with --use-cmsis: the status line counts the CMSIS-NN calls.
        quiet = [] if "--use-cmsis" in options else ["-q"]
        args = [bundlefit, "run", model, "--output-dir", out_dir, *quiet, *options]
        for i, array in enumerate(arrays):
            path = os.path.join(work, f"in{i}.npy")
            np.save(path, array)
            args += ["--input", path]
        run = subprocess.run(args, capture_output=True, text=True)
        calls = re.search(r"^CMSIS-NN \(\w+ build\): (\d+) calls", run.stdout + run.stderr, re.M)
        if calls and int(calls.group(1)) > 0:
            cmsis_layers[folder.upper()] += 1
        op = folder.upper()
        if run.returncode == UNSUPPORTED:
            message = "\n".join(line for line in run.stderr.splitlines()
                                if line.startswith("bundlefit:"))
            if op not in message or "\n" in message:
                failures.append(f"{stem}: refused without naming {op} in one line: {message}")
            refused[op] += 1
            continue
        if run.returncode != 0:
            failures.append(f"{stem}: bundlefit run exit {run.returncode}: {run.stderr.strip()}")
            continue
        outputs = sorted(os.listdir(out_dir))
        ours = np.load(os.path.join(out_dir, outputs[0]))
        if ours.dtype != out_type or list(ours.shape) != out_spec["shape"]:
            failures.append(f"{stem}: output {ours.dtype}{list(ours.shape)}, TFLM's "
                            f"{out_spec['type']}{out_spec['shape']}")
            continue
        expected = np.frombuffer(theirs, dtype=out_type).reshape(ours.shape)
        golden = read_csv(os.path.join(seanet, folder,
                                       f"{stem}_golden_{out_spec['type'].lower()}.csv"), out_type)
        if ours.tobytes() == theirs:
            exact += 1
        else:
            diff = np.abs(ours.astype(np.int64) - expected.astype(np.int64))
            failures.append(f"{stem}: {int(np.count_nonzero(diff))} of {diff.size} values differ "
                            f"from TFLM's, max {int(diff.max())}")
        golden_equal += int(ours.tobytes() == golden.tobytes())
    total = len(all_layers)
    print(f"seanet int16x8: {exact} of {total} layers byte-identical to TFLM (tflm_run), "
          f"{golden_equal} equal to TFLM's goldens")
    if refused:
        print("refused by name: " + ", ".join(f"{op} ({n})" for op, n in sorted(refused.items())))
    if "--use-cmsis" in options:
        print(f"CMSIS-NN calls in {sum(cmsis_layers.values())} layers: " +
              ", ".join(f"{op} ({n})" for op, n in sorted(cmsis_layers.items())))
        if sum(cmsis_layers.values()) < min_cmsis:
            failures.append(f"{sum(cmsis_layers.values())} layers call CMSIS-NN, fewer than the "
                            f"{min_cmsis} expected")
    for line in failures:
        print("FAIL " + line)
    if exact < int(min_exact):
        print(f"FAIL: {exact} exact layers, fewer than the {min_exact} expected")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
