#!/usr/bin/python3
"""linked_text's split of a linked image, on a firmware small enough to count by hand.

A "bundle" object whose entry calls one function of a two-member archive (the other member
must be dropped) and memset (a runtime helper): each origin's .text in the link map must equal
arm-none-eabi-size's .text of the input sections kept, read independently from the objects
(a section per function, as -ffunction-sections builds CMSIS-NN). Exit 77 (a ctest skip)
without arm-none-eabi-gcc.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from linked_text import link_bundle  # noqa: E402

FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
SOURCES = {
    "bundle.c": "void used(int *p, int n);\nvoid net(int *p) { used(p, 7); }\n",
    "used.c": "#include <string.h>\n"
              "void used(int *p, int n) { memset(p, 0, n * 4); p[0] = n * 3 + 1; }\n",
    "unused.c": "int unused(int a, int b) { return a * b + a / (b | 1); }\n",
}


def section_size(obj, name):
    out = subprocess.run(["arm-none-eabi-size", "-A", obj], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    return sum(int(line.split()[1]) for line in out.splitlines() if line.split()[:1] == [name])


def main():
    if not shutil.which("arm-none-eabi-gcc"):
        print("SKIP: no arm-none-eabi-gcc")
        return 77
    work = tempfile.mkdtemp(prefix="linked-text-")
    try:
        objs = {}
        for name, text in SOURCES.items():
            src = os.path.join(work, name)
            with open(src, "w") as f:
                f.write(text)
            objs[name] = src[:-2] + ".o"
            subprocess.run(["arm-none-eabi-gcc"] + FLAGS + ["-O2", "-ffunction-sections", "-c", src,
                            "-o", objs[name]], check=True)
        library = os.path.join(work, "liblib.a")
        subprocess.run(["arm-none-eabi-ar", "rcs", library, objs["used.c"], objs["unused.c"]], check=True)
        os.makedirs(os.path.join(work, "bundle"))
        bundle = os.path.join(work, "bundle", "net.o")
        shutil.copy(objs["bundle.c"], bundle)
        sizes = link_bundle(bundle, "net", FLAGS, library, work)
        want = {"bundle": section_size(bundle, ".text.net"), "cmsis_nn": section_size(objs["used.c"], ".text.used")}
        got = {k: sizes[k]["text"] for k in want}
        if got != want or sizes["runtime"]["text"] <= 0:
            print("FAIL: linked .text %s (runtime %d), want %s and some runtime (memset)" % (
                got, sizes["runtime"]["text"], want))
            return 1
        print("ok: bundle %d, library member %d (the unused one dropped), runtime %d" % (
            got["bundle"], got["cmsis_nn"], sizes["runtime"]["text"]))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
