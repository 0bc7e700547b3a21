#!/usr/bin/env python3
"""One cell of the fit --verify-link matrix: MODEL VARIANT PART [MEMORY_OPT].

Runs `bundlefit fit MODEL --device PART --variant VARIANT --verify-link --json`
(int8: with a profile recorded from the model's reference input) and checks
that the link agrees with the prediction: the same verdict, and every region
within 1% of the predicted bytes. Exit 0 agree, 1 disagree, 77 (skip) without
arm-none-eabi-gcc.
"""
import json, os, shutil, subprocess, sys, tempfile


def main():
    exe, models, model, variant, part = sys.argv[1:6]
    memory_opt = sys.argv[6] if len(sys.argv) > 6 else None
    if not shutil.which("arm-none-eabi-gcc"):
        print("SKIP: arm-none-eabi-gcc is not installed (apt-get install gcc-arm-none-eabi)")
        return 77
    onnx = os.path.join(models, model + ".onnx")
    args = [exe, "-q", "fit", onnx, "--device", part, "--variant", variant, "--verify-link", "--json"]
    if memory_opt is not None:
        args += ["--memory-opt", memory_opt]
    with tempfile.TemporaryDirectory() as tmp:
        if variant.startswith("int8"):
            profile = os.path.join(tmp, "profile.yaml")
            sample = os.path.join(models, model + ".input.npy")
            done = subprocess.run([exe, "-q", "profile", onnx, sample, "-o", profile],
                                  capture_output=True, text=True)
            if done.returncode != 0:
                print(done.stdout + done.stderr)
                return 1
            args += ["--load-profile", profile]
        done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode not in (0, 3):
        print(" ".join(args))
        print(done.stdout[-4000:] + done.stderr[-4000:])
        return 1
    report = json.loads(done.stdout)
    check = report["verify_link"]
    print(f"{model} {variant} on {part}: predicted {'FITS' if report['fits'] else 'DOES NOT FIT'}, "
          f"linked {'yes' if check['linked'] else 'overflow'}")
    ok = check["verdicts_agree"] and report["fits"] == check["linked"]
    for region in check["regions"]:
        within = region["within_tolerance"] and abs(region["difference_percent"]) <= 1.0
        ok = ok and within
        print(f"  {region['name']}: predicted {region['predicted']}, linked {region['linked']}, "
              f"{region['difference_percent']:+.3f}% {'ok' if within else 'OFF'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
