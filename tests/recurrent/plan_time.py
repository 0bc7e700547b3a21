#!/usr/bin/python3
"""plan_time: `bundlefit plan` of a 2-layer bidirectional LSTM in bounded CPU.

Issue 32 reported 30 s to plan a 2-layer bidirectional LSTM of 49 steps
(3,358 nodes once unrolled); the target is under 5 s. This builds that model
as torch.onnx.export writes it (LSTM -> Transpose [0, 2, 1, 3] -> Reshape
[0, 0, -1] -> LSTM; 49 steps, batch 1, input 40, hidden 64, constant
weights), runs `bundlefit -q plan` on it and fails when the child's CPU time
(user + system, getrusage RUSAGE_CHILDREN) exceeds --max-cpu.

The default bound, 15 s, is a regression guard, not the target: this
machine is shared (2 cores, several builds) and CI runners differ, so it is
3x the 5 s goal and about 4x the 3.5-4.1 s CPU measured when this test
was written; it catches a return of the 30 s planner, not a 20% slowdown. The
CPU figure is printed for whoever wants the number.

  plan_time.py BUNDLEFIT WORK [--max-cpu SECONDS]
"""
import argparse
import os
import resource
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

SEQ, BATCH, INPUT, HIDDEN = 49, 1, 40, 64


def lstm_layer(rng, name, x, inp):
    """One bidirectional LSTM node reading x [SEQ, BATCH, inp]; its Y is
    [SEQ, 2, BATCH, HIDDEN]."""
    inits = [numpy_helper.from_array(rng.normal(0, 0.2, shape).astype(np.float32), name + s)
             for s, shape in (("_W", (2, 4 * HIDDEN, inp)), ("_R", (2, 4 * HIDDEN, HIDDEN)),
                              ("_B", (2, 8 * HIDDEN)))]
    node = helper.make_node("LSTM", [x, name + "_W", name + "_R", name + "_B"], [name + "_Y"],
                            name=name, hidden_size=HIDDEN, direction="bidirectional")
    return node, inits


def two_layer_lstm():
    rng = np.random.default_rng(32)
    l1, i1 = lstm_layer(rng, "lstm1", "X", INPUT)
    shape = numpy_helper.from_array(np.array([0, 0, -1], np.int64), "flat_shape")
    nodes = [l1,
             helper.make_node("Transpose", ["lstm1_Y"], ["lstm1_T"], name="t1", perm=[0, 2, 1, 3]),
             helper.make_node("Reshape", ["lstm1_T", "flat_shape"], ["lstm1_out"], name="r1")]
    l2, i2 = lstm_layer(rng, "lstm2", "lstm1_out", 2 * HIDDEN)
    nodes += [l2,
              helper.make_node("Transpose", ["lstm2_Y"], ["lstm2_T"], name="t2", perm=[0, 2, 1, 3]),
              helper.make_node("Reshape", ["lstm2_T", "flat_shape"], ["Y"], name="r2")]
    graph = helper.make_graph(
        nodes, "lstm2_bidir_49",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [SEQ, BATCH, INPUT])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [SEQ, BATCH, 2 * HIDDEN])],
        i1 + [shape] + i2)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 7
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundlefit")
    ap.add_argument("work")
    ap.add_argument("--max-cpu", type=float, default=15.0,
                    help="CPU seconds (user + system) plan may take")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    path = os.path.join(args.work, "lstm2_bidir_49.onnx")
    save(two_layer_lstm(), path)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run([args.bundlefit, "-q", "plan", path], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        print(f"{path}: bundlefit plan failed ({run.returncode}): {run.stderr.strip()}")
        return 1
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    ok = cpu <= args.max_cpu
    print(f"2-layer bidirectional LSTM, {SEQ} steps, input {INPUT}, hidden {HIDDEN}: "
          f"plan {cpu:.2f} s CPU (bound {args.max_cpu:g} s){'' if ok else '  FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
