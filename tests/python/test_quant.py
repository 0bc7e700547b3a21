#!/usr/bin/python3
"""bundlefit.profile() and bundlefit.compare_quant() against the command line.

The same model file and calibration samples go to the module and to
`bundlefit profile` / `bundlefit compare-quant`: the reports must be the
CLI's JSON field for field (the profile YAML byte for byte), since both run
the driver's Compilation::profile and compareQuant.

Usage: test_quant.py BUILD_PYTHON_DIR BUNDLEFIT_EXE
Exit 77 (a ctest skip) when the module was not built (no pybind11-dev).
"""
import os
import tempfile

import numpy as np

from module_support import SKIP, check, cli_json, module_and_cli, tiny_cnn, without


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    bundlefit, exe = module_and_cli(__doc__)
    if bundlefit is None:
        return SKIP

    work = tempfile.mkdtemp(prefix="bundlefit-pyquant-")
    path = os.path.join(work, "tiny.onnx")
    with open(path, "wb") as f:
        f.write(tiny_cnn().SerializeToString())
    # Six samples stacked along the first dimension, which both split.
    samples = os.path.join(work, "calib.npy")
    np.save(samples, np.random.default_rng(7).random((6, 1, 16, 16), dtype=np.float32))

    # profile: the CLI's bundlefit.profile/1 report, the YAML byte for byte.
    cli_yaml, py_yaml = os.path.join(work, "cli.yaml"), os.path.join(work, "py.yaml")
    cli_profile = cli_json(exe, "profile", path, samples, "-o", cli_yaml)
    py_profile = bundlefit.profile(path, [samples], output=py_yaml)
    check(py_profile["samples"] == 6 and py_profile["profile"] == py_yaml, f"{py_profile}")
    check(without(py_profile, ("profile",)) == without(cli_profile, ("profile",)),
          f"profile() differs from `bundlefit profile --json`:\n{py_profile}\n{cli_profile}")
    check(read(py_yaml) == read(cli_yaml), "profile(output=) wrote another YAML than -o")
    check(bundlefit.profile(path, samples)["profile"] is None, "no output, yet a profile path")
    print(f"profile: equal to the CLI's ({len(py_profile['tensors'])} tensors, "
          f"{py_profile['samples']} samples), the YAML byte for byte")

    # compare_quant: the CLI's bundlefit.compare-quant/1 report, for two schemas.
    for schema in ("asymmetric", "symmetric"):
        cli_report = cli_json(exe, "compare-quant", path, "--load-profile", cli_yaml, samples,
                              "--quantization-schema", schema)
        py_report = bundlefit.compare_quant(path, [samples], profile=cli_yaml,
                                            quantization_schema=schema)
        check(py_report["samples"] == 6 and len(py_report["tensors"]) >= 4, f"{py_report}")
        check(py_report == cli_report,
              f"compare_quant() differs from `bundlefit compare-quant --json` ({schema}):\n"
              f"{py_report}\n{cli_report}")
        worst = py_report["tensors"][0]
        print(f"compare_quant ({schema}): equal to the CLI's (worst {worst['name']} "
              f"{worst['snr_db']:.1f} dB, top-1 {py_report['outputs'][0]['top1_agreement']:.2f})")

    # Bad arguments are usage errors naming the argument; a missing input is
    # the CLI's bad-input error.
    for call, named, code in (
            (lambda: bundlefit.profile(path, samples, image_mode="0to2"), "image_mode", 2),
            (lambda: bundlefit.compare_quant(path, [], profile=cli_yaml), "inputs", 2),
            (lambda: bundlefit.compare_quant(path, os.path.join(work, "none.npy"),
                                             profile=cli_yaml), "none.npy", 4)):
        try:
            call()
        except bundlefit.Error as e:
            check(e.exit_code == code and named in str(e), f"{named}: {e} (exit {e.exit_code})")
        else:
            raise AssertionError(f"no bundlefit.Error for {named}")
    print("errors: bundlefit.Error naming the argument or file")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
