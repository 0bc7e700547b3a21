"""Why a comparison with TFLite Micro cannot run here, or None (compare_tflm.py, seanet_int16.py).

A test that cannot run reports a ctest SKIP (exit 77), never a pass: without
../shared/third_party/tflm (tflm_run and, when asked, the seanet models), without
the CMSIS-NN sources `--use-cmsis --cmsis-nn DIR` names, or, for a Cortex-M
--target, without QEMU and the Arm toolchain.
"""
import os
import shutil

SKIP = 77


def skip_reason(tflm_dir, options, needs=()):
    """The SKIP line for `bundlefit run` options `options`, or None when everything is here.
    `needs`: further paths under tflm_dir the test reads (models/seanet)."""
    tflm_run = os.path.join(tflm_dir, "bin", "tflm_run")
    for path in [tflm_run] + [os.path.join(tflm_dir, n) for n in needs]:
        if not os.path.exists(path):
            return f"SKIP: {path} is absent (../shared/third_party/tflm beside the clone)"
    if "--use-cmsis" in options:
        cmsis = options[options.index("--cmsis-nn") + 1]
        if not os.path.isdir(cmsis):
            return f"SKIP: {cmsis} is absent"
    if "--target" in options:
        target = options[options.index("--target") + 1]
        if target != "host" and not (shutil.which("qemu-system-arm") and
                                     shutil.which("arm-none-eabi-gcc")):
            return "SKIP: qemu-system-arm or arm-none-eabi-gcc is missing"
    return None
