#!/usr/bin/env python3
"""bench_pick: wall time of `bundlefit pick` against one `bundlefit compile`.

pick compiles every variant the part supports for its core (float, int8,
int8-cmsis; HiFi4 is planned only) so its sizes are the bundle's; the code
sizes are cached by model + options hash, so a second pick only plans. For
each reference model x part: one compile for the part's core (median of
--repeat runs), pick with a cold cache, pick with a warm cache, and the ratios
to the compile (goal: warm pick < 2x one compile). Prints a table and writes
JSON with the git commit it measured.

Usage: bench_pick.py --bundlefit EXE --models DIR [--out FILE] [--repeat N]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from source_commit import repo_commit  # noqa: E402

CORE = {"rt1062": ["--target", "cortex-m7", "--float-abi", "hard"],
        "lpc55s69": ["--target", "cortex-m33", "--float-abi", "hard"]}
CASES = [("lenet", "rt1062"), ("ds_cnn", "lpc55s69"), ("mobilenet_v2", "rt1062")]


def timed(argv, env):
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 3):
        sys.exit(" ".join(argv) + "\n" + done.stdout + done.stderr)
    return seconds


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bundlefit", required=True)
    parser.add_argument("--models", required=True)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "results", "pick.json"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cases", default=",".join(f"{m}@{p}" for m, p in CASES),
                        help="MODEL@PART,... (default: %(default)s)")
    args = parser.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    commit = repo_commit(repo)
    rows = []
    print(f"{'model':<14}{'part':<10}{'compile s':>10}{'pick cold s':>12}{'pick warm s':>12}"
          f"{'cold/compile':>13}{'warm/compile':>13}")
    for case in args.cases.split(","):
        model, part = case.split("@")
        onnx = os.path.join(args.models, model + ".onnx")
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, BUNDLEFIT_CACHE_DIR=os.path.join(tmp, "cache"))
            compiles = [timed([args.bundlefit, "-q", "compile", onnx, "-o", os.path.join(tmp, f"b{i}"),
                               *CORE[part]], env) for i in range(args.repeat)]
            cold = []
            for i in range(args.repeat):
                env_cold = dict(env, BUNDLEFIT_CACHE_DIR=os.path.join(tmp, f"cold{i}"))
                cold.append(timed([args.bundlefit, "-q", "pick", onnx, "--device", part, "--json"], env_cold))
            timed([args.bundlefit, "-q", "pick", onnx, "--device", part, "--json"], env)  # fill the cache
            warm = [timed([args.bundlefit, "-q", "pick", onnx, "--device", part, "--json"], env)
                    for _ in range(args.repeat)]
        row = {"model": model, "device": part, "compile_s": statistics.median(compiles),
               "pick_cold_s": statistics.median(cold), "pick_warm_s": statistics.median(warm)}
        row["cold_ratio"] = row["pick_cold_s"] / row["compile_s"]
        row["warm_ratio"] = row["pick_warm_s"] / row["compile_s"]
        rows.append(row)
        print(f"{model:<14}{part:<10}{row['compile_s']:>10.2f}{row['pick_cold_s']:>12.2f}"
              f"{row['pick_warm_s']:>12.2f}{row['cold_ratio']:>13.2f}{row['warm_ratio']:>13.2f}")
    result = {"schema": "bundlefit.bench.pick/1", "commit": commit, "repeat": args.repeat,
              "machine": os.uname().machine, "cpus": os.cpu_count(), "goal": "pick < 2x one compile",
              "rows": rows}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
