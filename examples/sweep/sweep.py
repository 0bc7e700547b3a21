#!/usr/bin/python3
"""Which MobileNetV2s fit which microcontroller: a width x resolution sweep.

Builds a grid of MobileNetV2 candidates in memory (mobilenet_v2.py, ONNX's
Python API; 8 widths x 6 resolutions = 48, ImageNet's 1000 classes), asks
`import bundlefit` whether each one's int8 build fits three parts on two
threads, writes every answer to sweep.csv and plots MACs (the accuracy proxy)
against RAM and Flash with each part's capacity: the fit boundary.

    PYTHONPATH=build/python /usr/bin/python3 examples/sweep/sweep.py [--out DIR]

Each answer is `bundlefit fit`'s: the candidate compiled for the part's core
(code sizes cached, so a second run only plans).
"""
import argparse
import concurrent.futures
import csv
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mobilenet_v2 import count_macs, mobilenet_v2  # noqa: E402

import bundlefit  # noqa: E402

WIDTHS = [0.35, 0.5, 0.6, 0.75, 0.85, 1.0, 1.2, 1.4]
RESOLUTIONS = [96, 128, 144, 160, 192, 224]
PARTS = ["stm32f746", "stm32h743", "rt1062"]  # MCUNet's two parts and the i.MX RT1060


def answer(job):
    width, resolution, part, model = job
    report = bundlefit.fit(model, device=part, variant="int8", suggestions=False)
    return {"width": width, "resolution": resolution, "part": part,
            "macs": count_macs(width, resolution), "fits": report["fits"],
            "ram": report["totals"]["ram"], "flash": report["totals"]["flash"],
            "ram_capacity": report["totals"]["ram_capacity"],
            "flash_capacity": report["totals"]["flash_capacity"],
            "activations": report["bundle"]["activations"], "constant": report["bundle"]["constant"],
            "mutable": report["bundle"]["mutable"], "code": report["bundle"]["code"],
            "code_source": report["code"]["source"], "predicted_ms": report["predicted_ms"]}


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    colors = dict(zip(PARTS, ["tab:red", "tab:orange", "tab:blue"]))
    # What the model needs, the same on every part: the arena and I/O in RAM,
    # weights and code in Flash; each part's capacity is its boundary.
    needs = {"ram": lambda r: r["activations"] + r["mutable"], "flash": lambda r: r["constant"] + r["code"]}
    first = [r for r in rows if r["part"] == PARTS[0]]
    for ax, key, label in [(axes[0], "ram", "activations + I/O (KiB)"),
                           (axes[1], "flash", "weights + code (KiB)")]:
        ax.scatter([r["macs"] / 1e6 for r in first], [needs[key](r) / 1024 for r in first], c="gray", s=14,
                   label="candidate")
        for part in PARTS:
            mine = [r for r in rows if r["part"] == part]
            fitting = [r for r in mine if r["fits"]]
            ax.scatter([r["macs"] / 1e6 for r in fitting], [needs[key](r) / 1024 for r in fitting],
                       facecolors="none", edgecolors=colors[part], s=40 + 30 * PARTS.index(part),
                       label=f"fits {part}")
            ax.axhline(mine[0][key + "_capacity"] / 1024, color=colors[part], ls="--", lw=1,
                       label=f"{part} {key.upper() if key == 'ram' else 'Flash'}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("MACs (millions, accuracy proxy)")
        ax.set_ylabel(label + ", int8 build")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"MobileNetV2 width x resolution ({len(first)} candidates), int8: the fit boundary per part")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=".")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    # Part 1: the candidates, built in memory.
    start = time.perf_counter()
    models = {(w, r): bundlefit.load(mobilenet_v2(w, r).SerializeToString(), name=f"mnv2_{w}_{r}.onnx")
              for w in WIDTHS for r in RESOLUTIONS}
    built = time.perf_counter() - start
    # Part 2: every candidate on every part, two at a time.
    jobs = [(w, r, part, m) for (w, r), m in models.items() for part in PARTS]
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        rows = list(pool.map(answer, jobs))
    fitted = time.perf_counter() - start
    with open(os.path.join(args.out, "sweep.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    # Part 3: the plot, and the biggest candidate that fits each part.
    plot(rows, os.path.join(args.out, "sweep.png"))
    print(f"{len(models)} candidates built in {built:.1f} s; {len(jobs)} fit answers in {fitted:.1f} s")
    for part in PARTS:
        fitting = [r for r in rows if r["part"] == part and r["fits"]]
        best = max(fitting, key=lambda r: r["macs"], default=None)
        print(f"{part:<10} {len(fitting):>2} of {len(models)} fit" +
              (f"; most MACs: width {best['width']} at {best['resolution']}x{best['resolution']}, "
               f"{best['macs'] / 1e6:.1f} M MACs, RAM {best['ram']:,}, Flash {best['flash']:,}" if best else ""))
    print(f"wrote {os.path.join(args.out, 'sweep.csv')} and sweep.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
