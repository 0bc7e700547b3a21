#!/usr/bin/python3
"""bundlefit.run() against `bundlefit run` and against ONNX's backend test data.

- A small CNN (bytes to the module, a file to the CLI), one sample and a
  batch of 4, float and int8 with a profile: run() returns the outputs of
  `bundlefit run` bit for bit and its bundlefit.run/1 report field for field
  (but the timings and the file names), with --compare's figures.
- ONNX backend node tests (/usr/share/libonnx-testdata): run() on model.onnx
  with test_data_set_0's inputs (as arrays, by name) gives its expected
  outputs within the conformance suite's tolerance.
- Cortex-M7 under QEMU, when the Arm toolchain and QEMU are there: the same
  outputs as the CLI's on that target.
- Two threads: the outputs of serial runs.
- Errors: bundlefit.Error with the CLI's exit code and category, naming the
  input at fault.

Usage: test_run.py BUILD_PYTHON_DIR BUNDLEFIT_EXE
Exit 77 (a ctest skip) when the module was not built (no pybind11-dev).
"""
import concurrent.futures
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

from module_support import SKIP, check, cli, cli_json, module_and_cli, tiny_cnn

NODE_TESTS = "/usr/share/libonnx-testdata/data/node"
# Cases with one, two and three inputs; every one the interpreter passes.
NODE_CASES = ["test_conv_with_strides_padding", "test_gemm_all_attributes", "test_softmax_example",
              "test_add_bcast"]
RTOL, ATOL = 1e-3, 1e-5  # tests/conformance's tolerance


def comparable(report):
    """A run report minus what names this run rather than its results."""
    report = {k: v for k, v in report.items() if k not in ("build_seconds", "run_seconds", "arrays")}
    report["outputs"] = [{k: v for k, v in o.items() if k != "file"} for o in report["outputs"]]
    return report


def against_cli(bundlefit, exe, model, path, inputs, work, tag, cli_options=(), **options):
    """run() and `bundlefit run` on the same model and inputs: equal outputs and reports."""
    files = []
    for i, array in enumerate(inputs):
        files.append(os.path.join(work, f"{tag}_in{i}.npy"))
        np.save(files[-1], array)
    out_dir = os.path.join(work, f"{tag}_cli")
    args = ["run", path, *sum((["--input", f] for f in files), []), "--output-dir", out_dir]
    cli_report = cli_json(exe, *args, *cli_options)
    py_report = bundlefit.run(model, inputs if len(inputs) > 1 else inputs[0], **options)
    for entry in cli_report["outputs"]:
        expected, got = np.load(entry["file"]), py_report["arrays"][entry["name"]]
        check(got.dtype == expected.dtype and got.shape == expected.shape,
              f"{tag}: {entry['name']} is {got.dtype}{got.shape}, the CLI's {expected.dtype}{expected.shape}")
        check(np.array_equal(got, expected), f"{tag}: {entry['name']} differs from the CLI's")
    check(comparable(py_report) == comparable(cli_report),
          f"{tag}: reports differ:\n{comparable(py_report)}\n{comparable(cli_report)}")
    return py_report


def node_case(bundlefit, name):
    """run() on an ONNX backend node test: max |diff| from its expected outputs."""
    directory = os.path.join(NODE_TESTS, name)
    model = onnx.load(os.path.join(directory, "model.onnx"))
    initializers = {t.name for t in model.graph.initializer}
    input_names = [i.name for i in model.graph.input if i.name not in initializers]
    data = os.path.join(directory, "test_data_set_0")

    def tensors(prefix, count):
        arrays = []
        for i in range(count):
            proto = onnx.TensorProto()
            with open(os.path.join(data, f"{prefix}_{i}.pb"), "rb") as f:
                proto.ParseFromString(f.read())
            arrays.append(numpy_helper.to_array(proto))
        return arrays

    inputs = dict(zip(input_names, tensors("input", len(input_names))))
    expected = tensors("output", len(model.graph.output))
    report = bundlefit.run(os.path.join(directory, "model.onnx"), inputs)
    worst = 0.0
    for output, want in zip(model.graph.output, expected):
        got = report["arrays"][output.name]
        check(got.shape == want.shape, f"{name}: {output.name} shape {got.shape}, expected {want.shape}")
        check(np.allclose(got, want, rtol=RTOL, atol=ATOL),
              f"{name}: {output.name} off by {np.abs(got - want).max():.3g}")
        worst = max(worst, float(np.abs(got.astype(np.float64) - want).max()))
    return worst


def expect_error(bundlefit, call, code, category, named):
    try:
        call()
    except bundlefit.Error as e:
        check((e.exit_code, e.category) == (code, category), f"{e}: {e.exit_code} {e.category}")
        check(named in str(e), f"error does not name {named}: {e}")
        return str(e)
    raise AssertionError(f"no bundlefit.Error naming {named}")


def main():
    bundlefit, exe = module_and_cli(__doc__)
    if bundlefit is None:
        return SKIP

    work = tempfile.mkdtemp(prefix="bundlefit-pyrun-")
    try:
        return checks(bundlefit, exe, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def checks(bundlefit, exe, work):
    """Every check of this test, writing into `work` (removed by main)."""
    data = tiny_cnn().SerializeToString()
    path = os.path.join(work, "tiny.onnx")
    with open(path, "wb") as f:
        f.write(data)
    model = bundlefit.load(data, name="tiny.onnx")
    rng = np.random.default_rng(8)
    x = rng.standard_normal((1, 1, 16, 16)).astype(np.float32)
    batch = rng.standard_normal((4, 1, 16, 16)).astype(np.float32)

    one = against_cli(bundlefit, exe, model, path, [x], work, "one", ["--compare"], compare=True)
    y = one["arrays"]["y"]
    check(one["samples"] == 1 and y.shape == (1, 10) and y.dtype == np.float32, f"{one}")
    check(one["outputs"][0]["cosine_similarity"] > 0.999999, f"{one['outputs']}")
    print(f"float: outputs and report equal to `bundlefit run --compare` "
          f"(max |diff| from the interpreter {one['outputs'][0]['max_abs_diff']:.3g})")

    many = against_cli(bundlefit, exe, model, path, [batch], work, "batch", ["--compare"],
                       compare=True)
    check(many["samples"] == 4 and many["arrays"]["y"].shape == (4, 10), f"{many}")
    check(many["outputs"][0]["top1_agreement"] == 1.0, f"{many['outputs']}")
    print("batch of 4: outputs and report equal to the CLI's, top-1 4/4")

    # The same input as a path and as a dict; output_dir writes the CLI's files.
    np.save(os.path.join(work, "x.npy"), x)
    out_dir = os.path.join(work, "py_out")
    by_path = bundlefit.run(path, inputs=os.path.join(work, "x.npy"), output_dir=out_dir)
    check(by_path["outputs"][0]["file"] == os.path.join(out_dir, "y.npy"), f"{by_path['outputs']}")
    check(np.array_equal(np.load(os.path.join(out_dir, "y.npy")), y), "output_dir: y.npy differs")
    check(np.array_equal(bundlefit.run(model, {"x": x})["arrays"]["y"], y), "dict input differs")
    print("inputs as a path, a dict and an array: the same outputs; output_dir writes y.npy")

    # int8 with a profile recorded by `bundlefit profile`.
    profile = os.path.join(work, "tiny.yaml")
    code, _, err = cli(exe, "profile", path, os.path.join(work, "batch_in0.npy"), "-o", profile)
    check(code == 0, f"bundlefit profile: {err}")
    q = against_cli(bundlefit, exe, model, path, [x], work, "int8",
                    ["--load-profile", profile, "--compare"], profile=profile, compare=True)
    qy = q["arrays"]["y"]
    check(not np.array_equal(qy, y), "int8 gave the float outputs")
    to_float = float(np.dot(qy.ravel(), y.ravel()) / (np.linalg.norm(qy) * np.linalg.norm(y)))
    check(to_float > 0.99, f"int8 far from float: cosine {to_float}")
    print(f"int8 with a profile: equal to the CLI's (max |diff| from the interpreter "
          f"{q['outputs'][0]['max_abs_diff']:.3g}, cosine to the float bundle {to_float:.6f})")

    # ONNX backend node tests; a two-input one also as a list against the CLI's --input order.
    if os.path.isdir(NODE_TESTS):
        for name in NODE_CASES:
            print(f"{name}: expected outputs within rtol {RTOL}, atol {ATOL} "
                  f"(max |diff| {node_case(bundlefit, name):.3g})")
        add = os.path.join(NODE_TESTS, "test_add_bcast", "model.onnx")
        pair = [rng.standard_normal((3, 4, 5)).astype(np.float32),
                rng.standard_normal(5).astype(np.float32)]
        added = against_cli(bundlefit, exe, add, add, pair, work, "add")
        check(np.allclose(added["arrays"]["sum"], pair[0] + pair[1]), "test_add_bcast: wrong sum")
        print("test_add_bcast, two inputs as a list: equal to the CLI's with two --input")
    else:
        print(f"note: {NODE_TESTS} missing (Debian package libonnx-testdata): node cases not run")

    # Two threads (the GIL is released while a bundle builds and runs): the serial outputs.
    inputs = [batch[i:i + 1] for i in range(4)]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        threaded = list(pool.map(lambda a: bundlefit.run(model, a)["arrays"]["y"], inputs))
    check(all(np.array_equal(t, many["arrays"]["y"][i:i + 1]) for i, t in enumerate(threaded)),
          "runs on two threads differ from the batch's samples")
    print("4 runs on 2 threads: each equal to its sample of the batch run")

    # A Cortex-M7 under QEMU, as `bundlefit run --target cortex-m7`.
    if shutil.which("qemu-system-arm") and shutil.which("arm-none-eabi-gcc"):
        m7 = against_cli(bundlefit, exe, model, path, [x], work, "m7", ["--target", "cortex-m7"],
                         target="cortex-m7")
        check(np.allclose(m7["arrays"]["y"], y, rtol=1e-4, atol=1e-5), "cortex-m7 far from host")
        print("cortex-m7 under QEMU: equal to the CLI's")
    else:
        print("note: no qemu-system-arm or arm-none-eabi-gcc: the cortex-m7 case not run")

    # Errors: the CLI's exit codes and categories, naming the input at fault.
    wrong = np.zeros((1, 1, 8, 8), np.float32)
    message = expect_error(bundlefit, lambda: bundlefit.run(model, wrong), 4, "bad_input_file",
                           "inputs: input 'x' expects float32[1,1,16,16]")
    np.save(os.path.join(work, "wrong.npy"), wrong)
    check(cli(exe, "run", path, "--input", os.path.join(work, "wrong.npy"), "--output-dir",
              os.path.join(work, "wrong_out"))[0] == 4, "CLI exit code for a wrong shape")
    expect_error(bundlefit, lambda: bundlefit.run(model, x.astype(np.float64)), 4, "bad_input_file",
                 "inputs")
    expect_error(bundlefit, lambda: bundlefit.run(model, {"z": x}), 2, "usage", "'x'")
    expect_error(bundlefit, lambda: bundlefit.run(model, [x, x]), 2, "usage", "2 given with inputs")
    expect_error(bundlefit, lambda: bundlefit.run(model, os.path.join(work, "none.npy")), 4,
                 "bad_input_file", "none.npy")
    expect_error(bundlefit, lambda: bundlefit.run(model, x, target="cortex-m99"), 2, "usage",
                 "cortex-m99")
    print(f"errors: bundlefit.Error with the CLI's exit codes ({message})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
