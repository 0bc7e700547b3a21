#!/usr/bin/python3
"""measure_own: instructions per MAC and per output element of bundlefit's own kernels, float and int8, on each Cortex-M core (issue 21).

measure_cmsis.py counts the real CMSIS-NN; this counts what bundlefit itself generates, on the same
workloads (the shapes of bench/cost/cmsis_kernels.c; fully connected 256 -> 256 where CMSIS-NN's is 256 -> 64,
see WORKLOADS): one-layer ONNX models compiled with
`bundlefit run --target CORE --memory-opt 0` (the plain kernels: no fusion, no tiling), float and int8
(int8 profiled on the workload's own random input). Each bundle runs under QEMU with
../shared/tools/qemu-insncount on 1 and on 5 samples; (count(5) - count(1)) / 4 is one inference,
the firmware's start-up cancels out. An int8 model also quantizes its float input and dequantizes its
output on every inference (for a 16x16x32 depthwise layer, more than its MACs), so every workload is
counted as a chain of two layers minus a chain of one (same shapes, so the I/O is the same): one
layer from its input activation to its output activation. Divided by the layer's MACs: instructions
per MAC (float and int8 alike).

Layers without MACs (elementwise Add, Transpose, MaxPool 2x2, Relu) are measured per output element,
the same chain difference divided by the layer's output elements. apply_measured.py turns these into
each library's cycles_per_element.

bench/cost/apply_measured.py turns these into the portable_float and portable_int8 figures of every
part without a published timing (x the core's cycles per instruction, as for CMSIS-NN), per MAC and
per element.

Writes bench/results/own_insns.json (with the git commit) and prints a table. Needs arm-none-eabi-gcc,
qemu-system-arm and python3-onnx.

  /usr/bin/python3 bench/cost/measure_own.py --bundlefit build/bin/bundlefit [--cores cortex-m7,...]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from common import git_commit, run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared"))
CORES = ["cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55"]
SAMPLES = 5


def conv_model(name, cin, hw, cout, k, group=1, layers=1):
    """`layers` Convs k x k (same padding) in a chain on a 1 x cin x hw x hw input; group=cin makes
    them depthwise. A chain longer than one needs cin == cout. Returns (graph, input shape, MACs
    of one layer)."""
    assert layers == 1 or cin == cout, "a conv chain needs cin == cout"
    rng = np.random.default_rng(1)
    nodes, weights, x = [], [], "x"
    for i in range(layers):
        w = rng.normal(0, 0.2, (cout, cin // group, k, k)).astype(np.float32)
        b = rng.normal(0, 0.1, cout).astype(np.float32)
        y = "y" if i == layers - 1 else f"t{i}"
        nodes.append(helper.make_node("Conv", [x, f"w{i}", f"b{i}"], [y], kernel_shape=[k, k], pads=[k // 2] * 4,
                                      group=group))
        weights += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        x = y
    graph = helper.make_graph(nodes, f"{name}{layers}",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, cin, hw, hw])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, cout, hw, hw])],
                              weights)
    macs = cout * hw * hw * (cin // group) * k * k
    return graph, [1, cin, hw, hw], macs


def fc_model(name, n_in, n_out, layers=1):
    """`layers` Gemms (fully connected) in a chain; longer than one needs n_in == n_out."""
    assert layers == 1 or n_in == n_out, "a fully connected chain needs n_in == n_out"
    rng = np.random.default_rng(2)
    nodes, weights, x = [], [], "x"
    for i in range(layers):
        w = rng.normal(0, 0.1, (n_out, n_in)).astype(np.float32)
        b = rng.normal(0, 0.1, n_out).astype(np.float32)
        y = "y" if i == layers - 1 else f"t{i}"
        nodes.append(helper.make_node("Gemm", [x, f"w{i}", f"b{i}"], [y], transB=1))
        weights += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        x = y
    graph = helper.make_graph(nodes, f"{name}{layers}",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n_in])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n_out])],
                              weights)
    return graph, [1, n_in], n_in * n_out


def element_chain(name, shape, layers, make_node, prefix=None):
    """`layers` element-bound nodes in a chain on a `shape` input whose output has the same shape,
    after a `prefix` node (x -> "p") when given."""
    nodes, x = ([prefix("x", "p")], "p") if prefix else ([], "x")
    for i in range(layers):
        y = "y" if i == layers - 1 else f"t{i}"
        nodes.append(make_node(i, x, y))
        x = y
    return helper.make_graph(nodes, f"{name}{layers}",
                             [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])


def add_model(layers):
    """Elementwise Add of two activations, 1 x 32 x 16 x 16: the chain's value and the input (the
    first layer adds the input to itself). int8 Add needs both operands activations."""
    return element_chain("add", [1, 32, 16, 16], layers,
                         lambda i, x, y: helper.make_node("Add", [x, "x"], [y]))


def transpose_model(layers):
    """Transposes NCHW <-> NHWC in turn; an even chain returns to the input's shape (16 x 32 x 16).
    A Transpose runs in int8 only on an int8 producer's output, so an Add comes first."""
    perms = ([0, 2, 3, 1], [0, 3, 1, 2])
    return element_chain("transpose", [1, 16, 32, 16], layers,
                         lambda i, x, y: helper.make_node("Transpose", [x], [y], perm=perms[i % 2]),
                         prefix=lambda x, y: helper.make_node("Add", [x, x], [y]))


def maxpool_model(layers):
    """MaxPool 2x2, stride 1, padded at the end so the shape stays 1 x 32 x 16 x 16 (4 reads per
    output; the kernel is the same loop for any stride and padding)."""
    return element_chain("maxpool", [1, 32, 16, 16], layers,
                         lambda i, x, y: helper.make_node("MaxPool", [x], [y], kernel_shape=[2, 2],
                                                          strides=[1, 1], pads=[0, 0, 1, 1]))


def relu_model(layers):
    """Relu on 1 x 32 x 16 x 16 (standalone where it follows an Add, as in ResNet-8)."""
    return element_chain("relu", [1, 32, 16, 16], layers, lambda i, x, y: helper.make_node("Relu", [x], [y]))


# Element workloads: name -> (model of n layers, layers of the shorter chain, layers the longer adds,
# output elements per layer). The Transpose chains are 2 and 4 layers long (both end in the input's
# layout); their difference is two layers.
ELEMENT_WORKLOADS = {
    "add 16x16x32": (add_model, 1, 1, 32 * 16 * 16),
    "transpose 16x32x16": (transpose_model, 2, 2, 16 * 32 * 16),
    "maxpool 2x2, 16x16x32": (maxpool_model, 1, 1, 32 * 16 * 16),
    "relu 16x16x32": (relu_model, 1, 1, 32 * 16 * 16),
}

# MAC workloads: name -> model of n layers. Each is measured as a chain of two layers minus a chain
# of one (same input and output, so the int8 model's float quantize and dequantize cancel out, as
# for the element workloads): one layer from its input activation to its output activation. The
# convolution names and shapes are measure_cmsis.py's (cmsis_kernels.c), so apply_measured.py reads
# both tables alike; their input and output shapes already match. The fully connected layer chains
# only with as many outputs as inputs: 256 -> 256 here where CMSIS-NN is measured on 256 -> 64, the
# same 256-long dot product per output (each output's fixed cost is spread over the same 256 MACs).
WORKLOADS = {
    "conv 3x3, 16x16x16 -> 16": lambda layers: conv_model("conv3x3", 16, 16, 16, 3, layers=layers),
    "conv 1x1, 16x16x32 -> 32": lambda layers: conv_model("conv1x1", 32, 16, 32, 1, layers=layers),
    "depthwise 3x3, 16x16x32": lambda layers: conv_model("dw3x3", 32, 16, 32, 3, group=32, layers=layers),
    "fully connected 256 -> 256": lambda layers: fc_model("fc", 256, 256, layers=layers),
}


def counting_qemu(plugin, work):
    """A qemu-system-arm wrapper that loads the plugin and writes its count to a log per run."""
    qemu = shutil.which("qemu-system-arm")
    log = os.path.join(work, "insncount.log")
    wrapper = os.path.join(work, "qemu-count.sh")
    with open(wrapper, "w") as f:
        f.write(f"#!/bin/sh\nexec {qemu} -plugin {plugin} -d plugin -D {log} \"$@\"\n")
    os.chmod(wrapper, 0o755)
    return wrapper, log


def count_of(log):
    with open(log) as f:
        text = f.read()
    os.remove(log)
    for line in text.splitlines():
        if line.startswith("insncount:"):
            return int(line.split()[1])
    raise RuntimeError("no insncount in " + text[-300:])


def measure(bundlefit, env, log, work, model, shape, core, int8):
    """Instructions of one inference of `model` on one core."""
    rng = np.random.default_rng(3)
    one = rng.uniform(-1, 1, shape).astype(np.float32)
    inputs = {1: os.path.join(work, "x1.npy"), SAMPLES: os.path.join(work, "x5.npy")}
    np.save(inputs[1], one)
    np.save(inputs[SAMPLES], np.concatenate([one] + [rng.uniform(-1, 1, shape).astype(np.float32)
                                                     for _ in range(SAMPLES - 1)]))
    extra = ["--memory-opt", "0"]
    if int8:
        profile = os.path.join(work, "profile.yaml")
        run([bundlefit, "-q", "profile", model, inputs[SAMPLES], "-o", profile])
        extra += ["--load-profile", profile]
    counts = {}
    for samples, path in inputs.items():
        run([bundlefit, "-q", "run", model, "--target", core, "--input", path,
             "--output-dir", os.path.join(work, "out")] + extra, env=env)
        counts[samples] = count_of(log)
    return (counts[SAMPLES] - counts[1]) / (SAMPLES - 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bundlefit", default=os.path.join(ROOT, "build", "bin", "bundlefit"))
    ap.add_argument("--cores", default=",".join(CORES))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "own_insns.json"))
    args = ap.parse_args()
    plugin_source = os.path.join(SHARED, "tools", "qemu-insncount", "insncount.c")
    if not os.path.exists(plugin_source) or not shutil.which("qemu-system-arm"):
        print("SKIP: needs ../shared/tools/qemu-insncount and qemu-system-arm")
        return 77
    work = tempfile.mkdtemp(prefix="bundlefit-own-insns-")
    plugin = os.path.join(work, "libinsncount.so")
    run(["gcc", "-shared", "-fPIC", "-O2", "-o", plugin, plugin_source])
    wrapper, log = counting_qemu(plugin, work)
    env = dict(os.environ, BUNDLEFIT_QEMU_ARM=wrapper)
    def save(graph):
        path = os.path.join(work, graph.name + ".onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
        return path

    models = {}
    for name, make in WORKLOADS.items():
        graph, shape, macs = make(1)
        models[name] = (save(graph), save(make(2)[0]), shape, macs)
    chains = {}
    for name, (make, short, extra, elements) in ELEMENT_WORKLOADS.items():
        graph = make(short)
        shape = [d.dim_value for d in graph.input[0].type.tensor_type.shape.dim]
        chains[name] = (save(graph), save(make(short + extra)), shape, extra * elements)
    result = {"schema": "bundlefit.own-insns/3", "commit": git_commit(), "samples": SAMPLES,
              "unit": "guest instructions per MAC (workloads) and per output element (element_workloads) of one "
                      "layer, activation to activation (a 2-layer chain minus a 1-layer chain), bundlefit's own "
                      "kernels at --memory-opt 0", "cores": {}}
    print(f"{'core':<12}{'workload':<28}{'MACs/elts':>9}{'float':>9}{'int8':>9}  insns/MAC")
    for core in args.cores.split(","):
        workloads = {}
        for name, (short, long, shape, macs) in models.items():
            row = {"macs": macs}
            for kind, int8 in (("float", False), ("int8", True)):
                longer = measure(args.bundlefit, env, log, work, long, shape, core, int8)
                shorter = measure(args.bundlefit, env, log, work, short, shape, core, int8)
                row[kind + "_instructions_per_mac"] = round((longer - shorter) / macs, 3)
            workloads[name] = row
            print(f"{core:<12}{name:<28}{macs:>9,}{row['float_instructions_per_mac']:>9.3f}"
                  f"{row['int8_instructions_per_mac']:>9.3f}", flush=True)
        elements = {}
        for name, (short, long, shape, count) in chains.items():
            row = {"elements": count}
            for kind, int8 in (("float", False), ("int8", True)):
                longer = measure(args.bundlefit, env, log, work, long, shape, core, int8)
                shorter = measure(args.bundlefit, env, log, work, short, shape, core, int8)
                row[kind + "_instructions_per_element"] = round((longer - shorter) / count, 3)
            elements[name] = row
            print(f"{core:<12}{name:<28}{count:>9,}{row['float_instructions_per_element']:>9.3f}"
                  f"{row['int8_instructions_per_element']:>9.3f}  insns/element", flush=True)
        result["cores"][core] = {"workloads": workloads, "element_workloads": elements}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print("wrote " + args.out)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
