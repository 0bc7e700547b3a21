#!/usr/bin/python3
"""quantized_recurrent: profiled int8 LSTM and GRU against onnxruntime.

An unrolled recurrent layer quantizes like any float graph (compile
--load-profile), with three things asked of it here:
- the per-step products run as int8 Gemms, the gates through the int8 LUTs
  (Sigmoid, Tanh): at most `MAX_QDQ` Quantize and Dequantize nodes in all,
  whatever the sequence length (the float input quantized once, whole, its
  per-step Slices int8 views; the output; the first step's nodes that read
  the zero initial state; a constant). Measured 9-16; it was 25-47 with a
  float Slice and a Quantize per step. GRU's 1 - z is an int8 table (a Sub of
  a scalar constant; it was a Dequantize and a Quantize per step in float);
- the steps share the int8 weights: the planned constants are at most the
  float weights' bytes / 2 (int8 weights, int32 biases), not one copy per step;
- the int8 outputs stay within `MAX_ERROR` (absolute, `MAX_MEAN_ERROR` on
  average; the state lies in [-1, 1]) of onnxruntime's float outputs on an
  input outside the profile's. (Measured: max 0.032-0.15, mean 0.007-0.02,
  the same to 4 digits with one Quantize per step or one for the whole input;
  the float MatMuls between Quantize and Dequantize before were max 0.04-0.23,
  mean 0.008-0.025 on the same models.)

  quantized_recurrent.py BUNDLEFIT WORK ORT_MODULE_DIR [--target cortex-m7]

Exit 77 (CTest SKIP) without onnxruntime-node or a runnable target.
"""
import json
import os
import re
import subprocess
import sys

import numpy as np
from onnx import numpy_helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "qdq"))
sys.path.insert(0, HERE)
from compare_recurrent import recurrent_model  # noqa: E402
from reference_runs import (SKIP, TargetUnavailable, comparison_args,  # noqa: E402
                            run_bundle, run_onnxruntime)

MAX_QDQ = 16
MAX_ERROR = 0.2
MAX_MEAN_ERROR = 0.03

CASES = [
    ("lstm_int8_y", "LSTM", dict(hidden=16, seq=24, batch=1, inp=8, output_index=0)),
    ("lstm_bidir_int8_yh", "LSTM", dict(hidden=12, seq=16, batch=1, inp=6, output_index=1,
                                        direction="bidirectional")),
    ("gru_int8_y", "GRU", dict(hidden=16, seq=24, batch=1, inp=8, output_index=0)),
    ("gru_lbr_int8_yh", "GRU", dict(hidden=12, seq=16, batch=2, inp=6, output_index=1,
                                    linear_before_reset=1)),
]


def quantization_counts(bundlefit, model, profile, report):
    """(Quantize, Dequantize) nodes of the int8 build and its planned constants."""
    run = subprocess.run([bundlefit, "plan", model, "--load-profile", profile, "--json", report],
                         capture_output=True, text=True, check=True)
    m = re.search(r"\((\d+) Quantize, (\d+) Dequantize inserted\)", run.stdout + run.stderr)
    with open(report) as f:
        plan = json.load(f)
    return int(m.group(1)), int(m.group(2)), plan["sizes"]["constant"], len(plan["constants"])


def main():
    args = comparison_args()
    if args is None:
        return SKIP
    failed = 0
    for name, op, spec in CASES:
        model, x = recurrent_model(name, op, **spec)
        rng = np.random.default_rng(len(name))
        path = os.path.join(args.work, name + ".onnx")
        save(model, path)
        calib = os.path.join(args.work, name + ".calib")
        os.makedirs(calib, exist_ok=True)
        for k in range(12):
            np.save(os.path.join(calib, f"{k}.npy"), rng.normal(0, 1, x.shape).astype(np.float32))
        profile = os.path.join(args.work, name + ".yaml")
        subprocess.run([args.bundlefit, "-q", "profile", path, calib, "-o", profile], check=True,
                       stdout=subprocess.DEVNULL)
        npy = os.path.join(args.work, name + ".input.npy")
        np.save(npy, x)
        try:
            ours, _ = run_bundle(args.bundlefit, path, npy, os.path.join(args.work, name + "." + args.target),
                                 args.target, extra=("--load-profile", profile))
            ref = run_onnxruntime(args.ort_module_dir, path, npy,
                                  os.path.join(args.work, name + ".ort.raw"), whole=True)
        except TargetUnavailable as e:
            print(e)
            return SKIP
        except RuntimeError as e:
            print(f"{name}: {e}")
            failed += 1
            continue
        quantize, dequantize, constants, count = quantization_counts(
            args.bundlefit, path, profile, os.path.join(args.work, name + ".plan.json"))
        weights = sum(numpy_helper.to_array(t).nbytes for t in model.graph.initializer)
        error = np.abs(ours.astype(np.float64).ravel() - ref.astype(np.float64))
        problems = []
        if float(error.max()) > MAX_ERROR or float(error.mean()) > MAX_MEAN_ERROR:
            problems.append(f"error above {MAX_ERROR} (mean {MAX_MEAN_ERROR})")
        if quantize + dequantize > MAX_QDQ:
            problems.append(f"more than {MAX_QDQ} Quantize + Dequantize (a Quantize per step?)")
        if constants > weights // 2 + 64 * count or count > 20:
            problems.append("int8 weights copied per step?")
        failed += 1 if problems else 0
        print(f"{name:20s} {args.target}: {ours.size:4d} values, |int8 - onnxruntime float| max "
              f"{error.max():.4f} mean {error.mean():.4f}; {quantize} Quantize, {dequantize} "
              f"Dequantize; constants {constants} B ({count}) for {weights} B of float weights  "
              f"{'; '.join(problems) or 'ok'}")
    print(f"{len(CASES) - failed} of {len(CASES)} int8 recurrent models within bounds")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
