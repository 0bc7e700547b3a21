#!/usr/bin/env python3
"""bench_tflite: bundlefit's RAM for TFLite Micro's example models, beside TFLM's arena.

For each .tflite in ../shared/third_party/tflm/models (seanet's 127 int16x8 layers left out:
bundlefit refuses int16 by name), in the same run:
- TFLM (bin/tflm_run, reference kernels, x86-64): arena_used (what a TFLM user sizes the arena
  to), its split into arena_nonpersistent (TFLM's greedy planner: activations, inputs, outputs
  and kernel scratch) and arena_persistent (interpreter structures, op data), and the model's
  input + output bytes;
- bundlefit (`plan --json`, host, at --memory-opt 2, the default, and 0): activations (kernel
  scratch included) and mutable (inputs and outputs, each 64-byte aligned as Glow's bundles),
  and their sum, the RAM a bundle needs beside its weights: a bundle carries no interpreter.
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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bundlefit", required=True)
    parser.add_argument("--tflm", required=True, help="../shared/third_party/tflm")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "results",
                                                      "tflite.json"))
    args = parser.parse_args()
    tflm_run = os.path.join(args.tflm, "bin", "tflm_run")
    if not os.path.exists(tflm_run):
        print(f"SKIP: {tflm_run} is absent")
        return SKIP
    models_dir = os.path.join(args.tflm, "models")
    models = sorted(os.path.relpath(os.path.join(d, f), models_dir)
                    for d, _, files in os.walk(models_dir) for f in files
                    if f.endswith(".tflite") and "seanet" not in d)
    rows, refused = [], []
    print(f"{'model':<46}{'TFLM used':>10}{'planned':>9}{'interp.':>9}"
          f"{'bf act.':>9}{'bf I/O':>8}{'bf RAM':>8}{'act. opt0':>10}")
    for relative in models:
        path = os.path.join(models_dir, relative)
        sizes, error = bundlefit_plan(args.bundlefit, path, 2)
        if error:
            # "bundlefit: error: PATH: 1 unsupported operator: ..." -> "1 unsupported ...".
            why = error.split(path + ": ", 1)[-1]
            refused.append({"model": relative, "error": why})
            print(f"{relative:<46}refused: {why[:100]}")
            continue
        sizes0, error0 = bundlefit_plan(args.bundlefit, path, 0)
        if error0:
            sys.exit(f"{relative}: --memory-opt 0: {error0}")
        tflm = tflm_figures(tflm_run, path)
        ram = sizes["activations"] + sizes["mutable"]
        row = {
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
        }
        rows.append(row)
        print(f"{relative:<46}{tflm['arena_used']:>10,}{tflm['arena_nonpersistent']:>9,}"
              f"{tflm['arena_persistent']:>9,}{sizes['activations']:>9,}{sizes['mutable']:>8,}"
              f"{ram:>8,}{sizes0['activations']:>10,}")
    result = {"schema": "bundlefit.bench.tflite/1", "commit": measured_commit(args.bundlefit),
              "machine": os.uname().machine, "cpus": os.cpu_count(),
              "tflm_commit": open(os.path.join(args.tflm, "TFLM_COMMIT")).read().strip(),
              "models": rows, "refused": refused, "loaded": len(rows), "refused_count": len(refused)}
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    os.replace(tmp, args.out)
    print(f"wrote {args.out}: {len(rows)} models side by side, {len(refused)} refused")
    return 0


if __name__ == "__main__":
    sys.exit(main())
