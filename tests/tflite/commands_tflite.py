#!/usr/bin/env python3
"""Every command that takes a model takes a .tflite, and refuses a broken one in one line.

On TFLM's hello_world (float and int8, ../shared/third_party/tflm/models): inspect, plan, fit,
pick, compile, run (int8 .npy in and out for the int8 model), profile (float model),
model-compiler -model= and, when built, `import bundlefit` (plan, from the path and from the bytes,
equal to the CLI's; run's int8 outputs equal to the CLI's) must succeed; --buffer-alignment 64
gives the CLI's, model-compiler's and Python's bundles the same activations, other than their
common 16-byte default (check_buffer_alignment); a truncated copy of the int8 model must make each of them
exit 4 with exactly one line on stderr naming the file and the verifier's refusal; TFLM's int8
mnist_lstm (its integer UNIDIRECTIONAL_SEQUENCE_LSTM) must pass each of them but run. pick on
two int16x8 seanet layers offers integer builds only, named int16x8 and int16x8-cmsis (on a HiFi4
part too: bundlefit builds no int16x8 HiFi4 bundle), and counts CMSIS-NN's s16 scratch, or names
the convolution CMSIS-NN cannot run exactly (check_int16_pick); fit's --variant names each model's
builds and refuses the int16x8 HiFi4 ones (check_int16_variants). On each TFLM example model,
plan's activations are at most TFLM's planned arena (check_activations_vs_tflm).
Exit 77 (ctest SKIP) without the models.

usage: commands_tflite.py BIN_DIR TFLM_DIR WORK_DIR
"""
import os
import re
import shutil
import subprocess
import sys

import numpy as np

SKIP = 77


def check_python(bin_dir, bf, model, x8):
    """`import bundlefit` (when built): plan equals the CLI's JSON, from the path and from the
    bytes, and run returns the CLI's int8 outputs. Failures counted."""
    sys.path.insert(0, os.path.join(os.path.dirname(bin_dir), "python"))
    try:
        import bundlefit
    except ImportError:
        print("python: module not built, not checked")
        return 0
    import json
    cli_plan = json.loads(subprocess.run([bf, "-q", "plan", model, "--json", "-"], check=True,
                                         capture_output=True, text=True).stdout)
    with open(model, "rb") as f:
        from_bytes = bundlefit.load(f.read(), name=os.path.basename(model))
    ok = bundlefit.plan(model) == cli_plan and bundlefit.plan(from_bytes) == cli_plan
    x = np.load(x8)
    got = bundlefit.run(model, x)["arrays"]
    ok = ok and len(got) == 1 and all(a.dtype == np.int8 for a in got.values())
    out = os.path.join(os.path.dirname(x8), "int8_run")
    want = np.load(os.path.join(out, os.listdir(out)[0]))
    ok = ok and np.array_equal(next(iter(got.values())), want)
    print(f"python plan and run hello_world_int8.tflite: {'ok' if ok else 'FAIL'}")
    return 0 if ok else 1


def check_buffer_alignment(bin_dir, bf, model, work):
    """--buffer-alignment reaches every front end, as all of them fill the one
    driver::CompilationOptions: model-compiler's -buffer-alignment=64 and Python's
    buffer_alignment=64 give the bundle the CLI's compile --buffer-alignment 64 gives, their
    defaults the CLI's 16-byte .tflite default, and the two differ (hello_world_int8: 128 B
    against 32 B); a value that is not a power of two is a usage error naming the option
    (exit 2, one line). Failures counted."""
    import json
    mc = os.path.join(bin_dir, "model-compiler")
    net = os.path.splitext(os.path.basename(model))[0]

    def bundle_activations(argv, out):
        shutil.rmtree(out, ignore_errors=True)
        done = subprocess.run(argv, capture_output=True, text=True)
        if done.returncode != 0:
            return "exit %d: %s" % (done.returncode, done.stderr.strip())
        with open(os.path.join(out, net + ".memory.json")) as f:
            return json.load(f)["sizes"]["activations"]

    got = {}
    for alignment in (None, "64"):
        tag = alignment or "default"
        cli_out, mc_out = os.path.join(work, "align_cli_" + tag), os.path.join(work, "align_mc_" + tag)
        extra = ["--buffer-alignment", alignment] if alignment else []
        got[("cli", tag)] = bundle_activations([bf, "-q", "compile", model, "-o", cli_out, *extra],
                                               cli_out)
        extra = ["-buffer-alignment=" + alignment] if alignment else []
        got[("model-compiler", tag)] = bundle_activations(
            [mc, "-q", "-model=" + model, "-emit-bundle=" + mc_out, "-memory-opt=2", *extra],
            mc_out)  # the CLI's level: model-compiler defaults to Glow's 0
    sys.path.insert(0, os.path.join(os.path.dirname(bin_dir), "python"))
    try:
        import bundlefit
    except ImportError:
        bundlefit = None
        print("buffer alignment: python module not built, not checked")
    if bundlefit:
        for alignment in (None, 64):
            tag = str(alignment or "default")
            out = os.path.join(work, "align_py_" + tag)
            shutil.rmtree(out, ignore_errors=True)
            got[("python compile", tag)] = bundlefit.compile(
                model, out, buffer_alignment=alignment)["sizes"]["activations"]
            got[("python plan", tag)] = bundlefit.plan(
                model, buffer_alignment=alignment)["sizes"]["activations"]
    default, wide = got[("cli", "default")], got[("cli", "64")]
    ok = isinstance(default, int) and isinstance(wide, int) and default != wide
    ok = ok and all(v == (wide if tag == "64" else default) for (_, tag), v in got.items())
    print(f"buffer alignment {os.path.basename(model)} (default, 64): "
          + ", ".join(f"{k[0]} {k[1]} {v}" for k, v in sorted(got.items()))
          + ("" if ok else " FAIL"))
    failures = int(not ok)
    done = subprocess.run([mc, "-model=" + model, "-emit-bundle=" + os.path.join(work, "align_bad"),
                           "-buffer-alignment=48"], capture_output=True, text=True)
    lines = done.stderr.strip().splitlines()
    ok = done.returncode == 2 and len(lines) == 1 and "buffer-alignment" in lines[0]
    print(f"model-compiler -buffer-alignment=48: exit {done.returncode}: "
          f"{lines[0] if lines else ''}" + ("" if ok else " FAIL"))
    failures += not ok
    if bundlefit:
        try:
            bundlefit.plan(model, buffer_alignment=48)
            ok, text = False, "no error"
        except bundlefit.Error as e:
            text = str(e)
            ok = e.exit_code == 2 and text.startswith("buffer_alignment 48: ")
        print(f"python buffer_alignment=48: {text}" + ("" if ok else " FAIL"))
        failures += not ok
    return failures


def check_activations_vs_tflm(bf, tflm_dir):
    """Issue 33 item 3: on each TFLM example model bundlefit runs, `plan`'s activations (kernel
    scratch included) are at most TFLM's planned non-persistent arena (tflm_run's
    arena_nonpersistent), with a .tflite's default 16-byte buffer alignment; hello_world_int8's
    two 16-byte buffers need 128 B at --buffer-alignment 64 (Glow's), so the option reaches
    the planner. Failures counted; models absent are not checked."""
    import json
    tflm_run = os.path.join(tflm_dir, "bin", "tflm_run")
    if not os.path.exists(tflm_run):
        print(f"activations vs TFLM: {tflm_run} is absent, not checked")
        return 0
    models = os.path.join(tflm_dir, "models")

    def activations(model, *options):
        done = subprocess.run([bf, "-q", "plan", model, "--json", "-", *options],
                              capture_output=True, text=True)
        return json.loads(done.stdout)["sizes"]["activations"] if done.returncode == 0 else None

    failures = 0
    for name in ("hello_world/hello_world_int8.tflite", "hello_world/hello_world_float.tflite",
                 "micro_speech/micro_speech_quantized.tflite", "mnist_lstm/trained_lstm.tflite",
                 "mnist_lstm/trained_lstm_int8.tflite"):
        model = os.path.join(models, name)
        if not os.path.exists(model):
            continue
        info = json.loads(subprocess.check_output([tflm_run, model, "-", "-", "--no-breakdown"]))
        planned, ours = info["arena_nonpersistent"], activations(model)
        ok = ours is not None and ours <= planned
        print(f"activations {os.path.basename(model)}: {ours} B, TFLM planned {planned} B"
              + ("" if ok else " FAIL"))
        failures += not ok
    model = os.path.join(models, "hello_world", "hello_world_int8.tflite")
    glow = activations(model, "--buffer-alignment", "64")
    ok = glow == 128
    print(f"activations hello_world_int8.tflite --buffer-alignment 64: {glow} B"
          + ("" if ok else " FAIL (expected 128)"))
    failures += not ok
    return failures


def check_refused(commands, model, tag, code, reason):
    """Each command refuses `model` with exit `code` and one line on stderr naming the file and
    containing `reason`. Failures counted."""
    failures = 0
    for name, argv in commands(model, tag).items():
        done = subprocess.run(argv, capture_output=True, text=True)
        lines = done.stderr.strip().splitlines()
        ok = done.returncode == code and len(lines) == 1 and model in lines[0] and reason in lines[0]
        print(f"{name} {os.path.basename(model)}: exit {done.returncode}, "
              f"{len(lines)} line(s): {lines[0] if lines else ''}" + ("" if ok else " FAIL"))
        failures += not ok
    return failures


def check_int16_pick(bf, tflm_dir):
    """pick on int16x8 seanet layers (rt1062, Cortex-M7; conv0 on rt685 too, whose HiFi4 DSP
    has NNLib): integer builds only (int16x8, int16x8-cmsis, family int16x8 and CMSIS-NN in the
    JSON; no HiFi4 row, as bundlefit builds no int16x8 HiFi4 bundle); conv0 calls
    arm_convolve_wrapper_s16, whose im2col scratch makes int16x8-cmsis need more RAM;
    conv9 (3x3 over 64 channels: 576 products) stays on bundlefit's kernel and a note says so."""
    import json
    seanet = os.path.join(tflm_dir, "models", "seanet", "conv")
    if not os.path.isdir(seanet):
        print("pick int16x8: seanet absent, not checked")
        return 0
    failures = 0
    for layer, part in (("conv0", "rt1062"), ("conv9", "rt1062"), ("conv0", "rt685")):
        done = subprocess.run([bf, "-q", "pick", os.path.join(seanet, layer + ".tflite"),
                               "--device", part, "--json"], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"pick {layer}.tflite: FAIL {done.stderr.strip()}")
            failures += 1
            continue
        report = json.loads(done.stdout)
        ram = {(c["variant"], c["weights"]): c["ram"] for c in report["candidates"]}
        families = sorted({c["family"] for c in report["candidates"]})
        portable = [n for n in report["notes"] if "stays on bundlefit's kernels" in n]
        variants = sorted({v for v, _ in ram})
        ok = (variants == ["int16x8", "int16x8-cmsis"] and families == ["CMSIS-NN", "int16x8"] and
              any(n.startswith("int16x8 rows:") for n in report["notes"]))
        if layer == "conv0":
            ok = ok and ram[("int16x8-cmsis", "flash")] > ram[("int16x8", "flash")] and not portable
        else:
            ok = (ok and ram[("int16x8-cmsis", "flash")] == ram[("int16x8", "flash")] and
                  len(portable) == 1 and portable[0].startswith("int16x8-cmsis: 1 node") and
                  "576 products" in portable[0])
        print(f"pick {layer}.tflite (int16x8) on {part}: {'ok' if ok else 'FAIL'} "
              f"variants {variants}, "
              f"RAM {ram}, portable notes {portable}")
        failures += not ok
    return failures


def check_int16_hifi4_note(bf, tflm_dir):
    """pick on an int16x8 LEAKY_RELU (no CMSIS-NN s16 function, no NNLib figure) on rt685: only
    int16x8 rows, and no note saying a HiFi4 build equals another (an earlier pick listed
    int16x8-hifi4 rows with the Cortex-M33's portable time, and said "int8-hifi4-cmsis equals
    int8-hifi4: NNLib runs every op of this model" of them)."""
    import json
    model = os.path.join(tflm_dir, "models", "seanet", "leaky_relu", "leaky_relu0.tflite")
    if not os.path.exists(model):
        print("pick int16x8 on rt685: seanet absent, not checked")
        return 0
    done = subprocess.run([bf, "-q", "pick", model, "--device", "rt685", "--json"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"pick leaky_relu0.tflite on rt685: FAIL {done.stderr.strip()}")
        return 1
    report = json.loads(done.stdout)
    variants = sorted({c["variant"] for c in report["candidates"]})
    hifi4 = [n for n in report["notes"] if "hifi4" in n]
    ok = variants == ["int16x8", "int16x8-cmsis"] and not hifi4
    print(f"pick leaky_relu0.tflite (int16x8) on rt685: {'ok' if ok else 'FAIL'} variants "
          f"{variants}, HiFi4 notes {hifi4}")
    return int(not ok)


def check_model_compiler_cmsis(bin_dir, int8_model, work):
    """model-compiler -use-cmsis on a pre-quantized .tflite model builds CMSIS-NN calls: the model is
    int8 as it is read, so -use-cmsis is not dropped with the "the model is float" note a float
    ONNX model gets (glow_command_lines)."""
    out = os.path.join(work, "mc_cmsis")
    done = subprocess.run([os.path.join(bin_dir, "model-compiler"), "-model=" + int8_model,
                           "-emit-bundle=" + out, "-use-cmsis", "-target=arm",
                           "-mcpu=cortex-m7"], capture_output=True, text=True)
    if done.returncode != 0 or shutil.which("arm-none-eabi-nm") is None:
        print(f"model-compiler -use-cmsis hello_world_int8.tflite: FAIL exit {done.returncode} "
              f"{done.stderr.strip()}" if done.returncode else
              "model-compiler -use-cmsis: arm-none-eabi-nm absent, not checked")
        return int(done.returncode != 0)
    objects = [f for f in os.listdir(out) if f.endswith(".o")]
    nm = subprocess.run(["arm-none-eabi-nm", "-u", os.path.join(out, objects[0])],
                        capture_output=True, text=True)
    calls = sorted(set(re.findall(r"\b(arm_\w+)$", nm.stdout, re.M)))
    said = done.stdout + done.stderr
    # The CMSIS-NN build loads the model twice (its reference graph): one status line, not two.
    loaded = said.count("int8 TFLite model:")
    ok = bool(calls) and "model is float" not in said and loaded == 1
    print(f"model-compiler -use-cmsis hello_world_int8.tflite: {'ok' if ok else 'FAIL'} "
          f"CMSIS-NN calls {calls}, load line printed {loaded} time(s)")
    return int(not ok)


def check_int16_variants(bf, tflm_dir, int8_model):
    """fit --variant on an int16x8 model: float is refused naming its int16x8 builds; int8-cmsis
    (the name earlier sessions gave) is taken as int16x8-cmsis; int16x8 on an int8 model is
    refused naming int8; on a HiFi4 part (rt685), int16x8-hifi4 and int16x8-hifi4-cmsis (or their
    int8 names) are refused, in fit and in pick --variants: bundlefit builds no such bundle. Each
    refusal is one line naming the model and the option given (pick's is --variants)."""
    conv0 = os.path.join(tflm_dir, "models", "seanet", "conv", "conv0.tflite")
    if not os.path.exists(conv0):
        print("fit --variant int16x8: seanet absent, not checked")
        return 0
    no_hifi4 = ("bundlefit builds no int16x8 HiFi4 bundle (it generates no HiFi4 code and has "
                "no NNLib figures for int16 operators); the model's builds: int16x8, "
                "int16x8-cmsis")
    cases = [  # command, part, model, --variant(s), exit code, text the one output line must hold
        ("fit", "rt1062", conv0, "float", 2, "the model is int16x8 (int16 activations, int8 "
                                             "weights); it has integer builds only: int16x8, "
                                             "int16x8-cmsis"),
        ("fit", "rt1062", conv0, "int8-cmsis", 0, "variant int16x8-cmsis, weights"),
        ("fit", "rt1062", conv0, "int16x8", 0, "variant int16x8, weights"),
        ("fit", "rt1062", int8_model, "int16x8-cmsis", 2, "the model is not int16x8 (only a "
                                                          "TFLite model with int16 activations "
                                                          "is); use --variant int8-cmsis"),
        ("fit", "rt685", conv0, "int16x8", 0, "variant int16x8, weights"),
        ("fit", "rt685", conv0, "int16x8-hifi4", 2, no_hifi4),
        ("fit", "rt685", conv0, "int16x8-hifi4-cmsis", 2, no_hifi4),
        ("fit", "rt685", conv0, "int8-hifi4", 2, no_hifi4),
        ("pick", "rt685", conv0, "int16x8-hifi4", 2, no_hifi4),
        ("pick", "rt1062", int8_model, "int16x8-cmsis", 2, "the model is not int16x8 (only a "
                                                           "TFLite model with int16 activations "
                                                           "is); use --variants int8-cmsis"),
    ]
    failures = 0
    for command, part, model, variant, code, text in cases:
        option = "--variants" if command == "pick" else "--variant"
        done = subprocess.run([bf, command, model, "--device", part, option, variant],
                              capture_output=True, text=True)
        lines = (done.stdout if code == 0 else done.stderr).strip().splitlines()
        ok = done.returncode == code and any(text in line for line in lines[:3])
        if code:  # one line, naming the model and the option given first, as every error does
            ok = ok and len(lines) == 1 and f"error: {model}: {option} {variant}: " in lines[0]
        print(f"{command} {os.path.basename(model)} on {part} {option} {variant}: "
              f"exit {done.returncode}"
              f"{'' if ok else ' FAIL ' + (lines[0] if lines else '')}")
        failures += not ok
    return failures


def main():
    bin_dir, tflm_dir, work = sys.argv[1:4]
    models = os.path.join(tflm_dir, "models", "hello_world")
    int8 = os.path.join(models, "hello_world_int8.tflite")
    flt = os.path.join(models, "hello_world_float.tflite")
    if not (os.path.exists(int8) and os.path.exists(flt)):
        print(f"SKIP: {models} is absent (../shared/third_party/tflm beside the clone)")
        return SKIP
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    bf = os.path.join(bin_dir, "bundlefit")
    x8 = os.path.join(work, "x8.npy")
    np.save(x8, np.array([[7]], dtype=np.int8))
    cal = os.path.join(work, "cal.npy")
    np.save(cal, np.linspace(0, 6.28, 16, dtype=np.float32).reshape(16, 1))
    broken = os.path.join(work, "truncated.tflite")
    with open(int8, "rb") as f:
        data = f.read()
    with open(broken, "wb") as f:
        f.write(data[:len(data) // 2])

    def commands(model, tag):
        out = os.path.join(work, tag)
        return {
            "inspect": [bf, "-q", "inspect", model],
            "plan": [bf, "-q", "plan", model],
            "fit": [bf, "-q", "fit", model, "--device", "apollo3"],
            "pick": [bf, "-q", "pick", model, "--device", "apollo3"],
            "compile": [bf, "-q", "compile", model, "-o", out + "_bundle"],
            "run": [bf, "-q", "run", model, "--input", x8, "--output-dir", out + "_run"],
            "model-compiler": [os.path.join(bin_dir, "model-compiler"), "-model=" + model,
                               "-emit-bundle=" + out + "_mc"],
        }

    failures = 0
    for name, argv in commands(int8, "int8").items():
        done = subprocess.run(argv, capture_output=True, text=True)
        ok = done.returncode == 0
        if name == "run" and ok:
            outs = os.listdir(os.path.join(work, "int8_run"))
            ok = len(outs) == 1 and np.load(os.path.join(work, "int8_run", outs[0])).dtype == np.int8
        print(f"{name} hello_world_int8.tflite: {'ok' if ok else 'FAIL ' + done.stderr.strip()}")
        failures += not ok
    profile = os.path.join(work, "hw.yaml")
    done = subprocess.run([bf, "-q", "profile", flt, cal, "-o", profile], capture_output=True,
                          text=True)
    ok = done.returncode == 0 and os.path.exists(profile)
    print(f"profile hello_world_float.tflite: {'ok' if ok else 'FAIL ' + done.stderr.strip()}")
    failures += not ok
    failures += check_refused(commands, broken, "broken", 4, "flatbuffers verifier rejects it")
    failures += check_python(bin_dir, bf, int8, x8)
    failures += check_buffer_alignment(bin_dir, bf, int8, work)
    failures += check_model_compiler_cmsis(bin_dir, int8, work)
    # TFLM's int8 mnist_lstm: its integer LSTM (one TfliteLstm node) is taken by every command.
    lstm_int8 = os.path.join(tflm_dir, "models", "mnist_lstm", "trained_lstm_int8.tflite")
    for name, argv in commands(lstm_int8, "lstm_int8").items():
        if name == "run":  # hello_world's input; tflite_vs_tflm runs it
            continue
        done = subprocess.run(argv, capture_output=True, text=True)
        ok = done.returncode == 0
        print(f"{name} trained_lstm_int8.tflite: {'ok' if ok else 'FAIL ' + done.stderr.strip()}")
        failures += not ok
    failures += check_activations_vs_tflm(bf, tflm_dir)
    failures += check_int16_pick(bf, tflm_dir)
    failures += check_int16_hifi4_note(bf, tflm_dir)
    failures += check_int16_variants(bf, tflm_dir, int8)
    print(f"{'FAIL' if failures else 'OK'}: {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
