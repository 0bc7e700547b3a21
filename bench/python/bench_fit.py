#!/usr/bin/python3
"""Fit answers per second: `import bundlefit` against one CLI process per model.

Issue 23's goals: in-process plan + fit of MobileNetV2-0.35 96x96 in < 0.3 s;
1,000 fit answers for small candidates (< 1 M MACs) in < 60 s on 2 cores;
results identical to the CLI's JSON.

  /usr/bin/python3 bench/python/bench_fit.py [--build build] [--device rt1060]
      [--candidates 1000] [--cli-sample 20] [--out bench/results/python_fit.json]

The candidates are MobileNetV2s (examples/sweep/mobilenet_v2.py), 45 shapes
(width 0.10-0.26 x resolution 16-32, 10 classes) x 23 weight seeds: 1,000
distinct model files. The module's fits are the fast ones (no code generated,
code labelled as an estimate); the CLI runs `bundlefit fit --json` per model
on a sample, with the code-size cache warm (it plans, no compile), which is
the CLI's best case. Prints a table and writes the results JSON with the git
commit measured.
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "examples", "sweep"))
sys.path.insert(0, os.path.dirname(HERE))
from mobilenet_v2 import count_macs, mobilenet_v2  # noqa: E402
from source_commit import measured_commit  # noqa: E402

WIDTHS = [round(0.10 + 0.02 * i, 2) for i in range(9)]  # 0.28 at 32x32 is above 1 M MACs
RESOLUTIONS = [16, 20, 24, 28, 32]


def sizes(report):
    b = report["bundle"]
    return (b["constant"], b["mutable"], b["activations"], report["totals"]["ram"], report["fits"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--device", default="rt1060")
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--cli-sample", type=int, default=20)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "python_fit.json"))
    args = parser.parse_args()
    exe = os.path.join(args.build, "bin", "bundlefit")
    sys.path.insert(0, os.path.join(args.build, "python"))
    import bundlefit

    work = tempfile.mkdtemp(prefix="bench-python-fit-")
    # 1. MobileNetV2-0.35 96x96: in-process plan + fit, against the CLI.
    big = mobilenet_v2(0.35, 96).SerializeToString()
    big_path = os.path.join(work, "mobilenet_v2_035_96.onnx")
    with open(big_path, "wb") as f:
        f.write(big)
    model = bundlefit.load(big, name="mobilenet_v2_035_96.onnx")
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        bundlefit.plan(model)
        fast = bundlefit.fit(model, device=args.device, fast=True)
        rounds.append(time.perf_counter() - start)
    subprocess.run([exe, "fit", big_path, "--device", args.device, "--json"], capture_output=True)  # warm cache
    cli_rounds = []
    for _ in range(3):
        start = time.perf_counter()
        done = subprocess.run([exe, "fit", big_path, "--device", args.device, "--json"],
                              capture_output=True, text=True)
        cli_rounds.append(time.perf_counter() - start)
    cli_big = json.loads(done.stdout)
    big_same = sizes(fast) == sizes(cli_big)

    # 2. 1,000 small candidates on 2 threads, against one CLI process per model.
    shapes = [(w, r) for w in WIDTHS for r in RESOLUTIONS]
    macs = [count_macs(w, r, 10) for w, r in shapes]
    start = time.perf_counter()
    candidates = []
    for i in range(args.candidates):
        w, r = shapes[i % len(shapes)]
        seed = i // len(shapes)
        name = f"mnv2_{w}_{r}_s{seed}.onnx"
        candidates.append(bundlefit.load(mobilenet_v2(w, r, classes=10, seed=seed).SerializeToString(), name=name))
    generate_s = time.perf_counter() - start
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda m: bundlefit.fit(m, device=args.device, fast=True), candidates))
    module_s = time.perf_counter() - start

    sample = candidates[:: max(1, len(candidates) // args.cli_sample)][: args.cli_sample]
    for m in sample:  # the CLI's best case: code sizes cached, so it plans only
        subprocess.run([exe, "fit", m.path, "--device", args.device, "--json"], capture_output=True)
    cli_times, same = [], 0
    for m in sample:
        start = time.perf_counter()
        done = subprocess.run([exe, "fit", m.path, "--device", args.device, "--json"],
                              capture_output=True, text=True)
        cli_times.append(time.perf_counter() - start)
        same += sizes(json.loads(done.stdout)) == sizes(answers[candidates.index(m)])
    cli_per_model = statistics.median(cli_times)

    fits = sum(a["fits"] for a in answers)
    rows = [
        ("MobileNetV2-0.35 96x96, module plan + fit (fast), median of 5", statistics.median(rounds)),
        ("MobileNetV2-0.35 96x96, CLI `fit --json` process, cached code, median of 3",
         statistics.median(cli_rounds)),
        (f"{len(candidates)} small candidates, module fit on 2 threads", module_s),
        (f"{len(candidates)} small candidates, one CLI process each (median of {len(sample)}, x{len(candidates)})",
         cli_per_model * len(candidates)),
    ]
    print(f"{'measurement':<88} {'seconds':>9}")
    print("-" * 98)
    for what, seconds in rows:
        print(f"{what:<88} {seconds:>9.3f}")
    print(f"\nmodule: {len(candidates) / module_s:.1f} fit answers/s; CLI: {1 / cli_per_model:.1f}/s "
          f"({module_s and cli_per_model * len(candidates) / module_s:.1f}x); {fits} of {len(candidates)} fit "
          f"{args.device}; MACs {min(macs):,}-{max(macs):,}; generating the models took {generate_s:.1f} s")
    print(f"sizes (CONSTANT, MUTABLE, ACTIVATIONS, RAM, verdict) equal to the CLI's: "
          f"{same} of {len(sample)} sampled, MobileNetV2-0.35: {'yes' if big_same else 'NO'}")

    results = {
        "benchmark": "bench/python/bench_fit.py",
        "commit": measured_commit(exe),
        "device": args.device,
        "mobilenet_v2_035_96": {
            "macs": count_macs(0.35, 96), "module_plan_fit_s": statistics.median(rounds),
            "module_rounds_s": rounds, "cli_fit_s": statistics.median(cli_rounds),
            "cli_rounds_s": cli_rounds, "sizes_equal_cli": big_same,
            "activations": fast["bundle"]["activations"], "code_source": fast["code"]["source"]},
        "small_candidates": {
            "count": len(candidates), "shapes": len(shapes), "macs_min": min(macs), "macs_max": max(macs),
            "threads": 2, "module_s": module_s, "module_answers_per_s": len(candidates) / module_s,
            "cli_sample": len(sample), "cli_per_model_s": cli_per_model,
            "cli_extrapolated_s": cli_per_model * len(candidates),
            "sizes_equal_cli": same, "fit_count": fits},
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    print(f"wrote {args.out}")
    return 0 if big_same and same == len(sample) else 1


if __name__ == "__main__":
    sys.exit(main())
