#!/usr/bin/python3
"""The CMake integration end to end, as a firmware project uses it.

1. `cmake --install` the bundlefit build into a fresh prefix;
2. configure examples/cortex-m7-lenet against it (find_package(bundlefit),
   the installed arm-none-eabi toolchain file) and build it: the build runs
   `bundlefit fit` (rt1060) and `bundlefit compile` for Cortex-M7;
3. a second build does nothing; touching the model compiles again;
4. run the firmware under qemu-system-arm -M mps2-an500 with semihosting and
   compare the ten scores it prints with `bundlefit run` on the host for the
   same input (which --compare checks against the reference interpreter);
5. the same project with DEVICE lpc55s69 (640 KB Flash, LeNet's weights are
   1.7 MB) must fail to build, with fit's verdict in the log and no bundle.

Usage: cmake_example_test.py BUILD_DIR SOURCE_DIR MODELS_DIR WORK_DIR
"""
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np


def run(argv, expect=0, timeout=600, env=None):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout, env=env)
    if expect is not None and p.returncode != expect:
        sys.exit("FAILED (exit %d, expected %d): %s\n%s" % (p.returncode, expect, " ".join(argv), p.stdout))
    return p


def check(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)
    print("ok:", message)


def configure(source, build, prefix, model, npy, device, extra=()):
    return run(["cmake", "-S", source, "-B", build, "-G", "Ninja",
                "-DCMAKE_PREFIX_PATH=" + prefix,
                "-DCMAKE_TOOLCHAIN_FILE=" + prefix + "/lib/cmake/bundlefit/toolchains/arm-none-eabi.cmake",
                "-DLENET_MODEL=" + model, "-DLENET_INPUT=" + npy, "-DLENET_DEVICE=" + device] + list(extra))


def main():
    build_dir, source_dir, models_dir, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prefix = os.path.join(work, "prefix")
    example = os.path.join(source_dir, "examples", "cortex-m7-lenet")
    # A copy of the model, so that touching it does not rebuild other tests' inputs.
    model = os.path.join(work, "lenet.onnx")
    shutil.copy(os.path.join(models_dir, "lenet.onnx"), model)
    npy = os.path.join(models_dir, "lenet.input.npy")

    run(["cmake", "--install", build_dir, "--prefix", prefix])
    for f in ["bin/bundlefit", "bin/model-compiler", "bin/model-profiler", "bin/image-classifier",
              "share/bundlefit/examples/cortex-m7-lenet/CMakeLists.txt",
              "lib/cmake/bundlefit/bundlefitConfig.cmake",
              "lib/cmake/bundlefit/bundlefitConfigVersion.cmake",
              "lib/cmake/bundlefit/BundlefitAddBundle.cmake",
              "share/bundlefit/device_db/parts/rt1062.json",
              "share/bundlefit/device_db/schema/device.schema.json"]:
        check(os.path.exists(os.path.join(prefix, f)), "installed " + f)

    fw = os.path.join(work, "fw")
    configure(example, fw, prefix, model, npy, "rt1060")
    first = run(["cmake", "--build", fw])
    check("bundlefit fit lenet on rt1060" in first.stdout and
          "fits rt1062 (float, weights flash)" in first.stdout and "verdict:" not in first.stdout,
          "the build ran bundlefit fit on rt1060 for the weights it embeds (Flash): one line")
    check("bundlefit compile lenet for cortex-m7" in first.stdout, "the build compiled the bundle")
    bundle = os.path.join(fw, "bundlefit", "lenet")
    for f in ["lenet.o", "lenet.h", "lenet.weights.bin", "lenet.weights.txt", "lenet.memory.json"]:
        check(os.path.exists(os.path.join(bundle, f)), "bundle file " + f)
    sizes = json.load(open(os.path.join(bundle, "lenet.memory.json")))["sizes"]
    # 14,976 = pool1's 11,520 + pool2's 3,200 + a 256 B ConvPool workspace; 57,600 below = conv1's
    # 46,080 + pool1's 11,520 (LeNet by hand: tests/models/README.md).
    check(sizes["activations"] == 14976,
          "bundle at bundlefit's default --memory-opt 2 (14,976 B of activations)")
    again = run(["cmake", "--build", fw])
    check("no work to do" in again.stdout, "a second build does nothing")
    os.utime(model)
    touched = run(["cmake", "--build", fw])
    check("bundlefit compile lenet" in touched.stdout, "a changed model is compiled again")

    elf = os.path.join(fw, "lenet_fw.elf")
    qemu = run(["qemu-system-arm", "-M", "mps2-an500", "-cpu", "cortex-m7", "-nographic",
                "-monitor", "none", "-serial", "null", "-semihosting-config",
                "enable=on,target=native", "-kernel", elf], timeout=120)
    print(qemu.stdout)
    scores = {}
    for index, bits in re.findall(r"^score (\d+) \S+ 0x([0-9a-f]{8})$", qemu.stdout, re.M):
        scores[int(index)] = np.frombuffer(bytes.fromhex(bits)[::-1], dtype="<f4")[0]
    check(sorted(scores) == list(range(10)), "the firmware printed ten scores")
    firmware = np.array([scores[i] for i in range(10)], dtype=np.float32)
    top = re.search(r"^top class (\d+) ", qemu.stdout, re.M)
    check(top is not None and int(top.group(1)) == int(np.argmax(firmware)), "top class is the largest score")

    host_out = os.path.join(work, "host")
    host = run([os.path.join(prefix, "bin", "bundlefit"), "run", model, "--input", npy,
                "--output-dir", host_out, "--compare", "--json", os.path.join(work, "run.json")])
    with open(os.path.join(work, "run.json")) as report:
        diffs = [o.get("max_abs_diff") for o in json.load(report)["outputs"]]
    check(len(diffs) == 1 and diffs[0] is not None and diffs[0] < 1e-5,
          "host bundle agrees with the reference interpreter (%s)" % diffs)
    reference = np.load(os.path.join(host_out, "softmax.npy")).reshape(-1)
    worst = float(np.max(np.abs(firmware - reference)))
    print("firmware vs host: max |diff| %.3g, top class %d vs %d" %
          (worst, np.argmax(firmware), np.argmax(reference)))
    check(int(np.argmax(firmware)) == int(np.argmax(reference)), "same top class as the host")
    check(worst <= 1e-4 * float(np.max(np.abs(reference))), "scores within 1e-4 of the host's")

    # WEIGHTS auto: the weights split over the RT1060's FLASH, ITCM and DTCM
    # as fit places them, built with the bundle's lenet_weights.c/.ld and run.
    placed_dir = os.path.join(work, "fw-placed")
    configure(example, placed_dir, prefix, model, npy, "rt1060", ["-DLENET_WEIGHTS=auto"])
    placed_build = run(["cmake", "--build", placed_dir])
    check("fits rt1062 (float, weights auto)" in placed_build.stdout,
          "the check is fit's for the placement built (auto)")
    placement = json.load(open(os.path.join(placed_dir, "bundlefit", "lenet",
                                            "lenet.memory.json")))["weights_placement"]
    check(len(placement["segments"]) >= 2 and placement["entry"] == "lenet_placed",
          "the bundle is split over %d regions" % len(placement["segments"]))
    placed_qemu = run(["qemu-system-arm", "-M", "mps2-an500", "-cpu", "cortex-m7", "-nographic",
                       "-monitor", "none", "-serial", "null", "-semihosting-config",
                       "enable=on,target=native", "-kernel",
                       os.path.join(placed_dir, "lenet_fw.elf")], timeout=120)
    placed_scores = re.findall(r"^score \d+ \S+ 0x[0-9a-f]{8}$", placed_qemu.stdout, re.M)
    glow_scores = re.findall(r"^score \d+ \S+ 0x[0-9a-f]{8}$", qemu.stdout, re.M)
    check(len(placed_scores) == 10 and placed_scores == glow_scores,
          "the placed firmware prints the Glow-API firmware's scores, bit for bit")

    small = os.path.join(work, "fw-lpc55s69")
    configured = configure(example, small, prefix, model, npy, "lpc55s69", ["-DLENET_MEMORY_OPT=0"])
    check("TARGET cortex-m7 but DEVICE lpc55s69 runs bundles on a cortex-m33" in
          re.sub(r"\s+", " ", configured.stdout),
          "configure warns that TARGET is not lpc55s69's core")
    failed = run(["cmake", "--build", small], expect=None)
    check(failed.returncode != 0, "the build fails when the model does not fit lpc55s69")
    check("bundlefit fit lenet on lpc55s69" in failed.stdout and "DOES NOT FIT" in failed.stdout.upper(),
          "the build log holds fit's verdict (the whole report when it does not fit)")
    check("ACTIVATIONS 57,600" in failed.stdout, "MEMORY_OPT 0 reached fit (Glow's 57,600 B)")
    check(not os.path.exists(os.path.join(small, "bundlefit", "lenet", "lenet.o")),
          "no bundle was compiled for the part it does not fit")
    print("PASSED")


if __name__ == "__main__":
    main()
