#!/usr/bin/python3
"""examples/sweep/dask_sweep.py on a real Dask cluster: 2 worker processes.

Installs the build into a fresh prefix, then runs the example's small grid on
a distributed.LocalCluster of 2 worker processes that import the installed
module; the example's --check answers every candidate in this process too and
fails unless the workers' reports are equal, field for field. Exit 77 (a
ctest skip) without Debian's python3-distributed or the Python module.

Usage: dask_sweep_test.py BUILD_DIR SOURCE_DIR WORK_DIR
"""
import glob
import os
import shutil
import subprocess
import sys

SKIP = 77


def main():
    build_dir, source_dir, work = map(os.path.abspath, sys.argv[1:4])
    try:
        import distributed  # noqa: F401
    except ImportError:
        print("skipped: python3-distributed is not installed (scripts/install-deps.sh)")
        return SKIP
    if not glob.glob(os.path.join(build_dir, "python", "bundlefit*.so")):
        print("skipped: the Python module was not built (no pybind11-dev)")
        return SKIP
    shutil.rmtree(work, ignore_errors=True)
    prefix = os.path.join(work, "prefix")
    subprocess.run(["cmake", "--install", build_dir, "--prefix", prefix], check=True,
                   stdout=subprocess.DEVNULL)
    module_dir = os.path.dirname(glob.glob(os.path.join(prefix, "lib", "python3*", "dist-packages",
                                                        "bundlefit*.so"))[0])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "BUNDLEFIT_DEVICE_DB")}
    env["BUNDLEFIT_CACHE_DIR"] = os.path.join(work, "cache")
    sweep = subprocess.run(
        ["/usr/bin/python3", os.path.join(source_dir, "examples", "sweep", "dask_sweep.py"),
         "--module-dir", module_dir, "--workers", "2", "--grid", "small", "--check",
         "--out", os.path.join(work, "answers.jsonl")],
        env=env, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    print(sweep.stdout)
    if sweep.returncode != 0:
        print(f"FAILED: dask_sweep.py exit {sweep.returncode}")
        return 1
    for expected in ("from 2 worker processes", "module the workers imported: " + module_dir,
                     "check: 8 of 8 answers equal"):
        if expected not in sweep.stdout:
            print(f"FAILED: no '{expected}' in the output")
            return 1
    print("ok: 8 answers from 2 Dask worker processes importing the installed module equal the "
          "single-process ones")
    return 0


if __name__ == "__main__":
    sys.exit(main())
