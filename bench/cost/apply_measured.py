#!/usr/bin/python3
"""apply_measured: turn bench/results/cmsis_insns.json into the CMSIS-NN figures of the device database.

For every part in device_db/parts whose cmsis_nn figures are not calibrated on a published timing of
that part, and whose bundle core was measured (Cortex-M4, M7, M33, M55):

  cycles per MAC = instructions per MAC measured under QEMU for that core x cycles per instruction

per kernel family: cycles_per_mac from the convolutions (mean of the 3x3 and 1x1 workloads),
fc_cycles_per_mac from the fully connected one, depthwise_cycles_per_mac from the depthwise 3x3 one.
Cycles per instruction comes from a published timing on the same core type (Cortex-M7: RT1060,
Cortex-M33: RT685, both AN13001 LeNet CMSIS-NN); the Cortex-M4 and M55 have none, so they carry the
Cortex-M33 factor and say so. The library's provenance becomes "measured" with the numbers it rests on.
Boards inherit their part's figures. Parts calibrated on a published figure keep their figures,
except depthwise_cycles_per_mac: the published timings have no depthwise layer, so it is the
calibrated convolution figure times the depthwise/conv instruction ratio measured on that core.
A rerun that measures the same figures at a later commit leaves the part files as they are: their
provenance keeps naming the commit that first measured them.

The same for bundlefit's own kernels (bench/results/own_insns.json, bench/cost/measure_own.py):
portable_float and portable_int8 get cycles per MAC per family from their measured instructions per
MAC x the same cycles per instruction, wherever no published timing calibrates them (everywhere for
float; all but the RT1062 and RT685 for int8).

cycles_per_element (per output element of a layer without MACs: elementwise, pooling, data movement;
the cost model charges layers with MACs per MAC only) likewise: the mean of the element workloads'
instructions per output element (own kernels: Add, Transpose, MaxPool, Relu of measure_own.py; CMSIS-NN:
arm_max_pool_s8 and arm_avgpool_s8 of measure_cmsis.py, the element-bound functions bundlefit calls;
its elementwise add is measured but not used) x the same cycles per instruction, for every library that
no published timing calibrates. The calibrated libraries (RT1062 and RT685 int8 and CMSIS-NN) keep
their fitted cycles_per_element: it is part of the LeNet fit.

  /usr/bin/python3 bench/cost/apply_measured.py            # rewrites device_db/parts/*.json
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CPI_FALLBACK = {"cortex-m4": "cortex-m33", "cortex-m55": "cortex-m33"}
CONV = ("conv 3x3, 16x16x16 -> 16", "conv 1x1, 16x16x32 -> 32")


# CMSIS-NN's element workloads of the functions bundlefit calls (not arm_elementwise_add_s8: bundlefit
# runs Add on its own kernels, so the CMSIS-NN library's per-element figure only prices pooling).
CMSIS_ELEMENTS = ("max pool 2x2, 16x16x32", "average pool 2x2, 16x16x32")


def per_element(rows, field, names=None):
    """Mean instructions per output element over the element workloads that have `field` (those of
    `names` when given), with the text naming them, or None when none was measured (results from
    before the element workloads)."""
    found = {name: row[field] for name, row in rows.items() if field in row and (names is None or name in names)}
    if not found:
        return None
    mean = sum(found.values()) / len(found)
    return mean, (f"; cycles_per_element: {mean:.3f} insns/output element (mean of "
                  + ", ".join(f"{name} {v:.3f}" for name, v in found.items()) + ")")
FC = "fully connected 256 -> 64"
# measure_own.py's fully connected layer (256 -> 256, so that two chain; the same 256-long dot
# product per output as CMSIS-NN's FC).
OWN_FC = "fully connected 256 -> 256"
DW = "depthwise 3x3, 16x16x32"


def write(path, doc, library, key="cmsis_nn"):
    """Writes `doc` back with the library's fields in the files' usual order."""
    order = ["code_bytes", "flash_bytes", "ram_bytes", "core", "cycles_per_mac", "fc_cycles_per_mac",
             "depthwise_cycles_per_mac", "cycles_per_element", "layer_overhead_cycles", "calibrated",
             "provenance", "source", "comparison", "ops"]
    rest = [k for k in library if k not in order]
    doc["kernel_libraries"][key] = {k: library[k] for k in order + rest if k in library}
    text = json.dumps(doc, indent=2)
    # The part files keep their one-line "reserve" object.
    text = re.sub(r'"reserve": \{\n\s*(.*?)\n\s*\}', lambda m: '"reserve": {' + re.sub(r",\n\s*", ", ", m.group(1)) + "}",
                  text, flags=re.S)
    with open(path, "w") as f:
        f.write(text + "\n")


def same_but_commits(old, new):
    """`new` when it says more than which commits measured; else `old`, the same figures measured at
    an earlier commit: a rerun that changes no number leaves the part files as they were (and the
    benchmarks that read them fresh)."""
    strip = lambda text: re.sub(r"commit [0-9a-f]+", "commit", text)
    return old if old is not None and strip(old) == strip(new) else new


def mark_measured(library, core_type, provenance_from, elements=False):
    """Provenance "measured", and a source that says how in a line (keeping the code-size citation)."""
    old = library.get("provenance", {})
    provenance_from = same_but_commits(old.get("from") if old.get("kind") == "measured" else None,
                                       provenance_from)
    library["provenance"] = {"kind": "measured", "from": provenance_from}
    code = library.get("source", "").split("code: ", 1)
    what = "cycles per MAC and per element: instructions per MAC and per output element" if elements else \
        "cycles per MAC: instructions per MAC"
    library["source"] = (f"{what} counted under QEMU on {core_type} x cycles per "
                         "instruction (see provenance)" + ("; code: " + code[1] if len(code) == 2 else ""))


def cycles_per_instruction(cores, core_type):
    """(factor, the core it was measured on) for `core_type`, or None: the M4 and M55 carry the M33's."""
    cpi_core = core_type if "cycles_per_instruction" in cores.get(core_type, {}) else CPI_FALLBACK.get(core_type)
    if cpi_core is None or "cycles_per_instruction" not in cores.get(cpi_core, {}):
        return None
    return cores[cpi_core]["cycles_per_instruction"], cpi_core


def keep_as_comparison(library):
    """A library fitted to a published timing of other kernels (AN13001's plain int8 rows time Glow's
    int8 kernels, not bundlefit's) keeps those figures as a labelled comparison, never predicted
    with, and from then on carries the measured figures of the kernels bundlefit links."""
    if library.get("provenance", {}).get("kind") != "published":
        return
    library["comparison"] = {"what": "Glow's int8 kernels (AN13001), not the kernels bundlefit links",
                             "cycles_per_mac": library["cycles_per_mac"],
                             "cycles_per_element": library["cycles_per_element"],
                             "from": library["provenance"]["from"]}
    library["calibrated"] = False
    for field in ("fc_cycles_per_mac", "depthwise_cycles_per_mac"):
        library.pop(field, None)


def apply_own(path, doc, own, cmsis_cores, commit):
    """portable_float / portable_int8 from bench/results/own_insns.json on every part. Returns the
    libraries it changed."""
    changed = []
    for key, kind in (("portable_float", "float"), ("portable_int8", "int8")):
        library = doc["kernel_libraries"].get(key)
        if library is None:
            continue
        core = next(c for c in doc["cores"] if c["name"] == library["core"])
        data = own["cores"].get(core["type"])
        cpi = cycles_per_instruction(cmsis_cores, core["type"])
        if data is None or cpi is None:
            continue
        keep_as_comparison(library)
        (factor, cpi_core), w = cpi, data["workloads"]
        per_mac = {name: w[name][kind + "_instructions_per_mac"] for name in w}
        conv = sum(per_mac[k] for k in CONV) / len(CONV)
        fc = per_mac[OWN_FC]
        library["cycles_per_mac"] = round(conv * factor["value"], 2)
        library["fc_cycles_per_mac"] = round(fc * factor["value"], 2)
        library["depthwise_cycles_per_mac"] = round(per_mac[DW] * factor["value"], 2)
        elements, element_note = per_element(data.get("element_workloads", {}), kind + "_instructions_per_element") \
            or (None, "")
        if "comparison" in library and elements is not None:
            # The calibrated CMSIS-NN fits of the same part price their layers without MACs (LeNet's
            # Flatten, quantize and dequantize) with this figure: it stays as fitted with them.
            element_note += (f"; cycles_per_element stays {library['cycles_per_element']}, fitted with the part's "
                             f"CMSIS-NN timings (measured: {elements * factor['value']:.2f})")
            elements = None
        if elements is not None:
            library["cycles_per_element"] = round(elements * factor["value"], 2)
        carried = "" if cpi_core == core["type"] else f", carried from {cpi_core} (no published {core['type']} timing)"
        mark_measured(library, core["type"], f"bench/results/own_insns.json (commit {own['commit'][:12]}): bundlefit's own "
                      f"{kind} kernels on {core['type']} under QEMU, {conv:.3f} insns/MAC conv, {fc:.3f} "
                      f"fc, {per_mac[DW]:.3f} depthwise{element_note}; x {factor['value']} cycles/insn from "
                      f"{factor['part']} (bench/results/cmsis_insns.json, commit {commit}){carried}", elements is not None)
        write(path, doc, library, key)
        changed.append(key)
    return changed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--insns", default=os.path.join(ROOT, "bench", "results", "cmsis_insns.json"))
    ap.add_argument("--own", default=os.path.join(ROOT, "bench", "results", "own_insns.json"))
    ap.add_argument("--parts", default=os.path.join(ROOT, "device_db", "parts"))
    args = ap.parse_args()
    measured = json.load(open(args.insns))
    own = json.load(open(args.own)) if os.path.exists(args.own) else None
    cores = measured["cores"]
    commit = measured["commit"][:12]
    changed = []
    for name in sorted(os.listdir(args.parts)):
        path = os.path.join(args.parts, name)
        doc = json.load(open(path))
        if own is not None:
            changed += [f"{name} {key}" for key in apply_own(path, doc, own, cores, commit)]
        library = doc["kernel_libraries"].get("cmsis_nn")
        if library is None:
            continue
        core = next(c for c in doc["cores"] if c["name"] == library["core"])
        data = cores.get(core["type"])
        if data is None:
            continue
        w = data["workloads"]
        conv = sum(w[k]["instructions_per_mac"] for k in CONV) / len(CONV)
        if library.get("provenance", {}).get("kind") == "published":
            # The published timings have no depthwise layer, so the calibrated
            # convolution figure is scaled by the measured depthwise/conv ratio
            # of the same core (LeNet and CIFAR-10 predictions do not change).
            ratio = w[DW]["instructions_per_mac"] / conv
            library["depthwise_cycles_per_mac"] = round(library["cycles_per_mac"] * ratio, 2)
            note = (f"; depthwise_cycles_per_mac = cycles_per_mac x {ratio:.2f}, the depthwise/conv instruction "
                    f"ratio measured on {core['type']} (bench/results/cmsis_insns.json, commit {commit})")
            base = library["provenance"]["from"].split("; depthwise_cycles_per_mac = ")[0]
            library["provenance"]["from"] = same_but_commits(library["provenance"]["from"], base + note)
        if library.get("provenance", {}).get("kind") == "published":
            write(path, doc, library)
            changed.append(name)
            continue
        found = cycles_per_instruction(cores, core["type"])
        if found is None:
            continue
        cpi, cpi_core = found
        library["cycles_per_mac"] = round(conv * cpi["value"], 2)
        library["fc_cycles_per_mac"] = round(w[FC]["instructions_per_mac"] * cpi["value"], 2)
        library["depthwise_cycles_per_mac"] = round(w[DW]["instructions_per_mac"] * cpi["value"], 2)
        elements, element_note = per_element(w, "instructions_per_element", CMSIS_ELEMENTS) or (None, "")
        if elements is not None:
            library["cycles_per_element"] = round(elements * cpi["value"], 2)
        carried = "" if cpi_core == core["type"] else f", carried from {cpi_core} (no published {core['type']} timing)"
        if core["type"] == "cortex-m55":
            # Most Helium instructions take two beats on the M55, so an M33 factor is likely low.
            carried += "; MVE instructions take two beats on the Cortex-M55, so this is likely optimistic"
        mark_measured(library, core["type"], f"bench/results/cmsis_insns.json (commit {commit}): CMSIS-NN on {core['type']} "
                      f"under QEMU {data['machine']}, {conv:.3f} insns/MAC conv, "
                      f"{w[FC]['instructions_per_mac']:.3f} fc, {w[DW]['instructions_per_mac']:.3f} depthwise{element_note}; "
                      f"x {cpi['value']} cycles/insn from {cpi['part']} ({cpi['from']}){carried}", elements is not None)
        write(path, doc, library)
        changed.append(name)
    print("updated:", ", ".join(changed) if changed else "nothing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
