#!/usr/bin/python3
"""compare_recurrent: LSTM, GRU and RNN bundles against onnxruntime.

The ONNX backend tests (onnx_conformance) cover the default modes with
weights as graph inputs. This covers what they do not, with constant weights
as a real model has them (so the unrolled weights fold): bidirectional and
reverse directions, peepholes, initial states, GRU's linear_before_reset,
and sequence_lens shorter than the sequence. (Batch-major layout is in
the backend tests only: onnxruntime's CPU kernels refuse layout 1.) Each model is compiled and run by `bundlefit run` (host, or
--target cortex-m7 under QEMU) and by onnxruntime-node (tests/qdq/ort_run.js)
on the same input; every output element must agree within 1e-4 absolute +
1e-4 relative (float32, different summation orders).

  compare_recurrent.py BUNDLEFIT WORK ORT_MODULE_DIR [--target cortex-m7]

Exit 77 (CTest SKIP) without onnxruntime-node or a runnable target.
"""
import json
import os
import subprocess
import sys
import zlib

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "qdq"))
from reference_runs import (SKIP, TargetUnavailable, comparison_args,  # noqa: E402
                            run_bundle, run_onnxruntime)


def recurrent_model(name, op, hidden, seq, batch, inp, output_index, direction="forward",
                    layout=0, bias=True, initial=False, peepholes=False, lengths=None, **attrs):
    """One recurrent node with constant weights; the graph output is output
    `output_index` (0 = Y, 1 = Y_h, 2 = Y_c)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    dirs = 2 if direction == "bidirectional" else 1
    inits = [numpy_helper.from_array(rng.normal(0, 0.5, (dirs, gates * hidden, inp)).astype(np.float32), "W"),
             numpy_helper.from_array(rng.normal(0, 0.5, (dirs, gates * hidden, hidden)).astype(np.float32), "R")]
    inputs = ["X", "W", "R"]
    inputs.append("B" if bias else "")
    if bias:
        inits.append(numpy_helper.from_array(rng.normal(0, 0.3, (dirs, 2 * gates * hidden)).astype(np.float32), "B"))
    inputs.append("L" if lengths is not None else "")
    if lengths is not None:
        inits.append(numpy_helper.from_array(np.array(lengths, dtype=np.int32), "L"))
    state = (dirs, batch, hidden) if layout == 0 else (batch, dirs, hidden)
    inputs.append("H0" if initial else "")
    if initial:
        inits.append(numpy_helper.from_array(rng.normal(0, 0.5, state).astype(np.float32), "H0"))
    if op == "LSTM":
        inputs.append("C0" if initial else "")
        if initial:
            inits.append(numpy_helper.from_array(rng.normal(0, 0.5, state).astype(np.float32), "C0"))
        inputs.append("P" if peepholes else "")
        if peepholes:
            inits.append(numpy_helper.from_array(rng.normal(0, 0.5, (dirs, 3 * hidden)).astype(np.float32), "P"))
    while inputs and inputs[-1] == "":
        inputs.pop()
    outputs = ["", "", ""][:3 if op == "LSTM" else 2]
    outputs[output_index] = "out"
    while outputs[-1] == "":
        outputs.pop()
    node = helper.make_node(op, inputs, outputs, hidden_size=hidden, direction=direction,
                            layout=layout, **attrs)
    x_shape = [seq, batch, inp] if layout == 0 else [batch, seq, inp]
    y_shape = ([seq, dirs, batch, hidden] if layout == 0 else [batch, seq, dirs, hidden]) \
        if output_index == 0 else list(state)
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, y_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 7
    return model, rng.normal(0, 1, x_shape).astype(np.float32)


CASES = [
    ("lstm_bidir_peepholes_y", "LSTM", dict(hidden=4, seq=5, batch=2, inp=3, output_index=0,
                                            direction="bidirectional", initial=True, peepholes=True)),
    ("lstm_bidir_peepholes_yc", "LSTM", dict(hidden=4, seq=5, batch=2, inp=3, output_index=2,
                                             direction="bidirectional", initial=True, peepholes=True)),
    ("lstm_lengths_yh", "LSTM", dict(hidden=6, seq=4, batch=3, inp=2, output_index=1,
                                     lengths=[4, 1, 3])),
    ("gru_reverse_lbr_y", "GRU", dict(hidden=5, seq=6, batch=2, inp=4, output_index=0,
                                      direction="reverse", linear_before_reset=1)),
    ("gru_bidir_initial_yh", "GRU", dict(hidden=3, seq=4, batch=2, inp=5, output_index=1,
                                         direction="bidirectional", initial=True)),
    ("gru_lengths_y", "GRU", dict(hidden=4, seq=5, batch=2, inp=3, output_index=0, lengths=[5, 2])),
    ("rnn_reverse_initial_y", "RNN", dict(hidden=7, seq=3, batch=1, inp=4, output_index=0,
                                          direction="reverse", initial=True)),
    ("rnn_lengths_int32_yh", "RNN", dict(hidden=4, seq=5, batch=3, inp=2, output_index=1,
                                         lengths=[2, 5, 1])),
]


def check_shared_weights(bundlefit, work):
    """The unrolled steps share the weights: a 49-step bidirectional GRU's
    (and peephole LSTM's) planned constants are the ONNX weights' bytes plus
    at most the 64-byte alignment of each of a few constants (per direction:
    weights, biases, peepholes, initial state; not one per step: a GRU once
    planned 2.41 MB of constants for 81 KB of weights). Returns the number of
    failures."""
    failed = 0
    for name, op, spec in [
            ("gru_49_steps_shared", "GRU", dict(hidden=8, seq=49, batch=1, inp=4, output_index=1,
                                                direction="bidirectional", linear_before_reset=1)),
            ("lstm_49_steps_shared", "LSTM", dict(hidden=8, seq=49, batch=1, inp=4, output_index=1,
                                                  peepholes=True))]:
        model, _ = recurrent_model(name, op, **spec)
        path = os.path.join(work, name + ".onnx")
        report = os.path.join(work, name + ".plan.json")
        save(model, path)
        subprocess.run([bundlefit, "-q", "plan", path, "--json", report], check=True,
                       stdout=subprocess.DEVNULL)
        with open(report) as f:
            plan = json.load(f)
        weights = sum(numpy_helper.to_array(t).nbytes for t in model.graph.initializer)
        constants, count = plan["sizes"]["constant"], len(plan["constants"])
        ok = count <= 20 and constants <= weights + 64 * count
        failed += 0 if ok else 1
        print(f"{name:28s} constants {constants} B in {count} tensors for {weights} B of weights "
              f"{'ok' if ok else 'FAILED (copied per step?)'}")
    return failed


def main():
    args = comparison_args()
    if args is None:
        return SKIP
    failed = check_shared_weights(args.bundlefit, args.work) if args.target == "host" else 0
    for name, op, spec in CASES:
        model, x = recurrent_model(name, op, **spec)
        path = os.path.join(args.work, name + ".onnx")
        npy = os.path.join(args.work, name + ".input.npy")
        save(model, path)
        np.save(npy, x)
        outdir = os.path.join(args.work, name + "." + args.target)
        try:
            ours, _ = run_bundle(args.bundlefit, path, npy, outdir, args.target)
            ref = run_onnxruntime(args.ort_module_dir, path, npy,
                                  os.path.join(args.work, name + ".ort.raw"), whole=True)
        except TargetUnavailable as e:
            print(e)
            return SKIP
        except RuntimeError as e:
            print(f"{name}: {e}")
            failed += 1
            continue
        ours, ref = ours.astype(np.float64), ref.astype(np.float64)
        if ref.size != ours.size:
            print(f"{name}: {ours.size} values, onnxruntime has {ref.size}")
            failed += 1
            continue
        ref = ref.reshape(ours.shape)
        worst = float(np.max(np.abs(ours - ref) - 1e-4 * np.abs(ref)))
        ok = worst <= 1e-4
        failed += 0 if ok else 1
        print(f"{name:28s} {args.target}: {ours.size:4d} values, max |bundle - onnxruntime| "
              f"{float(np.max(np.abs(ours - ref))):.2e}  {'ok' if ok else 'FAILED'}")
    print(f"{failed} failure(s); {len(CASES)} recurrent models compared with onnxruntime")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
