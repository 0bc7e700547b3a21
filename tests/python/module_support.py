"""What the Python module's tests share: a small CNN built with onnx.helper,
the command line to compare with, and the import of the module from the build
tree (exit 77, a ctest skip, when it was not built: no pybind11-dev).
"""
import json
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

SKIP = 77


def tiny_cnn(channels=8, size=16):
    """Conv-Relu-MaxPool-Gemm on a 1x1xSxS input, fixed weights."""
    rng = np.random.default_rng(23)
    flat = channels * (size // 2) * (size // 2)
    inits = [
        numpy_helper.from_array(rng.standard_normal((channels, 1, 3, 3)).astype(np.float32), "w"),
        numpy_helper.from_array(rng.standard_normal(channels).astype(np.float32), "b"),
        numpy_helper.from_array(rng.standard_normal((10, flat)).astype(np.float32), "fc_w"),
        numpy_helper.from_array(rng.standard_normal(10).astype(np.float32), "fc_b"),
        numpy_helper.from_array(np.array([1, flat], dtype=np.int64), "shape"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
        helper.make_node("Reshape", ["p", "shape"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["y"], transB=1, name="fc"),
    ]
    graph = helper.make_graph(
        nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    return model


def cli(exe, *args):
    done = subprocess.run([exe, *args], capture_output=True, text=True)
    return done.returncode, done.stdout, done.stderr


def cli_json(exe, *args, expect=0):
    code, out, err = cli(exe, *args, "--json")
    assert code == expect, f"bundlefit {' '.join(args)}: exit {code}: {err}"
    return json.loads(out)


def without(report, *paths):
    """The report minus fields that name the run rather than the model."""
    report = json.loads(json.dumps(report))
    for path in paths:
        node = report
        for key in path[:-1]:
            node = node[key]
        node.pop(path[-1], None)
    return report


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def module_and_cli(usage):
    """(the module, the bundlefit executable) named by argv: BUILD_PYTHON_DIR
    BUNDLEFIT_EXE; the module is None when it was not built."""
    if len(sys.argv) != 3:
        sys.exit(usage)
    return import_bundlefit(sys.argv[1]), sys.argv[2]


def import_bundlefit(module_dir):
    """The module built in module_dir, or None when it was not built."""
    if not any(name.startswith("bundlefit.") and name.endswith(".so")
               for name in (os.listdir(module_dir) if os.path.isdir(module_dir) else [])):
        print(f"SKIP: no Python module in {module_dir} (install pybind11-dev and rebuild)")
        return None
    sys.path.insert(0, module_dir)
    import bundlefit
    return bundlefit
