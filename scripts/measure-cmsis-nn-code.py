#!/usr/bin/env python3
"""Measure the Flash code CMSIS-NN adds to an int8-cmsis bundle, per core.

For each core, builds the real CMSIS-NN library (third_party/build-cmsis-nn.sh
in the shared directory beside the repository), then links, for each function
bundlefit's int8-cmsis code calls, a program rooted at that function alone
(arm-none-eabi-gcc, newlib-nano, --gc-sections) and records which library
symbols the link keeps and their sizes (arm-none-eabi-nm). bundlefit sizes a
bundle's CMSIS-NN code as the union of its functions' symbols
(device_db/src/LibraryCode.cpp), so shared helpers count once.

Usage: scripts/measure-cmsis-nn-code.py [--shared DIR] [--work DIR] [CORE ...]
Writes device_db/libraries/cmsis-nn-code.json (cores not measured keep their
previous figures).
"""
import argparse, json, os, subprocess, sys, datetime

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
OUT = os.path.join(REPO, "device_db", "libraries", "cmsis-nn-code.json")

# The gcc flags of each core's bundle build (src/driver/PartLink.cpp,
# partToolchain) and of build-cmsis-nn.sh.
FLAGS = {
    "cortex-m0plus": ["-mcpu=cortex-m0plus", "-mthumb", "-mfloat-abi=soft"],
    "cortex-m4": ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"],
    "cortex-m7": ["-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16"],
    "cortex-m33": ["-mcpu=cortex-m33", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-sp-d16"],
    # Helium: gcc takes the FPU and MVE from -mcpu (build-cmsis-nn.sh builds it so too).
    "cortex-m55": ["-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard", "-mfpu=auto"],
}
# The functions bundlefit's int8-cmsis bundles call (src/quant/CmsisLayout.cpp), and those of
# int16x8 TFLite models (src/ops/int16x8).
FUNCTIONS = ["arm_convolve_wrapper_s8", "arm_depthwise_conv_wrapper_s8", "arm_fully_connected_s8",
             "arm_avgpool_s8", "arm_max_pool_s8", "arm_softmax_s8", "arm_convolve_wrapper_s16",
             "arm_depthwise_conv_wrapper_s16", "arm_fully_connected_s16", "arm_avgpool_s16",
             "arm_max_pool_s16", "arm_elementwise_add_s16"]


def run(argv, **kw):
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kw).stdout


def nm_sizes(path):
    sizes = {}
    for line in run(["arm-none-eabi-nm", "-S", "--defined-only", path]).splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2].lower() in "tdbr":
            sizes[parts[3]] = int(parts[1], 16)
    return sizes


def measure(core, shared, work):
    libdir = os.path.join(work, core)
    lib = os.path.join(libdir, "libcmsis-nn.a")
    if not os.path.exists(lib):
        print(f"building CMSIS-NN for {core} ...", file=sys.stderr)
        run(["sh", os.path.join(shared, "third_party", "build-cmsis-nn.sh"), core, libdir])
    library_symbols = set(nm_sizes(lib))
    symbols, functions = {}, {}
    for function in FUNCTIONS:
        elf = os.path.join(libdir, function + ".elf")
        run(["arm-none-eabi-gcc", *FLAGS[core], "--specs=nano.specs", "--specs=nosys.specs",
             "-nostartfiles", "-Wl,--gc-sections", "-Wl,--no-warn-rwx-segments",
             "-Wl,-e," + function, "-Wl,--undefined=" + function, lib, "-lm", "-o", elf])
        kept = {name: size for name, size in nm_sizes(elf).items() if name in library_symbols}
        functions[function] = sorted(kept)
        symbols.update(kept)
    version = run(["arm-none-eabi-gcc", "--version"]).splitlines()[0]
    return {"flags": " ".join(FLAGS[core]), "compiler": version,
            "measured": datetime.date.today().isoformat(),
            "symbols": dict(sorted(symbols.items())), "functions": functions}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", default=os.path.join(os.path.dirname(REPO), "shared"))
    parser.add_argument("--work", default=os.path.join(REPO, "build", "cmsis-nn-code"))
    parser.add_argument("cores", nargs="*", default=sorted(FLAGS))
    args = parser.parse_args()
    table = {"cores": {}}
    if os.path.exists(OUT):
        with open(OUT) as f:
            table = json.load(f)
    table["source"] = ("measured by scripts/measure-cmsis-nn-code.py: the real CMSIS-NN "
                       "(third_party/CMSIS-NN, -O2) linked per entry function with arm-none-eabi-gcc "
                       "--gc-sections; sizes from arm-none-eabi-nm")
    for core in args.cores:
        if core not in FLAGS:
            sys.exit(f"unknown core {core}; known: {', '.join(sorted(FLAGS))}")
        table["cores"][core] = measure(core, args.shared, args.work)
        total = sum(table["cores"][core]["symbols"].values())
        print(f"{core}: {total} B for all {len(FUNCTIONS)} functions", file=sys.stderr)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(table, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
