#!/usr/bin/python3
"""bundlefit_add_bundle(... PROFILE p.yaml USE_CMSIS) end to end, on Cortex-M7.

CMSIS-NN is the user's (not on this machine), so a stand-in plays it: the
test stub (cmsis_nn_stub.c, NHWC reference loops) is built for Cortex-M7 as
<dir>/lib/libcmsis-nn.a with <dir>/Include/arm_nnfunctions.h, and
BUNDLEFIT_CMSIS_NN_DIR points at it, as a user points at their SDK's build.

1. install bundlefit into a fresh prefix; profile LeNet;
2. build examples/cortex-m7-lenet with LENET_PROFILE and LENET_USE_CMSIS: the
   build runs `fit --variant int8-cmsis` and `compile --use-cmsis`, and links
   libcmsis-nn.a into the firmware (the arm_* functions are in the ELF);
3. run it under qemu-system-arm (mps2-an500): its ten scores must equal, bit
   for bit, `bundlefit run` of the portable int8 bundle on the host.

Usage: cmake_cmsis_test.py BUILD_DIR SOURCE_DIR MODELS_DIR WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys

import numpy as np


def run(argv, expect=0, timeout=600):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    if expect is not None and p.returncode != expect:
        sys.exit("FAILED (exit %d, expected %d): %s\n%s" % (p.returncode, expect, " ".join(argv), p.stdout))
    return p


def check(condition, message):
    if not condition:
        sys.exit("FAILED: " + message)
    print("ok:", message)


def main():
    build_dir, source_dir, models_dir, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prefix = os.path.join(work, "prefix")
    run(["cmake", "--install", build_dir, "--prefix", prefix])
    bundlefit = os.path.join(prefix, "bin", "bundlefit")
    model = os.path.join(models_dir, "lenet.onnx")
    npy = os.path.join(models_dir, "lenet.input.npy")
    profile = os.path.join(work, "lenet.yaml")
    run([bundlefit, "-q", "profile", model, npy, "-o", profile])

    # The CMSIS-NN stand-in, laid out like a user's CMSIS-NN build.
    cmsis = os.path.join(work, "cmsis-nn")
    os.makedirs(os.path.join(cmsis, "Include"))
    os.makedirs(os.path.join(cmsis, "lib"))
    here = os.path.dirname(os.path.abspath(__file__))
    shutil.copy(os.path.join(here, "cmsis_nn_abi.h"), os.path.join(cmsis, "Include", "arm_nnfunctions.h"))
    flags = ["-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16", "-O2"]
    objects = []
    for source in [os.path.join(here, "cmsis_nn_stub.c")]:
        obj = os.path.join(work, os.path.basename(source) + ".o")
        run(["arm-none-eabi-gcc", "-c", source, "-o", obj] + flags)
        objects.append(obj)
    run(["arm-none-eabi-ar", "rcs", os.path.join(cmsis, "lib", "libcmsis-nn.a")] + objects)

    fw = os.path.join(work, "fw")
    example = os.path.join(source_dir, "examples", "cortex-m7-lenet")
    run(["cmake", "-S", example, "-B", fw, "-G", "Ninja", "-DCMAKE_PREFIX_PATH=" + prefix,
         "-DCMAKE_TOOLCHAIN_FILE=" + prefix + "/lib/cmake/bundlefit/toolchains/arm-none-eabi.cmake",
         "-DLENET_MODEL=" + model, "-DLENET_INPUT=" + npy, "-DLENET_DEVICE=rt1060",
         "-DLENET_PROFILE=" + profile, "-DLENET_USE_CMSIS=ON", "-DBUNDLEFIT_CMSIS_NN_DIR=" + cmsis])
    built = run(["cmake", "--build", fw])
    check("bundlefit fit lenet on rt1060" in built.stdout and "int8-cmsis" in built.stdout,
          "the build ran fit for the int8-cmsis variant")
    memory = open(os.path.join(fw, "bundlefit", "lenet", "lenet.memory.json")).read()
    check('"cmsis_nn"' in memory and "arm_convolve_wrapper_s8" in memory,
          "the bundle was compiled with --use-cmsis")
    elf = os.path.join(fw, "lenet_fw.elf")
    symbols = run(["arm-none-eabi-nm", elf]).stdout
    for name in ["arm_convolve_wrapper_s8", "arm_max_pool_s8", "arm_fully_connected_s8", "arm_softmax_s8"]:
        check(re.search(r" T %s$" % name, symbols, re.M) is not None, name + " linked from libcmsis-nn.a")

    qemu = run(["qemu-system-arm", "-M", "mps2-an500", "-cpu", "cortex-m7", "-nographic",
                "-monitor", "none", "-serial", "null", "-semihosting-config",
                "enable=on,target=native", "-kernel", elf], timeout=120)
    print(qemu.stdout)
    bits = dict((int(i), b) for i, b in re.findall(r"^score (\d+) \S+ 0x([0-9a-f]{8})$", qemu.stdout, re.M))
    check(sorted(bits) == list(range(10)), "the firmware printed ten scores")
    firmware = np.array([np.frombuffer(bytes.fromhex(bits[i])[::-1], dtype="<f4")[0] for i in range(10)])

    host_out = os.path.join(work, "host")
    run([bundlefit, "-q", "run", model, "--input", npy, "--output-dir", host_out, "--load-profile", profile])
    reference = np.load(os.path.join(host_out, "softmax.npy")).reshape(-1).astype(np.float32)
    print("firmware:", firmware, "\nhost int8:", reference)
    check(np.array_equal(firmware.view(np.uint32), reference.view(np.uint32)),
          "CMSIS-NN firmware scores equal the portable int8 host bundle's, bit for bit")
    print("PASSED")


if __name__ == "__main__":
    main()
