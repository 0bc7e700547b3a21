#!/usr/bin/python3
"""bench_codegen: code generation benchmark for bundlefit bundles (issue 4).

For every reference model x target x opt level: compile time and the object's .text
bytes. For every model on the host: bundle inference time next to onnxruntime-node
(one thread), measured side by side in alternating rounds, as a ratio, plus the max abs
difference of their outputs. Prints a table and writes bench/results/codegen.json.

With --levels 0,2 the host bundles are compiled at each memory-opt level and timed in the
same alternating rounds as one onnxruntime run: per-model ratios at each level and their
geomeans (bench/results/codegen_vs_ort.json). --baseline BIN times another bundlefit build's
bundles in the same rounds (before/after a change, side by side).

  cd bench/codegen && ONNXRUNTIME_NODE_INSTALL=skip npm ci   # once; node_modules is not committed
  /usr/bin/python3 bench/codegen/bench_codegen.py --bundlefit /tmp/build-lead/bin/bundlefit

Needs /usr/bin/python3 with numpy (for tests/models/make_models.py and the output check),
a C compiler (cc), and node. Without onnxruntime-node the host table shows bundle times only.
"""
import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from source_commit import measured_commit, spread  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = ["lenet", "resnet8", "ds_cnn", "mobilenet_v1_025", "autoencoder", "mobilenet_v2", "branchy"]
# Built on request only: make_models.py's bench-only models and widths of
# examples/sweep's MobileNetV2 (width, resolution).
BENCH_ONLY = ["efficientnet_b0", "mobilenet_v3_small", "mnasnet1_0", "mobilenet_v3_large", "resnet18",
              "squeezenet1_1"]
SWEEP_MODELS = {"mobilenet_v2_035": (0.35, 96)}
# The host comparison's model set (--levels): every architecture the repository builds.
ORT_MODELS = MODELS + BENCH_ONLY + list(SWEEP_MODELS)
TARGETS = ["host", "cortex-m7", "cortex-m33", "cortex-m4", "cortex-m0plus"]
OPTS = ["O2", "Os"]
GOAL_MOBILENETV2_COMPILE_S = 10.0
GOAL_LENET_M7_TEXT = 9640
GOAL_HOST_RATIO = 2.0
COMPILED_RE = re.compile(r"compiled \S+ for .* in ([0-9.]+) s")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def host_cpu():
    """The host's CPU: host ratios depend on it (onnxruntime's kernels and ours both pick their
    vector width from its features), so a result names the machine it measured."""
    first = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                first.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    flags = set(first.get("flags", "").split())
    # A virtual machine's model name can be generic ("Intel(R) Xeon(R) Processor"); the
    # family and model numbers still tell the generation.
    return {"model": first.get("model name"), "family": first.get("cpu family"),
            "model_number": first.get("model"), "avx2": "avx2" in flags, "avx512f": "avx512f" in flags}


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


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def ensure_models(models, model_dir):
    """Writes DIR/<m>.onnx and DIR/<m>.input.npy for every model not there yet."""
    missing = [m for m in models if not os.path.exists(os.path.join(model_dir, m + ".onnx"))]
    if not missing:
        return
    log(f"generating {', '.join(missing)} into {model_dir}")
    zoo = [m for m in missing if m not in SWEEP_MODELS]
    if zoo:
        p = run([sys.executable, os.path.join(ROOT, "tests", "models", "make_models.py"), "--out", model_dir,
                 "--only", ",".join(zoo)])
        if p.returncode != 0:
            sys.exit("make_models.py failed: " + p.stderr)
    for m in missing:
        if m in SWEEP_MODELS:
            import onnx  # noqa: E402 (only this model needs it)
            sys.path.insert(0, os.path.join(ROOT, "examples", "sweep"))
            from mobilenet_v2 import mobilenet_v2  # noqa: E402
            width, res = SWEEP_MODELS[m]
            onnx.save(mobilenet_v2(width, res), os.path.join(model_dir, m + ".onnx"))
            rng = np.random.default_rng(zlib.crc32(m.encode()))
            np.save(os.path.join(model_dir, m + ".input.npy"),
                    rng.standard_normal((1, 3, res, res)).astype(np.float32))


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


def side_name(level, baseline=False):
    return ("baseline_" if baseline else "") + f"L{level}"


def host_bundle(args, binary, m, model_dir, level, tag):
    """Compiles m for the host at O2 and memory-opt `level`; builds its timer. -> (dir, memory)."""
    out_dir = os.path.join(args.work, "bundles", f"{m}-host-O2-{tag}")
    mem = compile_bundle(binary, os.path.join(model_dir, m + ".onnx"), out_dir, "host", "O2", level)["memory"]
    return out_dir, mem


def timer_command(args, m, model_dir, out_dir, mem):
    """The bundle_timer command of a host bundle (built here), and the raw output path."""
    ins = [p for p in mem["placeholders"] if p["kind"] == "input"]
    outs = [p for p in mem["placeholders"] if p["kind"] == "output"]
    if len(ins) != 1 or not outs:
        raise RuntimeError("timing driver supports one input")
    timer = os.path.join(out_dir, "bundle_timer")
    p = run([os.environ.get("CC", "cc"), "-O2", f"-DBUNDLE_FN={m}", os.path.join(HERE, "bundle_timer.c"),
             os.path.join(out_dir, m + ".o"), "-o", timer, "-lm", "-no-pie"])
    if p.returncode != 0:
        raise RuntimeError("cc failed: " + p.stderr[-400:])
    sz, out = mem["sizes"], outs[0]
    raw = os.path.join(out_dir, "bundle_out.raw")
    cmd = [timer, os.path.join(out_dir, m + ".weights.bin"), str(sz["constant"]), str(sz["mutable"]),
           str(sz["activations"]), str(ins[0]["offset"]), os.path.join(model_dir, m + ".input.npy"),
           str(out["offset"]), str(out["size"]), raw, str(args.budget), str(args.min_iters),
           str(args.max_iters), args.clock]
    return cmd, raw, out["name"]


def time_host(args, m, model_dir, main_bundle, levels, ort_ok):
    """One model: its bundles at every level (and the baseline's) and onnxruntime, timed in
    alternating rounds (each side first in turn, so drift in machine load hits all)."""
    row = {"model": m, "opt": "O2"}
    try:
        sides, outputs, macs = {}, {}, {}
        for level in levels:
            for baseline in ([False, True] if args.baseline else [False]):
                name = side_name(level, baseline)
                if main_bundle and level == args.memory_opt and not baseline:
                    out_dir, mem = main_bundle
                else:
                    out_dir, mem = host_bundle(args, args.baseline if baseline else args.bundlefit, m,
                                               model_dir, level, name)
                cmd, raw, out_name = timer_command(args, m, model_dir, out_dir, mem)
                sides[name], outputs[name] = cmd, raw
                macs[name] = mem["totals"]["macs"]
        main = side_name(args.memory_opt if args.memory_opt in levels else levels[0])
        row["macs"] = macs[main]
        if ort_ok:
            outputs["ort"] = os.path.join(args.work, "bundles", f"{m}-ort_out.raw")
            sides["ort"] = ["node", os.path.join(HERE, "ort_timer.js"), os.path.join(model_dir, m + ".onnx"),
                            os.path.join(model_dir, m + ".input.npy"), out_name, outputs["ort"],
                            str(args.budget), str(args.min_iters), str(args.max_iters), args.clock]
        med = {k: [] for k in sides}
        mins = {k: [] for k in sides}
        names = list(sides)
        for r in range(args.rounds):
            for k in names[r % len(names):] + names[:r % len(names)]:
                p = run(sides[k])
                if p.returncode != 0:
                    raise RuntimeError(f"{k}: {os.path.basename(sides[k][0])} failed: {p.stderr.strip()[-400:]}")
                got = json.loads(p.stdout.strip().splitlines()[-1])
                med[k].append(got["median_ms"])
                mins[k].append(got["min_ms"])
        data = {k: np.fromfile(v, dtype="<f4") for k, v in outputs.items()}
        per_side = {}
        for k in sides:
            if k == "ort":
                continue
            f = {"bundle_ms": median(med[k]), "bundle_ms_rounds": [round(x, 4) for x in med[k]],
                 "bundle_ms_spread": spread(med[k]), "bundle_min_ms": min(mins[k]), "macs": macs[k]}
            if ort_ok:
                ratios = [b / o for b, o in zip(med[k], med["ort"])]
                a, b = data[k], data["ort"]
                f.update({"ratio": median(ratios), "ratio_rounds": [round(x, 3) for x in ratios],
                          "ratio_spread": spread(ratios), "ratio_of_mins": min(mins[k]) / min(mins["ort"]),
                          "max_abs_diff": float(np.max(np.abs(a - b))) if a.shape == b.shape else None})
            base = "baseline_" + k
            if base in sides:  # this build against the baseline's: outputs and speed
                a, b = data[k], data[base]
                f["speedup_vs_baseline"] = median([bb / aa for aa, bb in zip(med[k], med[base])])
                f["max_rel_diff_vs_baseline"] = (float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-30))
                                                 if a.shape == b.shape else None)
            per_side[k] = f
        row.update({key: per_side[main][key] for key in per_side[main] if key != "macs"})
        if ort_ok:
            row.update({"ort_ms": median(med["ort"]), "ort_ms_rounds": [round(x, 4) for x in med["ort"]],
                        "ort_ms_spread": spread(med["ort"]), "ort_min_ms": min(mins["ort"]),
                        "max_abs_output": float(np.max(np.abs(data["ort"])))})
        if len(per_side) > 1:
            row["sides"] = per_side
    except Exception as e:
        row["error"] = str(e)
    return row


def summarize(rows, levels, baseline):
    """Per side (level, baseline level): geomean of the ratios to onnxruntime, how many models
    within 1.5x and 2x, the worst."""
    summary = {}
    for level in levels:
        for base in ([False, True] if baseline else [False]):
            k = side_name(level, base)
            got = [(r["model"], r["sides"][k]["ratio"]) for r in rows
                   if "sides" in r and k in r["sides"] and "ratio" in r["sides"][k]]
            if not got:
                continue
            worst = max(got, key=lambda x: x[1])
            summary[k] = {"memory_opt": level, "models": len(got),
                          "geomean_ratio": geomean([x for _, x in got]),
                          "within_1_5x": sum(x <= 1.5 for _, x in got),
                          "within_2x": sum(x <= 2.0 for _, x in got),
                          "worst_ratio": worst[1], "worst_model": worst[0]}
            if base:
                continue
            speed = [r["sides"][k]["speedup_vs_baseline"] for r in rows
                     if "sides" in r and "speedup_vs_baseline" in r["sides"].get(k, {})]
            diffs = [r["sides"][k]["max_rel_diff_vs_baseline"] for r in rows
                     if r.get("sides", {}).get(k, {}).get("max_rel_diff_vs_baseline") is not None]
            if speed:
                summary[k]["geomean_speedup_vs_baseline"] = geomean(speed)
            if diffs:
                summary[k]["max_rel_diff_vs_baseline"] = max(diffs)
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bundlefit", default=os.environ.get("BUNDLEFIT", "/tmp/build-lead/bin/bundlefit"))
    ap.add_argument("--work", default="/tmp/bench-codegen", help="scratch directory (models, bundles)")
    ap.add_argument("--models", default=None,
                    help="comma list (default: the reference models; with --levels, also the "
                         "bench-only EfficientNet-B0, MobileNetV3-small/-large, MnasNet 1.0, ResNet-18, "
                         "SqueezeNet 1.1 and MobileNetV2-0.35 96x96)")
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
    ap.add_argument("--levels", default=None,
                    help="comma list of --memory-opt levels for the host timing (e.g. 0,2): each "
                         "model's bundles at every level and onnxruntime in the same rounds, ratios "
                         "and geomeans per level; default: --memory-opt alone")
    ap.add_argument("--baseline", default=None,
                    help="another bundlefit binary whose host bundles are timed in the same rounds")
    ap.add_argument("--clock", choices=["cpu", "wall"], default="cpu",
                    help="time each inference by the process's CPU time (default) or wall time")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "codegen.json"))
    args = ap.parse_args()

    # Run a private copy of the binary so a rebuild of the build tree mid-run cannot break it.
    os.makedirs(args.work, exist_ok=True)
    bundlefit_src = os.path.abspath(args.bundlefit)
    args.bundlefit = os.path.join(args.work, "bundlefit")
    shutil.copy2(bundlefit_src, args.bundlefit)
    baseline_src = os.path.abspath(args.baseline) if args.baseline else None
    if baseline_src:
        args.baseline = os.path.join(args.work, "bundlefit-baseline")
        shutil.copy2(baseline_src, args.baseline)
    levels = [int(x) for x in args.levels.split(",")] if args.levels else [args.memory_opt]
    models = [m for m in (args.models or ",".join(ORT_MODELS if args.levels else MODELS)).split(",") if m]
    targets = [t for t in args.targets.split(",") if t]
    opts = [o for o in args.opts.split(",") if o]
    os.makedirs(args.work, exist_ok=True)
    model_dir = os.path.join(args.work, "models")
    ensure_models(models, model_dir)

    try:
        load_before = os.getloadavg()
    except OSError:
        load_before = None
    results = {"schema": "bundlefit.bench.codegen/1", "bundlefit": bundlefit_src,
               "commit": measured_commit(bundlefit_src),
               "bundlefit_mtime_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(bundlefit_src))),
               "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "nproc": os.cpu_count(), "host_cpu": host_cpu(), "loadavg_at_start": load_before,
               "compile_reps": args.compile_reps, "rounds": args.rounds, "budget_s": args.budget,
               "memory_opt": args.memory_opt, "levels": levels, "clock": args.clock,
               "baseline": ({"bundlefit": baseline_src, "commit": measured_commit(baseline_src)}
                            if baseline_src else None),
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
    for m in ([] if args.no_host_timing else models):
        if m in host_bundles:
            row = time_host(args, m, model_dir, host_bundles[m], levels, ort_ok)
            results["host"].append(row)
            log(f"host {m:17s} " + "  ".join(
                f"{k} {v['bundle_ms']:.3f} ms" + (f" ratio {v['ratio']:.2f}" if "ratio" in v else "")
                for k, v in row.get("sides", {}).items()) + (f"  ort {row['ort_ms']:.3f} ms" if "ort_ms" in row else "")
                + ("  " + row["error"] if "error" in row else ""))
    if len(levels) > 1 or args.baseline:
        results["summary"] = summarize(results["host"], levels, bool(args.baseline))

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
    if results.get("summary"):
        keys = list(results["summary"])
        print(f"\nBundle / onnxruntime per memory-opt level (L<n>; baseline_L<n>: {baseline_src}), "
              f"median of {args.rounds} rounds, {args.clock} time")
        print(f"{'model':19s} " + " ".join(f"{k:>12s}" for k in keys) + "  speedup vs baseline")
        for r in results["host"]:
            sides = r.get("sides", {})
            print(f"{r['model']:19s} " + " ".join(
                f"{sides[k]['ratio']:12.2f}" if "ratio" in sides.get(k, {}) else f"{'-':>12s}" for k in keys)
                + "  " + " ".join(f"{k} {v['speedup_vs_baseline']:.2f}x" for k, v in sides.items()
                                  if "speedup_vs_baseline" in v)
                + (" ERROR " + r["error"] if "error" in r else ""))
        print(f"{'geomean':19s} " + " ".join(f"{results['summary'][k]['geomean_ratio']:12.2f}" for k in keys))
    print("\nGoals: " + json.dumps(goals))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
