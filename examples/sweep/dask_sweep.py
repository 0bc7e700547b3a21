#!/usr/bin/python3
"""The sweep on a Dask cluster: the same grid, answered by worker processes.

Each worker process imports the installed module (`cmake --install build
--prefix P` puts it in P/lib/python3.X/dist-packages; --module-dir names that
directory) and answers `bundlefit.fit()` calls; this process builds the
candidates (sweep.py's MobileNetV2 grid) and sends each one as bytes. By
default a LocalCluster of --workers processes on this machine; --scheduler
ADDRESS uses a running cluster instead, whose workers were started on its
nodes (`dask-worker ADDRESS`, Debian's python3-distributed) with the module
installed the same way:

    cmake --install build --prefix /opt/bundlefit
    PYTHONPATH=/opt/bundlefit/lib/python3.11/dist-packages dask-worker tcp://head:8786 --nworkers 2

    /usr/bin/python3 examples/sweep/dask_sweep.py --module-dir /opt/bundlefit/lib/python3.11/dist-packages \\
        [--workers 2 | --scheduler tcp://head:8786] [--grid full|small] [--check] [--out answers.jsonl]

Every answer is `bundlefit fit --json`'s report (the code size compiled for
the part's core, cached in BUNDLEFIT_CACHE_DIR, which the workers share with
this process) plus "worker": the process and the module file that answered.
--check first answers every candidate in this process, then exits 1 unless
the workers' reports equal those, field for field (the code-size cache flag
aside: this process compiled, the workers read the sizes it cached).
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from mobilenet_v2 import count_macs, mobilenet_v2  # noqa: E402

# sweep.py's grid (full); small: a grid CI answers in seconds.
GRIDS = {
    "full": {"widths": [0.35, 0.5, 0.6, 0.75, 0.85, 1.0, 1.2, 1.4],
             "resolutions": [96, 128, 144, 160, 192, 224], "classes": 1000,
             "parts": ["stm32f746", "stm32h743", "rt1062"]},
    "small": {"widths": [0.1, 0.2], "resolutions": [16, 32], "classes": 10,
              "parts": ["stm32f746", "rt1062"]},
}


def fit_on_worker(blob, name, part, variant):
    """One answer, in a worker process: the installed module's fit()."""
    import bundlefit
    report = bundlefit.fit(bundlefit.load(blob, name=name), device=part, variant=variant,
                           suggestions=False)
    report["worker"] = {"pid": os.getpid(), "module": bundlefit.__file__}
    return report


def candidates(grid):
    """(name, bytes, part) for every candidate on every part."""
    spec = GRIDS[grid]
    jobs = []
    for width in spec["widths"]:
        for resolution in spec["resolutions"]:
            name = f"mnv2_{width}_{resolution}.onnx"
            blob = mobilenet_v2(width, resolution, classes=spec["classes"]).SerializeToString()
            jobs += [(name, blob, part, count_macs(width, resolution, spec["classes"]))
                     for part in spec["parts"]]
    return jobs


def without_run_fields(report):
    """A report minus what names the run (who answered, cache hit or compile)."""
    report = json.loads(json.dumps(report))
    report.pop("worker", None)
    report["code"].pop("cached", None)
    return report


def answer_on_cluster(jobs, args):
    """The answers, in `jobs` order, from the cluster's workers."""
    from distributed import Client, LocalCluster

    if args.scheduler:
        client = Client(args.scheduler)
        cluster = None
    else:
        # Worker processes inherit this environment: the module directory
        # first on their path, and the code-size cache this process uses.
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=args.threads,
                               processes=True, dashboard_address=None)
        client = Client(cluster)
    try:
        futures = client.map(fit_on_worker, [j[1] for j in jobs], [j[0] for j in jobs],
                             [j[2] for j in jobs], [args.variant] * len(jobs), pure=False)
        return client.gather(futures)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--module-dir", help="where `import bundlefit` is (default: PYTHONPATH)")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes")
    parser.add_argument("--threads", type=int, default=1, help="threads per worker")
    parser.add_argument("--scheduler", help="a running cluster's scheduler address instead")
    parser.add_argument("--grid", choices=sorted(GRIDS), default="full")
    parser.add_argument("--variant", default="int8")
    parser.add_argument("--check", action="store_true",
                        help="answer in this process too; exit 1 unless the answers are equal")
    parser.add_argument("--out", help="write the answers as JSON lines")
    args = parser.parse_args()
    if args.module_dir:
        module_dir = os.path.abspath(args.module_dir)
        sys.path.insert(0, module_dir)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in [module_dir, os.environ.get("PYTHONPATH")] if p)
    import bundlefit

    start = time.perf_counter()
    jobs = candidates(args.grid)
    built = time.perf_counter() - start
    local = []
    if args.check:  # first, so that the workers find the code sizes this process cached
        start = time.perf_counter()
        local = [bundlefit.fit(bundlefit.load(blob, name=name), device=part, variant=args.variant,
                               suggestions=False) for name, blob, part, _ in jobs]
        print(f"{len(local)} answers in this process in {time.perf_counter() - start:.1f} s")
    start = time.perf_counter()
    answers = answer_on_cluster(jobs, args)
    on_cluster = time.perf_counter() - start
    workers = sorted({a["worker"]["pid"] for a in answers})
    modules = sorted({a["worker"]["module"] for a in answers})
    print(f"{len(jobs)} candidates built in {built:.1f} s; {len(answers)} answers from "
          f"{len(workers)} worker processes in {on_cluster:.1f} s ({len(answers) / on_cluster:.1f}/s)")
    print("module the workers imported: " + ", ".join(modules))
    for part in GRIDS[args.grid]["parts"]:
        mine = [(j, a) for j, a in zip(jobs, answers) if j[2] == part]
        fitting = [(j, a) for j, a in mine if a["fits"]]
        best = max(fitting, key=lambda ja: ja[0][3], default=None)
        print(f"{part:<10} {len(fitting):>3} of {len(mine)} fit" +
              (f"; most MACs: {best[0][0]} ({best[0][3] / 1e6:.1f} M MACs), RAM {best[1]['totals']['ram']:,}"
               if best else ""))
    if args.out:
        with open(args.out, "w") as f:
            for (name, _, part, _), report in zip(jobs, answers):
                f.write(json.dumps({"candidate": name, "part": part, "report": report}) + "\n")
    if not args.check:
        return 0
    differ = 0
    for (name, _, part, _), mine, remote in zip(jobs, local, answers):
        if without_run_fields(mine) != without_run_fields(remote):
            differ += 1
            print(f"DIFFERS: {name} on {part}", file=sys.stderr)
    print(f"check: {len(answers) - differ} of {len(answers)} answers equal this process's "
          f"({bundlefit.__file__})")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
