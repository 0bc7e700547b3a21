#!/usr/bin/python3
"""The commands on a pre-quantized model: int8 without --load-profile.

usage: cli_qdq.py BUNDLEFIT MODELS_DIR WORK_DIR   (MODELS_DIR: make_qdq_models.py's output)

Each check runs bundlefit and looks at its exit code and output; prints one
line per check and 'N passed, M failed'; exit 1 on any failure.
"""
import os
import subprocess
import sys


def main():
    bundlefit, models, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    lenet = os.path.join(models, "lenet_qdq_pt_s8.onnx")
    small = os.path.join(models, "smallcnn_qdq_pt_u8.onnx")
    qop = os.path.join(models, "lenet_qop_pc_u8.onnx")
    profile = os.path.join(work, "any.yaml")
    with open(profile, "w") as f:
        f.write("x: 1\n")

    def run(*args):
        p = subprocess.run([bundlefit, *args], capture_output=True, text=True)
        return p.returncode, p.stdout, p.stderr

    checks = []

    def check(name, ok):
        checks.append(ok)
        print(("ok   " if ok else "FAIL ") + name)

    code, out, err = run("fit", lenet, "--device", "nrf52840")
    # The header line wraps at 100 columns when the model's path is long: compare its words.
    header = " ".join(out.split("\nbundle:")[0].split())
    check("fit: the int8 variant without --load-profile", code == 0 and "variant int8," in header)
    code, out, err = run("fit", lenet, "--device", "nrf52840", "--variant", "float")
    check("fit --variant float: usage error naming the reason",
          code == 2 and "pre-quantized" in err and len(err.strip().splitlines()) == 1)
    code, out, err = run("pick", lenet, "--device", "nrf52840")
    # Table rows: "[*] VARIANT flash|ram ..."
    rows = [l.lstrip("* ").split() for l in out.splitlines()]
    variants = {r[0] for r in rows if len(r) > 2 and r[1] in ("flash", "ram")}
    check("pick: int8 variants only", code == 0 and variants and
          all(v.startswith("int8") for v in variants))
    code, out, err = run("plan", lenet)
    check("plan: int8 tensors", code == 0 and "int8[1,20," in out)
    code, out, err = run("compile", lenet, "-o", os.path.join(work, "b1"), "--load-profile", profile)
    check("compile --load-profile: usage error", code == 2 and "takes no profile" in err)
    code, out, err = run("compile", qop, "-o", os.path.join(work, "b2"), "--use-cmsis")
    check("compile QOperator form --use-cmsis without a profile",
          code == 0 and "QuantizeLinear/DequantizeLinear pairs" in err)
    code, out, err = run("compile", small, "-o", os.path.join(work, "b3"), "-q")
    # Both average pools have their own output parameters: each becomes a
    # depthwise Conv, exact, so a note (even with -q) and no warning.
    notes = [l for l in err.splitlines() if l.startswith("note: ")]
    check("pools as convolutions: notes even with -q, one line each naming file and node",
          code == 0 and len(notes) == 2 and all(small in n for n in notes) and
          "'gap' (GlobalAveragePool)" in notes[1] and "warning: " not in err)
    failed = checks.count(False)
    print(f"{len(checks) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
