#!/usr/bin/python3
"""Sweeps at scale: a 100-model zoo's CPU per answer, and 1,000 candidates on 2 Dask workers.

1. The zoo (examples/sweep/zoo.py: 60 MobileNetV1s and 40 DS-CNNs, float)
   on an nRF52840, about half of them not fitting: after one warm-up pass
   (which compiles every build, the suggestions' too), the CPU time of each
   `bundlefit.fit()` in this process, with its suggestions and without
   (suggestions=False). Issue 35's goal: under 1 s of CPU per model on
   average, warm; suggestions at most about twice one fit.
2. 1,000 distinct candidates (MobileNetV1, DS-CNN and MobileNetV2 shapes,
   fitting and not) answered by a distributed.LocalCluster of 2 worker
   processes (examples/sweep/dask_sweep.py's way), as a sweep asks
   (suggestions=False): answers per second cold (every build compiled once)
   and warm (code sizes cached); a sample checked against `bundlefit fit
   --no-suggestions --json`, one process each. (What suggestions cost is
   part 1's figure.)

  /usr/bin/python3 bench/sweep/bench_sweep.py [--build build] [--device nrf52840]
      [--candidates 1000] [--workers 2] [--cli-sample 20] [--out bench/results/sweep.json]

A shared 2-core machine: CPU seconds (per answer, in this process or summed
over the workers) are the figures to compare; wall seconds are printed too.
"""
import argparse
import concurrent.futures
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
from mobilenet_v2 import mobilenet_v2  # noqa: E402
from source_commit import measured_commit  # noqa: E402
from zoo import ds_cnn, mobilenet_v1, zoo_grid  # noqa: E402


def candidate_specs(count):
    """`count` distinct (name, builder, kwargs), the three families interleaved."""
    families = [
        [(f"mbv1_{w:.2f}_{r}_c{c}", mobilenet_v1, {"width": w, "resolution": r, "classes": c})
         for w in [round(0.05 + 0.02 * i, 2) for i in range(16)]  # 0.05 .. 0.35
         for r in range(24, 136, 8) for c in (2, 10, 100)],
        [(f"dscnn_{w}_{f}x{m}_b{b}", ds_cnn, {"width": w, "frames": f, "mfcc": m, "blocks": b})
         for w in [0.25 * i for i in range(1, 13)] for b in range(1, 9)
         for f, m in ((49, 10), (98, 40), (64, 16))],
        [(f"mnv2_{w:.2f}_{r}_c{c}", mobilenet_v2, {"width": w, "resolution": r, "classes": c})
         for w in [round(0.1 + 0.05 * i, 2) for i in range(8)] for r in range(32, 128, 16)
         for c in (2, 10, 100)],
    ]
    specs = []
    for i in range(max(len(f) for f in families)):
        specs += [f[i] for f in families if i < len(f)]
    if len(specs) < count:
        sys.exit(f"bench_sweep: only {len(specs)} distinct candidates, {count} asked")
    return specs[:count]


def write_models(specs, directory):
    paths = []
    for name, builder, kwargs in specs:
        path = os.path.join(directory, name if name.endswith(".onnx") else name + ".onnx")
        with open(path, "wb") as f:
            f.write(builder(**kwargs).SerializeToString())
        paths.append(path)
    return paths


def fit_timed(path, device):
    """One answer of a sweep (no suggestions) in a worker process, with its CPU time there."""
    import bundlefit
    start = time.process_time()
    report = bundlefit.fit(path, device=device, suggestions=False)
    return report, time.process_time() - start


def zoo_part(bundlefit, work, device, count):
    grid = zoo_grid()
    paths = write_models(grid[:: max(1, len(grid) // count)][:count], work)
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:  # warm-up: compiles every build once
        list(pool.map(lambda p: bundlefit.fit(p, device=device), paths))
    warmup_s = time.perf_counter() - start
    rows = []
    for path in paths:
        t0 = time.process_time()
        plain = bundlefit.fit(path, device=device, suggestions=False)
        t1 = time.process_time()
        full = bundlefit.fit(path, device=device)
        t2 = time.process_time()
        rows.append({"model": os.path.basename(path), "fits": plain["fits"], "cpu_s": t2 - t1,
                     "cpu_no_suggestions_s": t1 - t0, "suggestions": len(full["suggestions"]),
                     "suggestion_fits": sum(s["fits"] for s in full["suggestions"])})
    misfits = [r for r in rows if not r["fits"]]
    ratios = [r["cpu_s"] / r["cpu_no_suggestions_s"] for r in misfits]
    return {
        "models": len(rows), "device": device, "not_fitting": len(misfits), "warmup_wall_s": warmup_s,
        "mean_cpu_s": statistics.mean(r["cpu_s"] for r in rows),
        "max_cpu_s": max(r["cpu_s"] for r in rows),
        "mean_cpu_no_suggestions_s": statistics.mean(r["cpu_no_suggestions_s"] for r in rows),
        "not_fitting_mean_cpu_s": statistics.mean(r["cpu_s"] for r in misfits),
        "not_fitting_mean_cpu_no_suggestions_s": statistics.mean(r["cpu_no_suggestions_s"] for r in misfits),
        "suggestions_ratio_median": statistics.median(ratios), "suggestions_ratio_max": max(ratios),
        "suggestions_ratio_at_most_2": sum(x <= 2.0 for x in ratios),
        "not_fitting_with_a_fitting_suggestion": sum(r["suggestion_fits"] > 0 for r in misfits),
        "goal_mean_cpu_s": 1.0, "goal_met": statistics.mean(r["cpu_s"] for r in rows) < 1.0,
        "rows": rows}


def cluster_part(paths, device, workers, module_dir):
    from distributed import Client, LocalCluster

    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [module_dir, os.environ.get("PYTHONPATH")] if p)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    passes = {}
    try:
        client.run(lambda: __import__("bundlefit").__file__)  # the module imported on every worker
        for name in ("cold", "warm"):
            start = time.perf_counter()
            futures = client.map(fit_timed, paths, [device] * len(paths), pure=False)
            answers = client.gather(futures)
            wall = time.perf_counter() - start
            cpu = sum(seconds for _, seconds in answers)
            passes[name] = {"wall_s": wall, "answers_per_s": len(paths) / wall, "worker_cpu_s": cpu,
                            "cpu_per_answer_s": cpu / len(paths), "answers": [a for a, _ in answers]}
    finally:
        client.close()
        cluster.close()
    return passes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--device", default="nrf52840")
    parser.add_argument("--zoo-models", type=int, default=100, help="the zoo's first N (a quick run)")
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--cli-sample", type=int, default=20)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "sweep.json"))
    args = parser.parse_args()
    exe = os.path.join(args.build, "bin", "bundlefit")
    module_dir = os.path.join(args.build, "python")
    sys.path.insert(0, module_dir)
    import bundlefit

    work = tempfile.mkdtemp(prefix="bench-sweep-")
    os.environ["BUNDLEFIT_CACHE_DIR"] = os.path.join(work, "cache")  # fresh; the workers share it
    os.makedirs(os.path.join(work, "zoo"))
    zoo = zoo_part(bundlefit, os.path.join(work, "zoo"), args.device, args.zoo_models)
    print(f"zoo: {zoo['models']} models on {args.device}, {zoo['not_fitting']} not fitting; warm, CPU per "
          f"answer: {zoo['mean_cpu_s']:.3f} s on average with suggestions (max {zoo['max_cpu_s']:.3f} s; "
          f"goal < 1 s), {zoo['mean_cpu_no_suggestions_s']:.3f} s without; not fitting: "
          f"{zoo['not_fitting_mean_cpu_s']:.3f} s vs {zoo['not_fitting_mean_cpu_no_suggestions_s']:.3f} s, "
          f"suggestions cost x{zoo['suggestions_ratio_median']:.2f} (median), x{zoo['suggestions_ratio_max']:.2f} "
          f"(max), at most x2 for {zoo['suggestions_ratio_at_most_2']} of {zoo['not_fitting']}")

    os.makedirs(os.path.join(work, "candidates"))
    start = time.perf_counter()
    specs = candidate_specs(args.candidates)
    paths = write_models(specs, os.path.join(work, "candidates"))
    generate_s = time.perf_counter() - start
    passes = cluster_part(paths, args.device, args.workers, module_dir)
    cold = passes["cold"]["answers"]
    sample = list(range(0, len(paths), max(1, len(paths) // args.cli_sample)))[: args.cli_sample]
    same = 0
    for i in sample:
        done = subprocess.run([exe, "fit", paths[i], "--device", args.device, "--no-suggestions", "--json"],
                              capture_output=True, text=True)
        cli = json.loads(done.stdout)
        for report in (cli, cold[i]):
            report["code"].pop("cached", None)
        same += cli == cold[i]
    fitting = sum(a["fits"] for a in cold)
    print(f"\n{len(paths)} candidates ({fitting} fit {args.device}), {args.workers} Dask worker processes:")
    print(f"{'pass':<34} {'wall s':>8} {'answers/s':>10} {'worker CPU s':>13} {'CPU/answer s':>13}")
    for name, label in (("cold", "cold (compile each build once)"), ("warm", "warm (code sizes cached)")):
        p = passes[name]
        print(f"{label:<34} {p['wall_s']:>8.1f} {p['answers_per_s']:>10.1f} {p['worker_cpu_s']:>13.1f} "
              f"{p['cpu_per_answer_s']:>13.3f}")
    print(f"reports equal to `bundlefit fit --json` (one process each): {same} of {len(sample)} sampled; "
          f"generating the models took {generate_s:.1f} s")

    for p in passes.values():
        del p["answers"]
    results = {
        "benchmark": "bench/sweep/bench_sweep.py",
        "commit": measured_commit(exe),
        "zoo": zoo,
        "candidates": {"count": len(paths), "device": args.device, "workers": args.workers,
                       "fitting": fitting, "not_fitting": len(paths) - fitting, "generate_s": generate_s,
                       "cli_sample": len(sample), "equal_to_cli": same, **passes},
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    print(f"wrote {args.out}")
    shutil.rmtree(work)  # about 0.8 GB of candidates and their code-size cache
    return 0 if same == len(sample) else 1


if __name__ == "__main__":
    sys.exit(main())
