#!/usr/bin/python3
"""bench_codegen: code generation benchmark for bundlefit bundles (issue 4).

For every reference model x target x opt level: compile time and the object's .text
bytes. For every model on the host: bundle inference time next to onnxruntime-node
(one thread), measured side by side in alternating rounds, as a ratio, plus the max abs
difference of their outputs. Prints a table and writes bench/results/codegen.json.

  cd bench/codegen && ONNXRUNTIME_NODE_INSTALL=skip npm ci   # once; node_modules is not committed
  /usr/bin/python3 bench/codegen/bench_codegen.py --bundlefit /tmp/build-lead/bin/bundlefit

Needs /usr/bin/python3 with numpy (for tests/models/make_models.py and the output check),
a C compiler (cc), and node. Without onnxruntime-node the host table shows bundle times only.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from source_commit import measured_commit, spread  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = ["lenet", "resnet8", "ds_cnn", "mobilenet_v1_025", "autoencoder", "mobilenet_v2", "branchy"]
TARGETS = ["host", "cortex-m7", "cortex-m33", "cortex-m4", "cortex-m0plus"]
OPTS = ["O2", "Os"]
GOAL_MOBILENETV2_COMPILE_S = 10.0
GOAL_LENET_M7_TEXT = 9640
GOAL_HOST_RATIO = 2.0
COMPILED_RE = re.compile(r"compiled \S+ for .* in ([0-9.]+) s")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def compile_bundle(bundlefit, model_path, out_dir, target, opt, memory_opt):
    shutil.rmtree(out_dir, ignore_errors=True)
    t0 = time.monotonic()
    p = run([bundlefit, "compile", model_path, "-o", out_dir, "--target", target, "--opt", opt,
             "--memory-opt", str(memory_opt)])
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError(f"bundlefit compile failed ({p.returncode}): {p.stderr.strip()[-400:]}")
    m = COMPILED_RE.search(p.stderr)
    net = os.path.splitext(os.path.basename(model_path))[0]
    mem = json.load(open(os.path.join(out_dir, net + ".memory.json")))
    return {"wall_s": wall, "codegen_s": float(m.group(1)) if m else None,
            "text": mem["code_size"]["text"], "rodata": mem["code_size"].get("rodata"),
            "memory": mem}


def median(xs):
    return statistics.median(xs) if xs else None


def ort_available():
    if not shutil.which("node"):
        return False, "node not found"
    if not os.path.isdir(os.path.join(HERE, "node_modules", "onnxruntime-node")):
        return False, "onnxruntime-node not installed (cd bench/codegen && ONNXRUNTIME_NODE_INSTALL=skip npm ci)"
    p = run(["node", "-e", "const o=require('./node_modules/onnxruntime-node');"
             "console.log(require('./node_modules/onnxruntime-node/package.json').version)"], cwd=HERE)
    if p.returncode != 0:
        return False, "onnxruntime-node does not load: " + p.stderr.strip()[-300:]
    return True, p.stdout.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundlefit", default=os.environ.get("BUNDLEFIT", "/tmp/build-lead/bin/bundlefit"))
    ap.add_argument("--work", default="/tmp/bench-codegen", help="scratch directory (models, bundles)")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--opts", default=",".join(OPTS))
    ap.add_argument("--compile-reps", type=int, default=1, help="compiles per model/target/opt (median reported)")
    ap.add_argument("--rounds", type=int, default=5, help="alternating bundle/ORT timing rounds per model")
    ap.add_argument("--budget", type=float, default=1.0, help="seconds of timed runs per process")
    ap.add_argument("--min-iters", type=int, default=5)
    ap.add_argument("--max-iters", type=int, default=2000)
    ap.add_argument("--no-host-timing", action="store_true")
    ap.add_argument("--memory-opt", type=int, default=0,
                    help="bundlefit --memory-opt level of every bundle (default 0: layer by layer, "
                         "so the figures measure the kernels; bundlefit's own default is 2)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "codegen.json"))
    args = ap.parse_args()

    # Run a private copy of the binary so a rebuild of the build tree mid-run cannot break it.
    os.makedirs(args.work, exist_ok=True)
    bundlefit_src = os.path.abspath(args.bundlefit)
    args.bundlefit = os.path.join(args.work, "bundlefit")
    shutil.copy2(bundlefit_src, args.bundlefit)
    models = [m for m in args.models.split(",") if m]
    targets = [t for t in args.targets.split(",") if t]
    opts = [o for o in args.opts.split(",") if o]
    os.makedirs(args.work, exist_ok=True)
    model_dir = os.path.join(args.work, "models")
    if not all(os.path.exists(os.path.join(model_dir, m + ".onnx")) for m in models):
        log(f"generating reference models into {model_dir}")
        p = run([sys.executable, os.path.join(ROOT, "tests", "models", "make_models.py"), "--out", model_dir])
        if p.returncode != 0:
            sys.exit("make_models.py failed: " + p.stderr)

    try:
        load_before = os.getloadavg()
    except OSError:
        load_before = None
    results = {"schema": "bundlefit.bench.codegen/1", "bundlefit": bundlefit_src,
               "commit": measured_commit(bundlefit_src),
               "bundlefit_mtime_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(bundlefit_src))),
               "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "nproc": os.cpu_count(), "loadavg_at_start": load_before,
               "compile_reps": args.compile_reps, "rounds": args.rounds, "budget_s": args.budget,
               "memory_opt": args.memory_opt,
               "goals": {"mobilenet_v2_compile_s": GOAL_MOBILENETV2_COMPILE_S,
                         "lenet_cortex_m7_text_bytes": GOAL_LENET_M7_TEXT,
                         "host_bundle_over_ort": GOAL_HOST_RATIO},
               "compile": [], "host": []}

    # 1. Compile time and .text, per model x target x opt.
    host_bundles = {}
    for m in models:
        onnx = os.path.join(model_dir, m + ".onnx")
        for t in targets:
            for o in opts:
                out_dir = os.path.join(args.work, "bundles", f"{m}-{t}-{o}")
                row = {"model": m, "target": t, "opt": o}
                try:
                    reps = [compile_bundle(args.bundlefit, onnx, out_dir, t, o, args.memory_opt) for _ in range(args.compile_reps)]
                    row.update({"wall_s": median([r["wall_s"] for r in reps]),
                                "wall_s_all": [round(r["wall_s"], 3) for r in reps],
                                "codegen_s": median([r["codegen_s"] for r in reps if r["codegen_s"] is not None]),
                                "text": reps[-1]["text"], "rodata": reps[-1]["rodata"],
                                "triple": reps[-1]["memory"]["target"].get("triple"),
                                "cpu": reps[-1]["memory"]["target"].get("cpu")})
                    if t == "host" and o == "O2":
                        host_bundles[m] = (out_dir, reps[-1]["memory"])
                except Exception as e:  # keep going; report the failure
                    row["error"] = str(e)
                results["compile"].append(row)
                log(f"compile {m:17s} {t:14s} {o}: " +
                    (f"{row['wall_s']:.2f} s (codegen {row['codegen_s']:.2f} s) .text {row['text']:,}"
                     if "error" not in row else "ERROR " + row["error"]))

    # 2. Host inference: bundle vs onnxruntime-node, alternating rounds.
    ort_ok, ort_info = (False, "skipped") if args.no_host_timing else ort_available()
    results["onnxruntime_node"] = ort_info if ort_ok else None
    if not ort_ok:
        results["onnxruntime_note"] = ort_info
        log("onnxruntime-node: " + ort_info)
    cc = os.environ.get("CC", "cc")
    for m in ([] if args.no_host_timing else models):
        if m not in host_bundles:
            continue
        out_dir, mem = host_bundles[m]
        ins = [p for p in mem["placeholders"] if p["kind"] == "input"]
        outs = [p for p in mem["placeholders"] if p["kind"] == "output"]
        row = {"model": m, "opt": "O2", "macs": mem["totals"]["macs"]}
        if len(ins) != 1 or not outs:
            row["error"] = "timing driver supports one input"
            results["host"].append(row)
            continue
        timer = os.path.join(out_dir, "bundle_timer")
        p = run([cc, "-O2", f"-DBUNDLE_FN={m}", os.path.join(HERE, "bundle_timer.c"),
                 os.path.join(out_dir, m + ".o"), "-o", timer, "-lm", "-no-pie"])
        if p.returncode != 0:
            row["error"] = "cc failed: " + p.stderr[-400:]
            results["host"].append(row)
            continue
        sz = mem["sizes"]
        out = outs[0]
        npy = os.path.join(model_dir, m + ".input.npy")
        b_raw, o_raw = os.path.join(out_dir, "bundle_out.raw"), os.path.join(out_dir, "ort_out.raw")
        common = [str(args.budget), str(args.min_iters), str(args.max_iters)]
        b_cmd = [timer, os.path.join(out_dir, m + ".weights.bin"), str(sz["constant"]), str(sz["mutable"]),
                 str(sz["activations"]), str(ins[0]["offset"]), npy, str(out["offset"]), str(out["size"]),
                 b_raw] + common
        o_cmd = ["node", os.path.join(HERE, "ort_timer.js"), os.path.join(model_dir, m + ".onnx"), npy,
                 out["name"], o_raw] + common
        b_med, o_med, b_min, o_min, ratios = [], [], [], [], []
        try:
            for r in range(args.rounds):
                # Alternate which side goes first so drift in machine load hits both.
                order = [("b", b_cmd), ("o", o_cmd)] if r % 2 == 0 else [("o", o_cmd), ("b", b_cmd)]
                got = {}
                for side, cmd in order:
                    if side == "o" and not ort_ok:
                        continue
                    p = run(cmd)
                    if p.returncode != 0:
                        raise RuntimeError(f"{os.path.basename(cmd[0])} failed: {p.stderr.strip()[-400:]}")
                    got[side] = json.loads(p.stdout.strip().splitlines()[-1])
                b_med.append(got["b"]["median_ms"]); b_min.append(got["b"]["min_ms"])
                if "o" in got:
                    o_med.append(got["o"]["median_ms"]); o_min.append(got["o"]["min_ms"])
                    ratios.append(got["b"]["median_ms"] / got["o"]["median_ms"])
            # Host timings are noisy: keep every round and the spread of the
            # per-round medians beside the median the README quotes.
            row.update({"bundle_ms": median(b_med), "bundle_ms_rounds": [round(x, 4) for x in b_med],
                        "bundle_ms_spread": spread(b_med), "bundle_min_ms": min(b_min)})
            if ort_ok:
                a = np.fromfile(b_raw, dtype="<f4")
                b = np.fromfile(o_raw, dtype="<f4")
                row.update({"ort_ms": median(o_med), "ort_ms_rounds": [round(x, 4) for x in o_med],
                            "ort_min_ms": min(o_min), "ratio": median(ratios),
                            "ratio_rounds": [round(x, 3) for x in ratios],
                            "ort_ms_spread": spread(o_med), "ratio_spread": spread(ratios),
                            "ratio_of_mins": min(b_min) / min(o_min),
                            "max_abs_diff": float(np.max(np.abs(a - b))) if a.shape == b.shape else None,
                            "max_abs_output": float(np.max(np.abs(b)))})
        except Exception as e:
            row["error"] = str(e)
        results["host"].append(row)
        log(f"host {m:17s} " + (f"bundle {row['bundle_ms']:.3f} ms" if "bundle_ms" in row else row.get("error", "")) +
            (f"  ort {row['ort_ms']:.3f} ms  ratio {row['ratio']:.2f}  maxdiff {row['max_abs_diff']:.2e}"
             if "ratio" in row else ""))

    try:
        results["loadavg_at_end"] = os.getloadavg()
    except OSError:
        pass
    results["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    # Goals.
    goals = {}
    mv2 = [r for r in results["compile"] if r["model"] == "mobilenet_v2" and "wall_s" in r]
    if mv2:
        worst = max(mv2, key=lambda r: r["wall_s"])
        goals["mobilenet_v2_compile"] = {"worst_wall_s": worst["wall_s"], "at": f"{worst['target']} {worst['opt']}",
                                         "met": worst["wall_s"] < GOAL_MOBILENETV2_COMPILE_S}
    lm7 = [r for r in results["compile"] if r["model"] == "lenet" and r["target"] == "cortex-m7" and "text" in r]
    if lm7:
        best = min(lm7, key=lambda r: r["text"])
        goals["lenet_cortex_m7_text"] = {"text": {r["opt"]: r["text"] for r in lm7}, "best": best["text"],
                                         "met": best["text"] < GOAL_LENET_M7_TEXT}
    rat = [r for r in results["host"] if r.get("ratio") is not None]
    if rat:
        goals["host_within_2x"] = {"worst": max(r["ratio"] for r in rat),
                                   "misses": [r["model"] for r in rat if r["ratio"] > GOAL_HOST_RATIO],
                                   "met": all(r["ratio"] <= GOAL_HOST_RATIO for r in rat)}
    results["goal_check"] = goals

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    os.replace(tmp, args.out)

    # Tables.
    print(f"\nCompile (wall s of `bundlefit compile`, median of {args.compile_reps}; .text bytes)")
    hdr = f"{'model':17s} " + " ".join(f"{t + ' ' + o:>22s}" for t in targets for o in opts)
    print(hdr)
    for m in models:
        cells = []
        for t in targets:
            for o in opts:
                r = next(x for x in results["compile"] if x["model"] == m and x["target"] == t and x["opt"] == o)
                cells.append(f"{'ERR':>22s}" if "error" in r else f"{r['wall_s']:6.2f}s {r['text']:>13,}")
        print(f"{m:17s} " + " ".join(cells))
    if results["host"]:
        print(f"\nHost inference (O2 bundle vs onnxruntime-node {ort_info if ort_ok else 'n/a'}, 1 thread; "
              f"median of {args.rounds} alternating rounds)")
        print(f"{'model':17s} {'MMAC':>8s} {'bundle ms':>10s} {'ORT ms':>10s} {'ratio':>7s} "
              f"{'ratio min-max':>14s} {'max|diff|':>10s}")
        for r in results["host"]:
            if "bundle_ms" not in r:
                print(f"{r['model']:17s} ERROR {r.get('error', '')}")
                continue
            print(f"{r['model']:17s} {r['macs'] / 1e6:8.1f} {r['bundle_ms']:10.3f} " +
                  (f"{r['ort_ms']:10.3f} {r['ratio']:7.2f} "
                   f"{r['ratio_spread'][0]:6.2f}-{r['ratio_spread'][1]:<7.2f} {r['max_abs_diff']:10.2e}"
                   if "ratio" in r else f"{'n/a':>10s}"))
    print("\nGoals: " + json.dumps(goals))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
