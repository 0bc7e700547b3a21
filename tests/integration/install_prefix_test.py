#!/usr/bin/python3
"""An install to any prefix works without the source tree, as on a cluster node.

1. `cmake --install` the build into a fresh prefix;
2. the installed tool and the installed Python module read the installed
   device database (a part planted only there is known to both; no
   BUNDLEFIT_DEVICE_DB), and give the same verdict;
3. a project outside the tree finds the package (find_package(bundlefit)),
   builds a host program with bundlefit_add_bundle and runs it.

Usage: install_prefix_test.py BUILD_DIR SOURCE_DIR MODELS_DIR WORK_DIR
"""
import glob
import json
import os
import shutil
import sys

from script_support import check, run


def main():
    build_dir, source_dir, models_dir, work = map(os.path.abspath, sys.argv[1:5])
    shutil.rmtree(work, ignore_errors=True)
    prefix = os.path.join(work, "elsewhere", "opt", "bundlefit")
    run(["cmake", "--install", build_dir, "--prefix", prefix])
    for f in ["bin/bundlefit", "lib/cmake/bundlefit/bundlefitConfig.cmake",
              "lib/cmake/bundlefit/bundlefitTargets.cmake",
              "share/bundlefit/device_db/schema/device.schema.json",
              "share/bundlefit/reports/schemas/fit-error.schema.json"]:
        check(os.path.exists(os.path.join(prefix, f)), "installed " + f)

    # A part only the installed database has: whoever knows it read that database.
    db = os.path.join(prefix, "share", "bundlefit", "device_db")
    with open(os.path.join(db, "parts", "rp2040.json")) as f:
        part = json.load(f)
    part["id"], part["aliases"] = "installed-only", []
    with open(os.path.join(db, "parts", "installed-only.json"), "w") as f:
        json.dump(part, f, indent=2)
    env = {k: v for k, v in os.environ.items() if k not in ("BUNDLEFIT_DEVICE_DB", "PYTHONPATH")}
    env["BUNDLEFIT_CACHE_DIR"] = os.path.join(work, "cache")
    model = os.path.join(models_dir, "lenet.onnx")
    tool = os.path.join(prefix, "bin", "bundlefit")
    cli = run([tool, "fit", model, "--device", "installed-only", "--no-suggestions", "--json"],
              expect=(0, 3), env=env, cwd=work)
    cli_report = json.loads(cli.stdout)
    check(cli_report["device"] == "installed-only", "the installed tool reads the installed device database")

    modules = glob.glob(os.path.join(prefix, "lib", "python3*", "dist-packages", "bundlefit*.so"))
    if not glob.glob(os.path.join(build_dir, "python", "bundlefit*.so")):
        print("skipped: the Python module was not built (no pybind11-dev)")
    else:
        check(len(modules) == 1, f"installed the Python module ({modules})")
        module_env = dict(env, PYTHONPATH=os.path.dirname(modules[0]))
        script = ("import bundlefit, json, sys\n"
                  "r = bundlefit.fit(sys.argv[1], device='installed-only', suggestions=False)\n"
                  "print(json.dumps({'file': bundlefit.__file__, 'report': r}))\n")
        py = json.loads(run(["/usr/bin/python3", "-c", script, model], env=module_env, cwd=work).stdout)
        check(py["file"] == modules[0], "python3 imports the installed module")
        py_report = py["report"]
        for report in (py_report, cli_report):
            report["code"].pop("cached", None)
        check(py_report == cli_report, "the installed module gives the installed tool's verdict, field for field")

    outside = os.path.join(work, "outside")
    run(["cmake", "-S", os.path.join(source_dir, "tests", "integration", "outside_project"), "-B", outside,
         "-G", "Ninja", "-DCMAKE_PREFIX_PATH=" + prefix, "-DMODEL=" + model], env=env)
    run(["cmake", "--build", outside], env=env)
    ran = run([os.path.join(outside, "infer")], env=env)
    check("bundle status 0" in ran.stdout, "an outside project built and ran a bundle with the installed package")
    return 0


if __name__ == "__main__":
    sys.exit(main())
