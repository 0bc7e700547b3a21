#!/usr/bin/python3
"""bench_cost: the cost model's calibration and its predictions across the device database (issue 21).

1. `bundlefit devices --calibration --json`: every published timing the cost model is fitted to or
   checked against, with its error (AN13001's nine RT1060/RT685 figures).
2. For every part or board whose bundle core is a Cortex-M4, M7, M33 or M55 and each of the reference
   models ResNet-8, DS-CNN, MobileNetV1-0.25 and the dense autoencoder (tests/models):
   `bundlefit fit MODEL --device ID --variant int8-cmsis --json` -> predicted milliseconds, whether the
   build fits, and what the CMSIS-NN figures of that device rest on (`devices --json`: published for
   the part / measured on the core / carried from another part).

Writes bench/results/cost.json (with the git commit it measured) and prints both tables. With
--update-readme it rewrites the two generated tables in device_db/README.md (between the
`<!-- bench_cost:NAME -->` markers); with --check-readme it fails when the README's tables differ
from the ones the JSON gives (no bundlefit run needed).

  /usr/bin/python3 bench/cost/bench_cost.py --bundlefit build/bin/bundlefit --models-dir build/models
  # or, from a build directory:  ninja bench_cost
"""
import argparse
import json
import os
import re
import sys

from common import git_commit, run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
README = os.path.join(ROOT, "device_db", "README.md")
MODELS = [("resnet8", "ResNet-8"), ("ds_cnn", "DS-CNN"), ("mobilenet_v1_025", "MobileNetV1-0.25"),
          ("autoencoder", "autoencoder")]
CORES = ("cortex-m4", "cortex-m7", "cortex-m33", "cortex-m55")


def measure(bundlefit, models_dir):
    calibration = json.loads(run([bundlefit, "devices", "--calibration", "--json"]))
    devices = json.loads(run([bundlefit, "devices", "--json"]))["devices"]
    rows = []
    for device in devices:
        core = next((c for c in device["cores"] if c["runs_bundle"]), device["cores"][0])
        if core["type"] not in CORES:
            continue
        library = device["kernel_libraries"].get("cmsis_nn")
        if library is None:
            continue
        row = {"device": device["id"], "part": device["part"] or device["id"], "core": core["type"],
               "clock_mhz": core["clock_mhz"], "provenance": library["provenance"],
               "provenance_from": library["provenance_from"], "models": {}}
        for model, _ in MODELS:
            path = os.path.join(models_dir, model + ".onnx")
            # Exit 3 is "does not fit": the time is still predicted.
            report = json.loads(run([bundlefit, "fit", path, "--device", device["id"], "--variant",
                                     "int8-cmsis", "--json"], ok=(0, 3)))
            row["models"][model] = {"predicted_ms": round(report["predicted_ms"], 3), "fits": report["fits"]}
        rows.append(row)
    return {"schema": "bundlefit.bench-cost/1", "commit": git_commit(),
            "calibration": calibration, "predictions": rows}


def short(commit):
    """First 12 hex digits, keeping the -dirty mark."""
    return commit[:12] + ("-dirty" if commit.endswith("-dirty") else "")


def calibration_table(result):
    lines = ["| published figure | role | published | predicted | error |", "|---|---|---|---|---|"]
    for p in result["calibration"]["points"]:
        lines.append(f"| {p['figure']} | {p['role']} | {p['published_ms']:.2f} ms | {p['predicted_ms']:.2f} ms "
                     f"| {p['error_percent']:+.2f}% |")
    worst = result["calibration"]["worst_error_percent"]
    lines.append("")
    lines.append(f"Worst error {worst:.2f}% (bench/results/cost.json, commit {short(result['commit'])}).")
    return "\n".join(lines)


def prediction_table(result):
    head = "| device | core | MHz | CMSIS-NN figures | " + " | ".join(name for _, name in MODELS) + " |"
    lines = [head, "|---|---|---|---|" + "---|" * len(MODELS)]
    for row in result["predictions"]:
        cells = []
        for model, _ in MODELS:
            m = row["models"][model]
            cells.append(f"{m['predicted_ms']:.2f}" + ("" if m["fits"] else " (no fit)"))
        lines.append(f"| {row['device']} | {row['core']} | {row['clock_mhz']:g} | {row['provenance']} | "
                     + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"Milliseconds per inference, int8-cmsis, weights placed by `fit` (bench/results/cost.json, "
                 f"commit {short(result['commit'])}).")
    return "\n".join(lines)


def cmsis_table(insns):
    """Instructions per MAC (per output element for the layers without MACs) of CMSIS-NN per core
    (bench/cost/measure_cmsis.py's results)."""
    first = next(iter(insns["cores"].values()))["workloads"]
    names = list(first)
    heads = [n + (" (per element)" if "elements" in first[n] else "") for n in names]
    lines = ["| core (QEMU machine) | " + " | ".join(heads) + " | cycles/insn |",
             "|---|" + "---|" * (len(names) + 1)]
    for core, data in insns["cores"].items():
        cells = []
        for name in names:
            w = data["workloads"].get(name, {})
            value = w.get("instructions_per_mac", w.get("instructions_per_element"))
            cells.append(f"{value:.3f}" if value is not None else "failed")
        cpi = data.get("cycles_per_instruction")
        cpi_text = f"{cpi['value']} ({cpi['part']})" if cpi else "none published"
        lines.append(f"| {core} ({data['machine']}) | " + " | ".join(cells) + f" | {cpi_text} |")
    lines.append("")
    per_element = " (per output element where the column says so)" if heads != names else ""
    lines.append(f"Instructions per MAC{per_element} (bench/results/cmsis_insns.json, commit {short(insns['commit'])}).")
    return "\n".join(lines)


def own_table(own):
    """Instructions per MAC of bundlefit's own kernels, float / int8, per core (measure_own.py's results),
    and per output element for the layers without MACs when measured."""
    first = next(iter(own["cores"].values()))
    names = list(first["workloads"])
    elements = list(first.get("element_workloads", {}))
    lines = ["| core | " + " | ".join(names + [n + " (per element)" for n in elements]) + " |",
             "|---|" + "---|" * (len(names) + len(elements))]
    for core, data in own["cores"].items():
        cells = [f"{data['workloads'][n]['float_instructions_per_mac']:.3f} / "
                 f"{data['workloads'][n]['int8_instructions_per_mac']:.3f}" for n in names]
        cells += [f"{data['element_workloads'][n]['float_instructions_per_element']:.3f} / "
                  f"{data['element_workloads'][n]['int8_instructions_per_element']:.3f}" for n in elements]
        lines.append(f"| {core} | " + " | ".join(cells) + " |")
    lines.append("")
    per_element = " (per output element where the column says so)" if elements else ""
    lines.append(f"Instructions per MAC{per_element}, float / int8 (bench/results/own_insns.json, "
                 f"commit {short(own['commit'])}).")
    return "\n".join(lines)


def render(result, insns, own):
    return {"calibration": calibration_table(result), "predictions": prediction_table(result),
            "cmsis": cmsis_table(insns), "own": own_table(own)}


def splice(text, name, table):
    pattern = re.compile(rf"(<!-- bench_cost:{name} -->\n)(?:.*?\n)?(<!-- /bench_cost:{name} -->)", re.S)
    if not pattern.search(text):
        raise RuntimeError(f"{README}: no <!-- bench_cost:{name} --> markers")
    return pattern.sub(lambda m: m.group(1) + table + "\n" + m.group(2), text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bundlefit", help="bundlefit binary (not needed with --check-readme)")
    ap.add_argument("--models-dir", help="directory with the reference models' .onnx files")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "cost.json"))
    ap.add_argument("--insns", default=os.path.join(ROOT, "bench", "results", "cmsis_insns.json"),
                    help="measure_cmsis.py's results (rendered, not re-measured)")
    ap.add_argument("--own", default=os.path.join(ROOT, "bench", "results", "own_insns.json"),
                    help="measure_own.py's results (rendered, not re-measured)")
    ap.add_argument("--update-readme", action="store_true")
    ap.add_argument("--check-readme", action="store_true",
                    help="compare device_db/README.md's tables with --out; exit 1 if they differ")
    args = ap.parse_args()

    if args.check_readme:
        result = json.load(open(args.out))
        text = open(README).read()
        expected = text
        for name, table in render(result, json.load(open(args.insns)), json.load(open(args.own))).items():
            expected = splice(expected, name, table)
        if expected != text:
            print(f"{README}: generated tables differ from {args.out}; run bench_cost.py --update-readme")
            return 1
        print(f"{README}: tables match {args.out}")
        return 0

    if not args.bundlefit or not args.models_dir:
        ap.error("--bundlefit and --models-dir are required to measure")
    result = measure(args.bundlefit, args.models_dir)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    tables = render(result, json.load(open(args.insns)), json.load(open(args.own)))
    print(tables["calibration"] + "\n\n" + tables["predictions"])
    if args.update_readme:
        text = open(README).read()
        for name, table in tables.items():
            text = splice(text, name, table)
        open(README, "w").write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
