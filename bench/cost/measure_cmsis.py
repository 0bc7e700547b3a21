#!/usr/bin/python3
"""measure_cmsis: instructions per MAC of the real CMSIS-NN int8 kernels on each Cortex-M core (issue 21).

For each core (QEMU machine in CORES) and each workload of bench/cost/cmsis_kernels.c, the script builds
CMSIS-NN for the core (../shared/third_party/build-cmsis-nn.sh), links the workload into a bare firmware
twice (REPS=0 and REPS=N), runs both under qemu-system-arm with the instruction-counting plugin
(../shared/tools/qemu-insncount) and records (count(N) - count(0)) / N instructions per call and per MAC;
for the layers without MACs (arm_max_pool_s8, arm_avgpool_s8, arm_elementwise_add_s8), per output
element.

The LeNet workload (AN13001's four timed layers) turns instructions into cycles where a published timing
exists: cycles per instruction = published cycles of LeNet's CMSIS-NN inference (RT1060: 10 ms at 600 MHz;
RT685: 28.52 ms at 300 MHz, AN13001 Table 3) / instructions counted here. That factor is calibrated for
Cortex-M7 and Cortex-M33 only; it includes pooling/softmax time the four layers do not.

Writes bench/results/cmsis_insns.json (with the git commit) and prints a table. Runs take a few seconds
per core. Needs arm-none-eabi-gcc, cmake and qemu-system-arm 7.2 (Debian 12).

  /usr/bin/python3 bench/cost/measure_cmsis.py --work /tmp/cmsis-insns
"""
import argparse
import json
import os
import re
import subprocess
import sys

from common import git_commit, run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHARED = os.path.normpath(os.path.join(ROOT, "..", "shared"))

# core -> (QEMU machine, gcc flags, code base, code size, data base, data size). Memory maps as
# src/bundle/Toolchain.cpp documents them for QEMU 7.2 (Secure aliases on the ARMv8-M machines).
CORES = {
    "cortex-m4": ("mps2-an386", "-mcpu=cortex-m4 -mfpu=fpv4-sp-d16 -mfloat-abi=hard", 0x0, 0x400000, 0x20000000, 0x400000),
    "cortex-m7": ("mps2-an500", "-mcpu=cortex-m7 -mfpu=fpv5-d16 -mfloat-abi=hard", 0x0, 0x400000, 0x20000000, 0x400000),
    "cortex-m33": ("mps2-an505", "-mcpu=cortex-m33 -mfpu=fpv5-sp-d16 -mfloat-abi=hard", 0x10000000, 0x400000, 0x38000000, 0x400000),
    # SSE-300: ITCM 512 KB (Secure alias 0x10000000), DTCM 512 KB (Secure alias 0x30000000).
    "cortex-m55": ("mps3-an547", "-mcpu=cortex-m55 -mfloat-abi=hard", 0x10000000, 0x80000, 0x30000000, 0x80000),
}
# workload -> (name, MACs per call); ELEMENT_WORKLOADS -> (name, output elements per call).
WORKLOADS = {
    1: ("conv 3x3, 16x16x16 -> 16", 16 * 16 * 16 * 9 * 16),
    2: ("conv 1x1, 16x16x32 -> 32", 16 * 16 * 32 * 32),
    3: ("depthwise 3x3, 16x16x32", 16 * 16 * 32 * 9),
    4: ("fully connected 256 -> 64", 256 * 64),
    5: ("LeNet conv1+conv2+fc1+fc2", 288000 + 1600000 + 400000 + 5000),
}
ELEMENT_WORKLOADS = {
    6: ("max pool 2x2, 16x16x32", 15 * 15 * 32),
    7: ("elementwise add 16x16x32", 16 * 16 * 32),
    8: ("average pool 2x2, 16x16x32", 15 * 15 * 32),
}
REPS = 4
# Published LeNet int8 CMSIS-NN timings (AN13001): core -> (part, ms, MHz, where).
PUBLISHED = {
    "cortex-m7": ("rt1062", 10.0, 600, "AN13001 Tables 2/5 (RT1060, weights in RAM)"),
    "cortex-m33": ("rt685", 28.52, 300, "AN13001 Table 3 (RT685)"),
}

STARTUP = r"""
#include <stdint.h>
extern int main(void);
extern uint32_t __stack_top;
static void semihost_exit(int code) {
  /* SYS_EXIT with ADP_Stopped_ApplicationExit (0x20026). */
  register int r0 __asm__("r0") = 0x18;
  register int r1 __asm__("r1") = code == 0 ? 0x20026 : 0x20023;
  __asm__ volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
  for (;;) {}
}
void Reset_Handler(void) {
  /* FPU (and Helium on the M55): CP10/CP11 full access. */
  *(volatile uint32_t *)0xE000ED88 |= 0xFu << 20;
  __asm__ volatile("dsb\n isb");
  semihost_exit(main());
}
void Fault_Handler(void) { semihost_exit(1); }
__attribute__((section(".vectors"), used)) static void *const vectors[16] = {
    &__stack_top, Reset_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler, Fault_Handler};
"""

LINKER = """
MEMORY {{ CODE (rx) : ORIGIN = {code:#x}, LENGTH = {code_size:#x}
         DATA (rw) : ORIGIN = {data:#x}, LENGTH = {data_size:#x} }}
SECTIONS {{
  .text : {{ KEEP(*(.vectors)) *(.text*) *(.rodata*) }} > CODE
  .ARM.exidx : {{ *(.ARM.exidx*) }} > CODE
  .data : {{ *(.data*) }} > DATA
  .bss (NOLOAD) : {{ *(.bss*) *(COMMON) }} > DATA
  __stack_top = ORIGIN(DATA) + LENGTH(DATA);
}}
"""


def plugin(work):
    so = os.path.join(work, "libinsncount.so")
    if not os.path.exists(so):
        run(["gcc", "-shared", "-fPIC", "-O2", "-o", so, os.path.join(SHARED, "tools", "qemu-insncount", "insncount.c")])
    return so


def cmsis_lib(work, core):
    out = os.path.join(work, "cmsis-nn-" + core)
    lib = os.path.join(out, "libcmsis-nn.a")
    if not os.path.exists(lib):
        run(["sh", os.path.join(SHARED, "third_party", "build-cmsis-nn.sh"), core, out])
    return lib


def count(work, core, workload, reps, lib, so):
    machine, flags, code, code_size, data, data_size = CORES[core]
    base = os.path.join(work, f"{core}-w{workload}-r{reps}")
    with open(os.path.join(work, "startup.c"), "w") as f:
        f.write(STARTUP)
    with open(base + ".ld", "w") as f:
        f.write(LINKER.format(code=code, code_size=code_size, data=data, data_size=data_size))
    include = os.path.join(SHARED, "third_party", "CMSIS-NN", "Include")
    run(["arm-none-eabi-gcc"] + flags.split() + ["-mthumb", "-O2", "-ffunction-sections", "-fdata-sections",
         f"-DWORKLOAD={workload}", f"-DREPS={reps}", "-I", include, "-nostartfiles", "--specs=nosys.specs",
         "-Wl,--gc-sections", "-T", base + ".ld", "-o", base + ".elf", os.path.join(HERE, "cmsis_kernels.c"),
         os.path.join(work, "startup.c"), lib])
    out = run(["qemu-system-arm", "-M", machine, "-cpu", core, "-nographic", "-monitor", "none",
               "-semihosting-config", "enable=on,target=native", "-plugin", so, "-d", "plugin",
               "-kernel", base + ".elf"], merge=True, timeout=120)
    m = re.search(r"insncount: (\d+)", out)
    if not m:
        raise RuntimeError(f"{base}.elf: no instruction count in QEMU's output: {out[-300:]}")
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default="/tmp/bundlefit-cmsis-insns", help="build directory (reused)")
    ap.add_argument("--cores", default=",".join(CORES), help="comma-separated subset of " + ",".join(CORES))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "cmsis_insns.json"))
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    so = plugin(args.work)
    result = {"schema": "bundlefit.cmsis-insns/1", "commit": git_commit(), "reps": REPS,
              "cmsis_nn": "../shared/third_party/CMSIS-NN (see its README for the pinned commit)", "cores": {}}
    for core in args.cores.split(","):
        try:
            lib = cmsis_lib(args.work, core)
        except RuntimeError as e:
            print(f"{core}: CMSIS-NN build failed: {e}", file=sys.stderr)
            continue
        rows = {}
        for w, (name, n) in list(WORKLOADS.items()) + list(ELEMENT_WORKLOADS.items()):
            per = "element" if w in ELEMENT_WORKLOADS else "mac"
            try:
                empty = count(args.work, core, w, 0, lib, so)
                full = count(args.work, core, w, REPS, lib, so)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"{core} {name}: {e}", file=sys.stderr)
                rows[name] = {"error": str(e)[-200:]}
                continue
            per_call = (full - empty) / REPS
            rows[name] = {per + "s": n, "instructions": round(per_call), f"instructions_per_{per}": round(per_call / n, 3)}
            print(f"{core:11} {name:28} {per_call:12.0f} insns  {per_call / n:6.3f} /{per}", flush=True)
        entry = {"machine": CORES[core][0], "workloads": rows}
        lenet = rows.get(WORKLOADS[5][0], {})
        if core in PUBLISHED and "instructions" in lenet:
            part, ms, mhz, where = PUBLISHED[core]
            cycles = ms * 1e3 * mhz
            entry["cycles_per_instruction"] = {"value": round(cycles / lenet["instructions"], 3), "part": part,
                                               "published_ms": ms, "clock_mhz": mhz, "from": where}
        result["cores"][core] = entry
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
