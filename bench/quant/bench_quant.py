#!/usr/bin/python3
"""bench_quant: float vs int8 bundles per model and quantization schema (issue 5).

For every model and variant (float; int8 with each --quantization-schema, Int32 bias; and
symmetric_with_power2_scale with Int8 bias):
  - CONSTANT / MUTABLE / ACTIVATIONS and the bundle object's .text for Cortex-M7
    (`bundlefit compile --target cortex-m7`, <net>.memory.json);
  - on the host bundle, over evaluation inputs run as one batch (`bundlefit run`):
    top-1 agreement of the int8 argmax with the float bundle's, and the output SNR
    10 log10(sum f^2 / sum (f - q)^2) in dB;
  - for the trained Fashion-MNIST CNN (tests/models/fashion_mnist) the real top-1 accuracy
    on its 1,000 test images, on the host and on Cortex-M7 under QEMU (mps2-an500).
The int8 profile comes from `bundlefit profile`: the 200 Fashion-MNIST calibration images,
or random inputs for the reference models (weights are random too, so only sizes and
agreement with float mean something there).
Then, for the full-size EfficientNet-B0 and MobileNetV3-small (224x224, random weights), profiled
on 2 random inputs: `bundlefit plan` float and int8 at --memory-opt 0 and 2, recording CONSTANT,
ACTIVATIONS and the share of MACs and weight bytes left in float (layers whose output is float32,
Quantize/Dequantize aside). Prints a table; writes bench/results/quant.json.

  /usr/bin/python3 bench/quant/bench_quant.py --bundlefit /tmp/build/bin/bundlefit
  # or, from a build directory:  ninja bench_quant

Needs /usr/bin/python3 with numpy, cc, and for the Cortex-M7 columns arm-none-eabi-gcc and
qemu-system-arm (without them those cells stay empty).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from source_commit import measured_commit  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FASHION_DIR = os.path.join(ROOT, "tests", "models", "fashion_mnist")
REFERENCE_MODELS = ["lenet", "resnet8", "ds_cnn", "mobilenet_v1_025", "autoencoder", "branchy", "mobilenet_v2"]
# (name, schema, bias precision); schema None is the float build.
VARIANTS = [
    ("float", None, None),
    ("asymmetric", "asymmetric", "Int32"),
    ("symmetric", "symmetric", "Int32"),
    ("symmetric_with_uint8", "symmetric_with_uint8", "Int32"),
    ("symmetric_with_power2_scale", "symmetric_with_power2_scale", "Int32"),
    ("power2_scale+int8_bias", "symmetric_with_power2_scale", "Int8"),
]
# Random calibration / evaluation inputs per reference model: the interpreter
# profiles mobilenet_v2 at about 1 s a sample and its int8 host bundle is as slow.
SAMPLES = {"mobilenet_v2": (8, 16)}
DEFAULT_SAMPLES = (32, 100)
# Full-size nets whose int8 build needs the table activations (SiLU, HardSwish, SE
# gates). Planned only (no code generation, no run): sizes and float shares do not
# depend on the ranges, so 2 calibration samples do (about 15 s of profiling).
PROFILED_NETS = ["efficientnet_b0", "mobilenet_v3_small"]
PROFILED_NET_SAMPLES = 2
PROFILED_NET_LEVELS = [0, 2]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])}... failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    return p.stdout


MEMORY_OPT = ["--memory-opt", "0"]  # Set from --memory-opt in main().


def quant_args(profile, schema, bias):
    if schema is None:
        return []
    return ["--load-profile", profile, "--quantization-schema", schema, "--quantization-precision-bias", bias]


def compile_m7(bundlefit, model, out_dir, qargs):
    shutil.rmtree(out_dir, ignore_errors=True)
    run([bundlefit, "compile", model, "-o", out_dir, "--target", "cortex-m7", "-q"] + qargs + MEMORY_OPT)
    net = os.path.splitext(os.path.basename(model))[0]
    mem = json.load(open(os.path.join(out_dir, net + ".memory.json")))
    return {"constant": mem["sizes"]["constant"], "mutable": mem["sizes"]["mutable"],
            "activations": mem["sizes"]["activations"], "m7_text": mem["code_size"]["text"]}


def run_batch(bundlefit, model, inputs, out_dir, target, qargs):
    shutil.rmtree(out_dir, ignore_errors=True)
    report = json.loads(run([bundlefit, "run", model, "--input", inputs, "--output-dir", out_dir,
                             "--target", target, "--json", "-q", "--timeout", "1200"] + qargs + MEMORY_OPT))
    return np.load(report["outputs"][0]["file"]), report["run_seconds"]


def snr_db(reference, got):
    noise = float(np.sum((reference.astype(np.float64) - got) ** 2))
    signal = float(np.sum(reference.astype(np.float64) ** 2))
    return None if noise == 0 else 10.0 * np.log10(signal / noise)


def tools_for_m7():
    return bool(shutil.which("qemu-system-arm")) and bool(shutil.which("arm-none-eabi-gcc"))


def bench_model(args, name, model, calib, evaluation, labels, m7_accuracy):
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    profile = os.path.join(work, name + ".profile.yaml")
    t0 = time.monotonic()
    run([args.bundlefit, "profile", model, calib, "-o", profile, "-q"])
    profile_s = time.monotonic() - t0
    samples = int(np.load(evaluation, mmap_mode="r").shape[0])
    entry = {"model": name, "trained": labels is not None, "calibration_samples": int(np.load(calib, mmap_mode="r").shape[0]),
             "eval_samples": samples, "profile_s": round(profile_s, 2), "variants": []}
    float_out = None
    for variant, schema, bias in VARIANTS:
        qargs = quant_args(profile, schema, bias)
        log(f"  {name} {variant}")
        row = {"variant": variant, "schema": schema or "float", "bias": bias}
        try:
            row.update(compile_m7(args.bundlefit, model, os.path.join(work, variant + ".m7"), qargs))
            out, seconds = run_batch(args.bundlefit, model, evaluation, os.path.join(work, variant + ".host"), "host", qargs)
            out = out.reshape(samples, -1)
            row["host_run_s"] = round(seconds, 3)
            if float_out is None:
                float_out = out
            row["top1_agreement"] = float(np.mean(out.argmax(1) == float_out.argmax(1)))
            row["output_snr_db"] = None if schema is None else snr_db(float_out, out)
            if labels is not None:
                row["top1"] = float(np.mean(out.argmax(1) == labels))
            if m7_accuracy and labels is not None:
                m7, m7_seconds = run_batch(args.bundlefit, model, evaluation, os.path.join(work, variant + ".m7run"), "cortex-m7", qargs)
                m7 = m7.reshape(samples, -1)
                row["m7_top1"] = float(np.mean(m7.argmax(1) == labels))
                row["m7_run_s"] = round(m7_seconds, 2)
                row["m7_equals_host"] = bool(np.array_equal(m7, out))
        except RuntimeError as error:
            row["error"] = str(error)
            log(f"    error: {error}")
        entry["variants"].append(row)
    return entry


def fashion_inputs(work):
    """The committed Fashion-MNIST sets as the model's float input (pixel / 255)."""
    calib = os.path.join(FASHION_DIR, "calib_images.npy")  # uint8: `profile` divides by 255
    evaluation = os.path.join(work, "fashion_test_f32.npy")
    images = np.load(os.path.join(FASHION_DIR, "test_images.npy"))
    np.save(evaluation, images.astype(np.float32) / np.float32(255.0))
    labels = np.load(os.path.join(FASHION_DIR, "test_labels.npy")).astype(np.int64)
    return calib, evaluation, labels


def random_inputs(work, name, model, calib_count, eval_count):
    """Random inputs shaped like the model's <name>.input.npy: uniform [0,1) when that
    sample is non-negative (LeNet's pixels), else standard normal."""
    example = np.load(os.path.splitext(model)[0] + ".input.npy")
    shape = example.shape[1:]
    rng = np.random.default_rng(20261124)
    draw = (lambda n: rng.random((n,) + shape)) if example.min() >= 0 else (lambda n: rng.standard_normal((n,) + shape))
    paths = []
    for label, count in (("calib", calib_count), ("eval", eval_count)):
        path = os.path.join(work, f"{name}.{label}.npy")
        np.save(path, draw(count).astype(np.float32))
        paths.append(path)
    return paths


def float_shares(report):
    """(share of MACs, share of weight bytes) in layers computing in float, from a
    bundlefit.memory/1 report; Quantize and Dequantize count in neither."""
    layers = [layer for layer in report["layers"] if layer["op"] not in ("Quantize", "Dequantize")]
    in_float = [layer for layer in layers if layer["output_dtype"] == "float32"]
    macs = sum(layer["macs"] for layer in layers)
    weights = sum(layer["weight_bytes"] for layer in layers)
    return (sum(layer["macs"] for layer in in_float) / macs if macs else 0.0,
            sum(layer["weight_bytes"] for layer in in_float) / weights if weights else 0.0)


def bench_profiled_net(args, name, model_dir):
    model = os.path.join(model_dir, name + ".onnx")
    if not os.path.exists(model):
        log(f"generating {name} into {model_dir}")
        run([sys.executable, os.path.join(ROOT, "tests", "models", "make_models.py"), "--out", model_dir,
             "--only", name])
    work = os.path.join(args.work, "profiled", name)
    os.makedirs(work, exist_ok=True)
    calib, _ = random_inputs(work, name, model, PROFILED_NET_SAMPLES, 1)
    profile = os.path.join(work, name + ".profile.yaml")
    t0 = time.monotonic()
    run([args.bundlefit, "profile", model, calib, "-o", profile, "-q"])
    entry = {"model": name, "calibration_samples": PROFILED_NET_SAMPLES,
             "profile_s": round(time.monotonic() - t0, 2), "builds": []}
    for variant, qargs in (("float", []), ("int8", ["--load-profile", profile])):
        for level in PROFILED_NET_LEVELS:
            log(f"  {name} {variant} --memory-opt {level}")
            report_path = os.path.join(work, f"{variant}.{level}.memory.json")
            run([args.bundlefit, "plan", model, "--memory-opt", str(level), "--json", report_path, "-q"] + qargs)
            report = json.load(open(report_path))
            mac_share, weight_share = float_shares(report)
            entry["builds"].append({"variant": variant, "memory_opt": level,
                                    "constant": report["sizes"]["constant"],
                                    "mutable": report["sizes"]["mutable"],
                                    "activations": report["sizes"]["activations"],
                                    "macs": report["totals"]["macs"],
                                    "float_mac_share": mac_share, "float_weight_share": weight_share})
    return entry


def cell(value, fmt):
    return "-" if value is None else format(value, fmt)


def print_table(results):
    head = (f"{'model':<18s} {'variant':<28s} {'CONSTANT':>10s} {'MUTABLE':>9s} {'ACTIV.':>9s} "
            f"{'M7 .text':>9s} {'top-1':>7s} {'M7 top-1':>8s} {'agree':>7s} {'SNR dB':>7s}")
    print(head)
    print("-" * len(head))
    for entry in results["models"]:
        for row in entry["variants"]:
            if "error" in row:
                print(f"{entry['model']:<18s} {row['variant']:<28s} error: {row['error'][:60]}")
                continue
            top1 = row.get("top1")
            m7 = row.get("m7_top1")
            print(f"{entry['model']:<18s} {row['variant']:<28s} {row['constant']:>10,} {row['mutable']:>9,} "
                  f"{row['activations']:>9,} {row['m7_text']:>9,} "
                  f"{cell(None if top1 is None else 100 * top1, '6.1f'):>7s} "
                  f"{cell(None if m7 is None else 100 * m7, '6.1f'):>8s} "
                  f"{100 * row['top1_agreement']:6.1f}% {cell(row['output_snr_db'], '7.1f'):>7s}")
    print("\ntop-1: accuracy (%) on the 1,000 Fashion-MNIST test images; agree: top-1 agreement with the"
          "\nfloat bundle on the evaluation inputs; SNR: int8 output vs float output. Sizes in bytes.")
    if results.get("profiled_nets"):
        head = (f"\n{'profiled net':<20s} {'build':<6s} {'level':>5s} {'CONSTANT':>11s} {'ACTIV.':>10s} "
                f"{'MACs':>12s} {'float MACs':>10s} {'float wts':>9s}")
        print(head)
        print("-" * (len(head) - 1))
        for entry in results["profiled_nets"]:
            if "error" in entry:
                print(f"{entry['model']:<20s} error: {entry['error'][:60]}")
            for row in entry.get("builds", []):
                print(f"{entry['model']:<20s} {row['variant']:<6s} {row['memory_opt']:>5d} {row['constant']:>11,} "
                      f"{row['activations']:>10,} {row['macs']:>12,} {100 * row['float_mac_share']:9.1f}% "
                      f"{100 * row['float_weight_share']:8.1f}%")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundlefit", default=os.environ.get("BUNDLEFIT", "/tmp/build/bin/bundlefit"))
    ap.add_argument("--work", default="/tmp/bench-quant", help="scratch directory (models, inputs, bundles)")
    ap.add_argument("--models", default=",".join(["fashion_cnn"] + REFERENCE_MODELS))
    ap.add_argument("--profiled-nets", default=",".join(PROFILED_NETS),
                    help="full-size nets planned float and int8 (comma list; empty: none)")
    ap.add_argument("--models-dir", default=None,
                    help="reference models (default: generate with tests/models/make_models.py into WORK/models)")
    ap.add_argument("--no-m7-run", action="store_true", help="skip the Fashion-MNIST runs under QEMU")
    ap.add_argument("--memory-opt", type=int, default=0,
                    help="bundlefit --memory-opt level (default 0: Glow's layout, comparable with "
                         "Glow's published int8 sizes; bundlefit's own default is 2)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "quant.json"))
    args = ap.parse_args()
    MEMORY_OPT[:] = ["--memory-opt", str(args.memory_opt)]

    os.makedirs(args.work, exist_ok=True)
    # A private copy of the binary: a rebuild of the build tree mid-run cannot break it.
    bundlefit_src = os.path.abspath(args.bundlefit)
    args.bundlefit = os.path.join(args.work, "bundlefit")
    shutil.copy2(bundlefit_src, args.bundlefit)
    models = [m for m in args.models.split(",") if m]
    model_dir = args.models_dir or os.path.join(args.work, "models")
    reference = [m for m in models if m != "fashion_cnn"]
    if reference and not all(os.path.exists(os.path.join(model_dir, m + ".onnx")) for m in reference):
        log(f"generating reference models into {model_dir}")
        run([sys.executable, os.path.join(ROOT, "tests", "models", "make_models.py"), "--out", model_dir])

    m7 = tools_for_m7() and not args.no_m7_run
    results = {"schema": "bundlefit.bench.quant/1", "bundlefit": bundlefit_src, "memory_opt": args.memory_opt,
               "commit": measured_commit(bundlefit_src),
               "bundlefit_mtime_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(bundlefit_src))),
               "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "nproc": os.cpu_count(), "m7_runs": m7, "models": []}
    for name in models:
        log(f"{name}")
        if name == "fashion_cnn":
            calib, evaluation, labels = fashion_inputs(args.work)
            model = os.path.join(FASHION_DIR, "fashion_cnn.onnx")
        else:
            model = os.path.join(model_dir, name + ".onnx")
            calib_count, eval_count = SAMPLES.get(name, DEFAULT_SAMPLES)
            calib, evaluation = random_inputs(args.work, name, model, calib_count, eval_count)
            labels = None
        try:
            results["models"].append(bench_model(args, name, model, calib, evaluation, labels, m7))
        except RuntimeError as error:
            log(f"  error: {error}")
            results["models"].append({"model": name, "error": str(error), "variants": []})
    results["profiled_nets"] = []
    for name in [m for m in args.profiled_nets.split(",") if m]:
        log(f"{name} (profiled, planned)")
        try:
            results["profiled_nets"].append(bench_profiled_net(args, name, model_dir))
        except RuntimeError as error:
            log(f"  error: {error}")
            results["profiled_nets"].append({"model": name, "error": str(error), "builds": []})
    results["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as out:
        json.dump(results, out, indent=2)
        out.write("\n")
    print_table(results)
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
