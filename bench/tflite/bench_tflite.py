#!/usr/bin/env python3
"""bench_tflite: bundlefit's RAM for TFLite Micro's example models, beside TFLM's arena.

For each .tflite in ../shared/third_party/tflm/models, in the same run:
- TFLM (bin/tflm_run, reference kernels, x86-64): arena_used (what a TFLM user sizes the arena
  to), its split into arena_nonpersistent (TFLM's greedy planner: activations, inputs, outputs
  and kernel scratch) and arena_persistent (interpreter structures, op data), and the model's
  input + output bytes;
- bundlefit (`plan --json`, host, at --memory-opt 2, the default, and 0): activations (kernel
  scratch included) and mutable (inputs and outputs, each 64-byte aligned as Glow's bundles),
  and their sum, the RAM a bundle needs beside its weights: a bundle carries no interpreter.
The example models are rows of "models"; seanet's 127 int16x8 layers (TFLM's integration
tests, one operator each) are rows of "seanet", summed in "seanet_summary" (the layers whose
activations are at most TFLM's planned part and whose RAM is below arena_used, counted), with
the largest layers by TFLM's arena_used in "seanet_largest".
A model bundlefit refuses is listed with the one-line error it prints (unsupported operators
by name).

Usage: bench_tflite.py --bundlefit EXE --tflm DIR [--out FILE]
Exit 77 when DIR/bin/tflm_run is absent.
"""
import argparse, json, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from source_commit import measured_commit  # noqa: E402

SKIP = 77


def tflm_figures(tflm_run, model):
    info = json.loads(subprocess.check_output([tflm_run, model, "-", "-", "--no-breakdown"]))
    io = sum(t["bytes"] for t in info["inputs"] + info["outputs"])
    return {key: info[key] for key in ("arena_used", "arena_nonpersistent", "arena_persistent")} | {
        "io_bytes": io}


def bundlefit_plan(bundlefit, model, level):
    """(sizes of `plan --json`, None) or (None, the error line)."""
    done = subprocess.run([bundlefit, "-q", "plan", model, "--json", "-", "--memory-opt", str(level)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        return None, (lines[-1] if lines else f"exit {done.returncode}")
    return json.loads(done.stdout)["sizes"], None


def measure(bundlefit, tflm_run, models_dir, relative):
    """(the row of one model, None) or (None, the refusal {model, error})."""
    path = os.path.join(models_dir, relative)
    sizes, error = bundlefit_plan(bundlefit, path, 2)
    if error:
        # "bundlefit: error: PATH: 1 unsupported operator: ..." -> "1 unsupported ...".
        return None, {"model": relative, "error": error.split(path + ": ", 1)[-1]}
    sizes0, error0 = bundlefit_plan(bundlefit, path, 0)
    if error0:
        sys.exit(f"{relative}: --memory-opt 0: {error0}")
    tflm = tflm_figures(tflm_run, path)
    ram = sizes["activations"] + sizes["mutable"]
    return {
        "model": relative,
        "tflm": tflm,
        "bundlefit": {"activations": sizes["activations"], "mutable": sizes["mutable"],
                      "ram": ram, "activations_memory_opt0": sizes0["activations"],
                      "constant": sizes["constant"]},
        # Bytes bundlefit needs fewer than TFLM (negative: more).
        "ram_saved_vs_arena_used": tflm["arena_used"] - ram,
        "ram_ratio_to_arena_used": round(ram / tflm["arena_used"], 3),
        # TFLM's planned part holds the inputs and outputs too: bundlefit's activations plus
        # its I/O, against it.
        "planned_saved": tflm["arena_nonpersistent"] - ram,
        "activations_at_most_tflm_planned": sizes["activations"] <= tflm["arena_nonpersistent"],
    }, None


def print_row(row):
    tflm, bf = row["tflm"], row["bundlefit"]
    print(f"{row['model']:<46}{tflm['arena_used']:>10,}{tflm['arena_nonpersistent']:>9,}"
          f"{tflm['arena_persistent']:>9,}{bf['activations']:>9,}{bf['mutable']:>8,}"
          f"{bf['ram']:>8,}{bf['activations_memory_opt0']:>10,}")


def seanet_summary(rows):
    """The seanet layers summed, and how many keep each of the issue's two bounds."""
    def total(part, key):
        return sum(row[part][key] for row in rows)
    used, ram = total("tflm", "arena_used"), total("bundlefit", "ram")
    return {
        "layers": len(rows),
        "tflm": {key: total("tflm", key) for key in
                 ("arena_used", "arena_nonpersistent", "arena_persistent", "io_bytes")},
        "bundlefit": {key: total("bundlefit", key) for key in
                      ("activations", "mutable", "ram", "activations_memory_opt0", "constant")},
        "ram_saved_vs_arena_used": used - ram,
        "ram_ratio_to_arena_used": round(ram / used, 3),
        "activations_at_most_tflm_planned": sum(r["activations_at_most_tflm_planned"] for r in rows),
        "ram_below_arena_used": sum(r["bundlefit"]["ram"] < r["tflm"]["arena_used"] for r in rows),
        "max_ram_ratio_to_arena_used": max(r["ram_ratio_to_arena_used"] for r in rows),
        "min_ram_ratio_to_arena_used": min(r["ram_ratio_to_arena_used"] for r in rows),
        "memory_opt_changes": sum(r["bundlefit"]["activations"] !=
                                  r["bundlefit"]["activations_memory_opt0"] for r in rows),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bundlefit", required=True)
    parser.add_argument("--tflm", required=True, help="../shared/third_party/tflm")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "results",
                                                      "tflite.json"))
    parser.add_argument("--largest", type=int, default=5,
                        help="seanet layers listed by TFLM's arena_used, largest first")
    args = parser.parse_args()
    tflm_run = os.path.join(args.tflm, "bin", "tflm_run")
    if not os.path.exists(tflm_run):
        print(f"SKIP: {tflm_run} is absent")
        return SKIP
    models_dir = os.path.join(args.tflm, "models")
    found = sorted(os.path.relpath(os.path.join(d, f), models_dir)
                   for d, _, files in os.walk(models_dir) for f in files if f.endswith(".tflite"))
    rows, seanet, refused = [], [], []
    print(f"{'model':<46}{'TFLM used':>10}{'planned':>9}{'interp.':>9}"
          f"{'bf act.':>9}{'bf I/O':>8}{'bf RAM':>8}{'act. opt0':>10}")
    for relative in found:
        row, refusal = measure(args.bundlefit, tflm_run, models_dir, relative)
        if refusal:
            refused.append(refusal)
            print(f"{relative:<46}refused: {refusal['error'][:100]}")
            continue
        print_row(row)
        if relative.startswith("seanet" + os.sep):
            row["operator"] = relative.split(os.sep)[1].upper()
            seanet.append(row)
        else:
            rows.append(row)
    result = {"schema": "bundlefit.bench.tflite/2", "commit": measured_commit(args.bundlefit),
              "machine": os.uname().machine, "cpus": os.cpu_count(),
              "tflm_commit": open(os.path.join(args.tflm, "TFLM_COMMIT")).read().strip(),
              "models": rows, "refused": refused, "loaded": len(rows) + len(seanet),
              "refused_count": len(refused), "seanet": seanet}
    if seanet:
        result["seanet_summary"] = seanet_summary(seanet)
        result["seanet_largest"] = sorted(seanet, key=lambda r: -r["tflm"]["arena_used"])[
            :args.largest]
        summary = result["seanet_summary"]
        print(f"seanet: {summary['layers']} layers, activations <= TFLM planned on "
              f"{summary['activations_at_most_tflm_planned']}, RAM < arena_used on "
              f"{summary['ram_below_arena_used']}; RAM/arena_used {summary['ram_ratio_to_arena_used']} "
              f"in sum, {summary['min_ram_ratio_to_arena_used']}..{summary['max_ram_ratio_to_arena_used']}")
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(tmp, args.out)
    print(f"wrote {args.out}: {len(rows)} models and {len(seanet)} seanet layers side by side, "
          f"{len(refused)} refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
