#!/usr/bin/python3
"""bench_mcu: instructions per inference, bundlefit's own int8 kernels vs CMSIS-NN, under QEMU.

For each core (Cortex-M7 mps2-an500, M33 mps2-an505, M4 mps2-an386, M55 mps3-an547 by default) and model
(LeNet, DS-CNN, MobileNetV1-0.25, ResNet-8): `bundlefit run` the int8 bundle (profiled on the
model's fixed input) with its own kernels and with `--use-cmsis --cmsis-nn DIR` (the pinned
CMSIS-NN, built per core), counting guest instructions with ../shared/tools/qemu-insncount
(a TCG plugin, loaded through a qemu-system-arm wrapper given as BUNDLEFIT_QEMU_ARM).
Instructions per inference = (count of a run of 5 samples - count of a run of 1) / 4: the
firmware's start-up and I/O cancel out. The outputs of the two builds are compared byte for
byte. Also records each bundle object's .text (from <net>.memory.json), the CMSIS-NN library's,
and issue 15's size goal per row: each bundle object linked on its own (linked_text.py) gives
the .text of the CMSIS-NN members the CMSIS build pulls in (cmsis_linked_text) and of the
libc/libgcc helpers either build pulls in (own_runtime_text, cmsis_runtime_text; counted on both
sides); text_goal_met is own_text + own_runtime_text <= cmsis_text + cmsis_linked_text +
cmsis_runtime_text. Prints two tables; writes bench/results/mcu.json with the git commit
measured ("commit").

  /usr/bin/python3 bench/mcu/bench_mcu.py --bundlefit build/bin/bundlefit \
      --models-dir build/models --shared ../shared [--cores cortex-m7,cortex-m33,cortex-m4,cortex-m55]

An instruction count is not a cycle count (no wait states, no dual issue), but two
implementations of the same arithmetic on the same core compare fairly on it.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from source_commit import repo_commit  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from linked_text import gcc_flags, link_bundle  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = [("lenet", "LeNet"), ("ds_cnn", "DS-CNN"), ("mobilenet_v1_025", "MobileNetV1-0.25"),
          ("resnet8", "ResNet-8")]


def run(argv, env=None, timeout=900):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                       timeout=timeout)
    if p.returncode != 0:
        sys.exit("FAILED (exit %d): %s\n%s" % (p.returncode, " ".join(argv), p.stdout[-3000:]))
    return p.stdout


def build_plugin(shared, work):
    source = os.path.join(shared, "tools", "qemu-insncount", "insncount.c")
    plugin = os.path.join(work, "libinsncount.so")
    run(["gcc", "-shared", "-fPIC", "-O2", "-o", plugin, source])
    return plugin


def counting_qemu(plugin, work):
    """A qemu-system-arm wrapper that loads the plugin and appends its count to a log."""
    qemu = shutil.which("qemu-system-arm")
    log = os.path.join(work, "insncount.log")
    wrapper = os.path.join(work, "qemu-count.sh")
    with open(wrapper, "w") as f:
        f.write("#!/bin/sh\nexec %s -plugin %s -d plugin -D %s.$$ \"$@\"\n" % (qemu, plugin, log))
    os.chmod(wrapper, 0o755)
    return wrapper, log


def count_of(log_prefix):
    """The count the last QEMU run logged (one file per QEMU pid)."""
    logs = [os.path.join(os.path.dirname(log_prefix), f) for f in os.listdir(os.path.dirname(log_prefix))
            if f.startswith(os.path.basename(log_prefix) + ".")]
    if len(logs) != 1:
        sys.exit("expected one QEMU plugin log, found %d" % len(logs))
    text = open(logs[0]).read()
    os.remove(logs[0])
    m = re.search(r"insncount: (\d+)", text)
    if not m:
        sys.exit("no insncount in " + text[-500:])
    return int(m.group(1))


def compile_object(bundlefit, model, profile, core, out, extra):
    """Compile the bundle to out/; its object and memory.json's code_size.text."""
    shutil.rmtree(out, ignore_errors=True)
    run([bundlefit, "-q", "compile", model, "-o", out, "--target", core, "--load-profile", profile,
         "--network-name", "net"] + extra)
    return os.path.join(out, "net.o"), json.load(open(os.path.join(out, "net.memory.json")))["code_size"]["text"]


def cached_library(cache_dir, core):
    """The libcmsis-nn.a `bundlefit run --use-cmsis` built for core (the newest, if several)."""
    cache = os.path.join(cache_dir, "cmsis-nn")
    dirs = [os.path.join(cache, d) for d in (os.listdir(cache) if os.path.isdir(cache) else [])
            if d.startswith(core + "-") and ".tmp" not in d
            and os.path.isfile(os.path.join(cache, d, "libcmsis-nn.a"))]
    if not dirs:
        sys.exit("no cached libcmsis-nn.a for %s under %s" % (core, cache))
    newest = max(dirs, key=os.path.getmtime)
    return os.path.join(newest, "libcmsis-nn.a"), gcc_flags(os.path.join(newest, "toolchain.cmake"))


def linked_text(row, objects, library, flags, work):
    """Issue 15's size goal for one row, from each bundle object linked on its own."""
    sizes = {}
    for kind in ("own", "cmsis"):
        obj, text = objects[kind]
        sizes[kind] = link_bundle(obj, "net", flags, library if kind == "cmsis" else None, work)
        if sizes[kind]["bundle"]["text"] != text:  # both sides must be counted alike
            sys.exit("%s: linked .text %d != memory.json code_size.text %d" % (
                obj, sizes[kind]["bundle"]["text"], text))
    if sizes["own"]["cmsis_nn"]["text"]:
        sys.exit("the own bundle links CMSIS-NN code")
    row["cmsis_linked_text"] = sizes["cmsis"]["cmsis_nn"]["text"]
    row["cmsis_linked_rodata"] = sizes["cmsis"]["cmsis_nn"]["rodata"]
    row["own_runtime_text"] = sizes["own"]["runtime"]["text"]
    row["cmsis_runtime_text"] = sizes["cmsis"]["runtime"]["text"]
    row["text_goal_met"] = (row["own_text"] + row["own_runtime_text"] <=
                            row["cmsis_text"] + row["cmsis_linked_text"] + row["cmsis_runtime_text"])


def print_table(header, cells):
    """A markdown table: figures right-aligned, the first two columns and the last (a verdict) left."""
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" if i < 2 or i == len(header) - 1 else "---:" for i in range(len(header))) + "|")
    for row in cells:
        print("| " + " | ".join(row) + " |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundlefit", required=True)
    ap.add_argument("--models-dir", required=True)
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    ap.add_argument("--cores", default="cortex-m7,cortex-m33,cortex-m4,cortex-m55")
    ap.add_argument("--models", default=",".join(m for m, _ in MODELS))
    # Level 1 (fusion, in place): both builds run the same layers and MACs. Level 2's patch
    # stages trade recomputed MACs for RAM on the own build only (CMSIS-NN calls keep their
    # layers), which would charge the memory plan to the kernels.
    ap.add_argument("--memory-opt", default="1")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "mcu.json"))
    args = ap.parse_args()
    cmsis = os.path.join(args.shared, "third_party", "CMSIS-NN")
    if not os.path.isdir(cmsis):
        print("SKIP: no pinned CMSIS-NN at " + cmsis)
        return 77
    work = tempfile.mkdtemp(prefix="bench-mcu-")
    plugin = build_plugin(args.shared, work)
    wrapper, log = counting_qemu(plugin, work)
    env = dict(os.environ, BUNDLEFIT_QEMU_ARM=wrapper,
               BUNDLEFIT_CACHE_DIR=os.path.join(os.path.dirname(os.path.abspath(args.bundlefit)), "..",
                                                "cmsis-nn-cache"))
    # HEAD, "-dirty" when tracked code differs: the "commit" every results file records, so
    # scripts/check-readme-figures.py can tell when mcu.json is older than the code it measures.
    commit = repo_commit(ROOT)
    rows = []
    names = dict(MODELS)
    for model in args.models.split(","):
        onnx = os.path.join(args.models_dir, model + ".onnx")
        npy = os.path.join(args.models_dir, model + ".input.npy")
        profile = os.path.join(work, model + ".yaml")
        run([args.bundlefit, "-q", "profile", onnx, npy, "-o", profile])
        one = np.load(npy)
        five = os.path.join(work, model + ".x5.npy")
        rng = np.random.default_rng(5)
        np.save(five, np.concatenate([one] + [one + rng.normal(0, 0.25, one.shape).astype(one.dtype)
                                              for _ in range(4)]))
        for core in args.cores.split(","):
            row = {"model": model, "core": core}
            outputs = {}
            level = ["--memory-opt", args.memory_opt]
            objects = {}
            for kind, extra in (("own", level), ("cmsis", level + ["--use-cmsis", "--cmsis-nn", cmsis])):
                counts = []
                for samples, path in ((1, npy), (5, five)):
                    out = os.path.join(work, "%s-%s-%s-%d" % (model, core, kind, samples))
                    run([args.bundlefit, "-q", "run", onnx, "--target", core, "--load-profile", profile,
                         "--input", path, "--output-dir", out] + extra, env=env)
                    counts.append(count_of(log))
                    outputs[kind] = out  # the 5-sample run's, compared below
                row[kind + "_instructions"] = (counts[1] - counts[0]) // 4
                objects[kind] = compile_object(args.bundlefit, onnx, profile, core,
                                               os.path.join(work, "%s-%s-%s-obj" % (model, core, kind)),
                                               extra[:3])
                row[kind + "_text"] = objects[kind][1]
            # After the CMSIS run, which builds (or reuses) the library for this core.
            library, flags = cached_library(env["BUNDLEFIT_CACHE_DIR"], core)
            linked_text(row, objects, library, flags, work)
            same = all(np.load(os.path.join(outputs["own"], f)).tobytes() ==
                       np.load(os.path.join(outputs["cmsis"], f)).tobytes()
                       for f in os.listdir(outputs["own"]))
            row["outputs_identical"] = same
            row["ratio"] = round(row["own_instructions"] / row["cmsis_instructions"], 3)
            rows.append(row)
            print("%-17s %-10s own %12s  cmsis-nn %12s  %5.2fx  %s" % (
                names.get(model, model), core, "{:,}".format(row["own_instructions"]),
                "{:,}".format(row["cmsis_instructions"]), row["ratio"], "identical" if same else "DIFFER"),
                flush=True)
    libraries = {}
    for core in args.cores.split(","):
        lib = cached_library(env["BUNDLEFIT_CACHE_DIR"], core)[0]
        size = subprocess.run(["arm-none-eabi-size", "-t", lib], stdout=subprocess.PIPE,
                              text=True).stdout.strip().splitlines()[-1].split()
        libraries[core] = {"text_all_objects": int(size[0])}
    n = "{:,}".format
    print_table(["model", "core", "own int8", "CMSIS-NN", "own / CMSIS-NN", "outputs"], [
        [names.get(r["model"], r["model"]), r["core"], n(r["own_instructions"]), n(r["cmsis_instructions"]),
         "%.2fx" % r["ratio"], "identical" if r["outputs_identical"] else "differ"] for r in rows])
    print("\nIssue 15's size goal: `.text` bytes, bundle object + the code it links "
          "(libc/libgcc helpers on both sides)")
    print_table(["model", "core", "own .text (+ helpers)", "CMSIS bundle + linked CMSIS-NN (+ helpers)", "ok"], [
        [names.get(r["model"], r["model"]), r["core"], "%s (+%s)" % (n(r["own_text"]), n(r["own_runtime_text"])),
         "%s + %s (+%s)" % (n(r["cmsis_text"]), n(r["cmsis_linked_text"]), n(r["cmsis_runtime_text"])),
         "yes" if r["text_goal_met"] else "NO"] for r in rows])
    result = {"schema": "bundlefit.bench_mcu/3", "commit": commit,
              "unit": "guest instructions per inference (qemu-insncount, whole firmware)",
              "cmsis_nn": "pinned v7.0.0-43 (commit 99f736a6), -O2, arm-none-eabi-gcc",
              "memory_opt": int(args.memory_opt), "rows": rows, "cmsis_nn_library_text": libraries,
              "linked_text": "each bundle object linked alone (entry net, --gc-sections, libcmsis-nn.a "
                             "for the CMSIS build, libc/libm/libgcc for both): kept .text input "
                             "sections by origin, no fill; text_goal_met = own_text + "
                             "own_runtime_text <= cmsis_text + cmsis_linked_text + cmsis_runtime_text"}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print("wrote " + args.out)
    shutil.rmtree(work, ignore_errors=True)
    return 0 if all(r["outputs_identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
