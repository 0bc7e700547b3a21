"""reference_runs: one way to run a model through `bundlefit run` and through
onnxruntime-node (ort_run.js), shared by the scripts that compare the two
(compare_qdq.py, fashion_accuracy.py, layer_diff.py, tests/recurrent).
"""
import argparse
import glob
import os
import subprocess

import numpy as np

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))


class TargetUnavailable(Exception):
    """`bundlefit run --target T` exited 7: QEMU or the Arm toolchain is missing."""


def missing_onnxruntime(module_dir):
    """A SKIP message when onnxruntime-node is not installed in module_dir, else None."""
    if os.path.isdir(os.path.join(module_dir, "node_modules", "onnxruntime-node")):
        return None
    return (f"SKIP: onnxruntime-node is not installed in {module_dir} "
            "(cd bench/codegen && ONNXRUNTIME_NODE_INSTALL=skip npm ci)")


def comparison_args():
    """BUNDLEFIT WORK ORT_MODULE_DIR [--target T], the arguments of the
    scripts that compare generated models with onnxruntime, with WORK created;
    None (after printing why) when onnxruntime-node is missing: exit SKIP."""
    ap = argparse.ArgumentParser()
    ap.add_argument("bundlefit")
    ap.add_argument("work")
    ap.add_argument("ort_module_dir")
    ap.add_argument("--target", default="host")
    args = ap.parse_args()
    missing = missing_onnxruntime(args.ort_module_dir)
    if missing:
        print(missing)
        return None
    os.makedirs(args.work, exist_ok=True)
    return args


def run_bundle(bundlefit, model, npy, outdir, target="host", extra=()):
    """The first output of `bundlefit run` as an array and the run's stderr.
    Raises TargetUnavailable (exit 7 off the host) and RuntimeError on any
    other failure, with bundlefit's message."""
    cmd = [bundlefit, "run", model, "--input", npy, "--output-dir", outdir, "-q", *extra]
    if target != "host":
        cmd += ["--target", target]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode == 7 and target != "host":
        raise TargetUnavailable(f"SKIP: {target} not runnable here: {run.stderr.strip()}")
    if run.returncode != 0:
        raise RuntimeError(f"bundlefit run failed ({run.returncode}): {run.stderr.strip()}")
    return np.load(sorted(glob.glob(os.path.join(outdir, "*.npy")))[0]), run.stderr


def run_onnxruntime(module_dir, model, npy, raw, whole=False):
    """onnxruntime's first output, float32 values in order (ort_run.js): each
    sample of npy alone, or with `whole` the array as one input. Raises
    RuntimeError with onnxruntime's message."""
    cmd = ["node", os.path.join(HERE, "ort_run.js"), os.path.abspath(module_dir), model, npy, raw]
    ort = subprocess.run(cmd + (["--whole"] if whole else []), capture_output=True, text=True)
    if ort.returncode != 0:
        raise RuntimeError(f"onnxruntime failed: {ort.stderr.strip()}")
    return np.fromfile(raw, dtype=np.float32)
