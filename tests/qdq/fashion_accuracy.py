#!/usr/bin/python3
"""Top-1 of the Fashion-MNIST CNN quantized as QDQ vs the float model.

usage: fashion_accuracy.py BUNDLEFIT MODELS_DIR WORK_DIR [--target T] [--max-drop POINTS]

The float model (tests/models/fashion_mnist/fashion_cnn.onnx) and each
MODELS_DIR/fashion_qdq_*.onnx (make_qdq_models.py: the same model quantized
the way onnxruntime's static quantizer lays it out, from its 200 calibration
images) run with `bundlefit run` on the 1,000 test images in one batch (one
build, one QEMU boot with --target). Fails (exit 1) when an int8 model's top-1
is more than --max-drop points (default 1.0) below the float model's.
Exit 77 (CTest SKIP) when the images or the QDQ models are missing or, with
--target, QEMU or the Arm toolchain is (bundlefit exit 7).
"""
import argparse
import glob
import os
import sys

import numpy as np

from reference_runs import SKIP, TargetUnavailable, run_bundle
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "models", "fashion_mnist")


def top1(bundlefit, model, images, labels, outdir, target):
    """Correct answers of `bundlefit run` on all images, or None when the
    target cannot run here."""
    try:
        logits, _ = run_bundle(bundlefit, model, images, outdir, target)
    except TargetUnavailable as e:
        print(e)
        return None
    except RuntimeError as e:
        raise SystemExit(f"{model}: {e}")
    return int((logits.reshape(len(labels), -1).argmax(axis=1) == labels).sum())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bundlefit")
    ap.add_argument("models")
    ap.add_argument("work")
    ap.add_argument("--target", default="host")
    ap.add_argument("--max-drop", type=float, default=1.0)
    args = ap.parse_args()
    files = [os.path.join(DATA, f) for f in ("fashion_cnn.onnx", "test_images.npy",
                                             "test_labels.npy")]
    models = sorted(glob.glob(os.path.join(args.models, "fashion_qdq_*.onnx")))
    missing = [f for f in files if not os.path.exists(f)]
    if missing or not models:
        print(f"SKIP: missing {', '.join(missing) or 'fashion_qdq_*.onnx in ' + args.models}")
        return SKIP
    os.makedirs(args.work, exist_ok=True)
    images = os.path.join(args.work, "fashion_test_f32.npy")
    # The model's input is pixel / 255 (tests/models/fashion_mnist/README.md).
    np.save(images, np.load(files[1]).astype(np.float32) / np.float32(255))
    labels = np.load(files[2]).astype(np.int64)
    n = len(labels)
    tag = args.target
    reference = top1(args.bundlefit, files[0], images, labels,
                     os.path.join(args.work, "fashion_float." + tag), args.target)
    if reference is None:
        return SKIP
    print(f"fashion_cnn (float)    {tag}: top-1 {reference}/{n} ({100.0 * reference / n:.1f} %)")
    failed = 0
    for model in models:
        name = os.path.basename(model)[:-len(".onnx")]
        correct = top1(args.bundlefit, model, images, labels,
                       os.path.join(args.work, name + "." + tag), args.target)
        if correct is None:
            return SKIP
        drop = 100.0 * (reference - correct) / n
        ok = drop <= args.max_drop + 1e-9
        failed += 0 if ok else 1
        print(f"{name:22s} {tag}: top-1 {correct}/{n} ({100.0 * correct / n:.1f} %), "
              f"{drop:+.1f} points below float{'' if ok else '  FAIL (> %g)' % args.max_drop}")
    print(f"{len(models) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
