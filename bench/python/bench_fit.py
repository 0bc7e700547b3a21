#!/usr/bin/python3
"""One fit answer in process: `import bundlefit` against one CLI process.

Issue 23's goal: in-process plan + fit of MobileNetV2-0.35 96x96 in < 0.3 s,
results identical to the CLI's JSON. Both sides answer as `bundlefit fit`
does, the code size from the code-size cache they share (one warm-up fit
compiles it), so each round plans. (Many candidates at once, on 2 Dask
workers: bench/sweep/bench_sweep.py.)

  /usr/bin/python3 bench/python/bench_fit.py [--build build] [--device rt1060]
      [--out bench/results/python_fit.json]

Prints a table and writes the results JSON with the git commit measured.
"""
import argparse
import json
import os
import shutil
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--device", default="rt1060")
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
    model = bundlefit.load(big_path)
    os.environ["BUNDLEFIT_CACHE_DIR"] = os.path.join(work, "cache")  # fresh, shared with the CLI runs
    bundlefit.fit(model, device=args.device)  # compiles once: the code size goes to the cache
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        bundlefit.plan(model)
        fit = bundlefit.fit(model, device=args.device)
        rounds.append(time.perf_counter() - start)
    cli_rounds = []
    for _ in range(3):
        start = time.perf_counter()
        done = subprocess.run([exe, "fit", big_path, "--device", args.device, "--json"],
                              capture_output=True, text=True)
        cli_rounds.append(time.perf_counter() - start)
    cli_big = json.loads(done.stdout)
    for report in (fit, cli_big):
        report["code"].pop("cached")
    big_same = fit == cli_big

    rows = [
        ("MobileNetV2-0.35 96x96, module plan + fit, cached code, median of 5", statistics.median(rounds)),
        ("MobileNetV2-0.35 96x96, CLI `fit --json` process, cached code, median of 3",
         statistics.median(cli_rounds)),
    ]
    print(f"{'measurement':<88} {'seconds':>9}")
    print("-" * 98)
    for what, seconds in rows:
        print(f"{what:<88} {seconds:>9.3f}")
    print(f"\nthe module's report equals the CLI's (the cache flag aside): {'yes' if big_same else 'NO'}")

    results = {
        "benchmark": "bench/python/bench_fit.py",
        "commit": measured_commit(exe),
        "device": args.device,
        "mobilenet_v2_035_96": {
            "macs": count_macs(0.35, 96), "module_plan_fit_s": statistics.median(rounds),
            "module_rounds_s": rounds, "cli_fit_s": statistics.median(cli_rounds),
            "cli_rounds_s": cli_rounds, "report_equal_cli": big_same,
            "activations": fit["bundle"]["activations"], "code": fit["bundle"]["code"],
            "code_source": fit["code"]["source"]},
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    print(f"wrote {args.out}")
    shutil.rmtree(work)
    return 0 if big_same else 1


if __name__ == "__main__":
    sys.exit(main())
