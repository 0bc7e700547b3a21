#!/usr/bin/python3
"""Records the cost model against the published timings it is calibrated on.

Runs `bundlefit devices --calibration --json` (every AN13001 timing against
the model's prediction), adds the commit the binary was built from, prints the
table and writes bench/results/cost_model.json, the source of the README's
cost-model figure.

Usage: bench/cost_model/record_calibration.py [BUILD/bin/bundlefit] [--out FILE]
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from source_commit import measured_commit  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bundlefit", nargs="?", default=os.path.join(ROOT, "build", "bin", "bundlefit"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "cost_model.json"))
    args = ap.parse_args()
    run = subprocess.run([args.bundlefit, "devices", "--calibration", "--json"],
                         capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{args.bundlefit} devices --calibration failed: {run.stderr.strip()}")
    result = {"commit": measured_commit(args.bundlefit)}
    result.update(json.loads(run.stdout))
    for p in result["points"]:
        print(f"{p['device']:8s} {p['model']:24s} {p['variant']:6s} {p['weights']:5s} "
              f"published {p['published_ms']:8.2f} ms  predicted {p['predicted_ms']:8.2f} ms  "
              f"{p['error_percent']:+5.1f}%")
    print(f"worst error {result['worst_error_percent']:.1f}% over {len(result['points'])} timings")
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(tmp, args.out)
    print("wrote " + args.out)


if __name__ == "__main__":
    main()
