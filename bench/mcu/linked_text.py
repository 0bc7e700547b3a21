"""linked_text: the code a bundle object pulls in when linked, split by where it comes from.

Issue 15's size goal compares the own int8 bundle's .text with a `--use-cmsis` bundle's .text
plus the CMSIS-NN objects that bundle would link. The library archive's total (86 KB on M7) is
not that figure: a firmware links only the members its calls reach. So the bundle object is
linked on its own, as a firmware would link it, with the bundle's entry function as the ELF
entry and --gc-sections, against the cached libcmsis-nn.a and the toolchain's libc, libm and
libgcc (for helpers such as memset), with the same -mcpu/-mfpu/-mfloat-abi flags the library
was built with (so the same multilib). The linker map then gives each kept input section's
size and the file it came from: the bundle object, a libcmsis-nn.a member, or a runtime
library (libc/libm/libgcc, and linker stubs). Counted: sizes of kept input sections only, no
alignment fill between them; ".text*" sections as text, ".rodata*" as rodata (CMSIS-NN keeps
no constant tables in the kernels these models reach; the figure says so if that changes).
The bundle object's own part must equal memory.json's code_size.text (its executable
sections), which is checked, so the two sides are counted the same way.
"""
import os
import re
import subprocess

# One input section in a GNU ld map: " .text.name  0xADDR  0xSIZE file", where a long section
# name puts the address on the next line.
_INPUT_SECTION = re.compile(r"^ (\.[^\s*]+)\s+0x([0-9a-fA-F]+)\s+0x([0-9a-fA-F]+)\s+(\S.*)$", re.MULTILINE)


def kept_sections(map_text):
    """(section name, size, origin file) for every input section the link kept."""
    start = map_text.find("Linker script and memory map")
    if start < 0:
        raise ValueError("not a GNU ld map (no 'Linker script and memory map')")
    return [(m.group(1), int(m.group(3), 16), m.group(4).strip())
            for m in _INPUT_SECTION.finditer(map_text, start)]


def origin_kind(origin, bundle_object, library):
    if origin == bundle_object:
        return "bundle"
    if library and origin.startswith(library + "("):
        return "cmsis_nn"
    return "runtime"


def linked_sizes(map_text, bundle_object, library):
    """{kind: {"text": bytes, "rodata": bytes}} for kind in bundle, cmsis_nn, runtime."""
    sizes = {k: {"text": 0, "rodata": 0} for k in ("bundle", "cmsis_nn", "runtime")}
    for name, size, origin in kept_sections(map_text):
        part = "text" if name.startswith(".text") else "rodata" if name.startswith(".rodata") else None
        if part:
            sizes[origin_kind(origin, bundle_object, library)][part] += size
    return sizes


def gcc_flags(toolchain_cmake):
    """The -m flags a cached CMSIS-NN build used (its toolchain file's CMAKE_C_FLAGS_INIT)."""
    with open(toolchain_cmake) as f:
        m = re.search(r'CMAKE_C_FLAGS_INIT\s+"([^"]*)"', f.read())
    if not m:
        raise ValueError(toolchain_cmake + ": no CMAKE_C_FLAGS_INIT")
    return [flag for flag in m.group(1).split() if flag.startswith("-m")]


def link_bundle(bundle_object, entry, flags, library, work):
    """Link the bundle object as a firmware would and return linked_sizes() of its map."""
    base = os.path.join(work, os.path.basename(os.path.dirname(bundle_object)))
    argv = (["arm-none-eabi-gcc"] + flags +
            ["-nostartfiles", "-Wl,--gc-sections", "-Wl,-e," + entry, "-Wl,--undefined=" + entry,
             "-Wl,-Map=" + base + ".map", "-o", base + ".elf", bundle_object] +
            ([library] if library else []) + ["-Wl,--start-group", "-lc", "-lm", "-lgcc", "-Wl,--end-group"])
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        raise RuntimeError("link of %s failed: %s\n%s" % (bundle_object, " ".join(argv), p.stdout[-2000:]))
    with open(base + ".map") as f:
        return linked_sizes(f.read(), bundle_object, library)
