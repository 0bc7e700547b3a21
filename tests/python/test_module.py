#!/usr/bin/python3
"""`import bundlefit` against the command line, on a model built in memory.

A small CNN made with onnx.helper goes to the module as bytes and to the CLI
as a file; plan, fit, pick and compile must give the CLI's JSON, field for
field (fit reading the code size the CLI cached), and errors bundlefit.Error
with the CLI's exit code and category.

Usage: test_module.py BUILD_PYTHON_DIR BUNDLEFIT_EXE
Exit 77 (a ctest skip) when the module was not built (no pybind11-dev).
"""
import concurrent.futures
import json
import os
import sys
import tempfile

from module_support import SKIP, check, cli, cli_json, module_and_cli, tiny_cnn, without


def main():
    bundlefit, exe = module_and_cli(__doc__)
    if bundlefit is None:
        return SKIP

    work = tempfile.mkdtemp(prefix="bundlefit-pytest-")
    os.environ["BUNDLEFIT_CACHE_DIR"] = os.path.join(work, "cache")  # a fresh code-size cache
    data = tiny_cnn().SerializeToString()
    path = os.path.join(work, "tiny.onnx")
    with open(path, "wb") as f:
        f.write(data)
    model = bundlefit.load(data, name="tiny.onnx")
    check(model.name == "tiny.onnx" and os.path.basename(model.path) == "tiny.onnx", repr(model))

    # plan: the CLI's bundlefit.memory/1 report, hash included.
    py_plan, cli_plan = bundlefit.plan(model), cli_json(exe, "plan", path)
    check(py_plan["model_sha256"] == cli_plan["model_sha256"], "plan: model hash differs")
    check(py_plan == cli_plan, "plan: reports differ")
    print(f"plan: equal to the CLI's (activations lower bound {py_plan['activations_lower_bound']:,})")

    # fit, by default: the CLI's report field for field, its code size from the cache the
    # CLI just wrote (one code identity for both).
    cli_fit = cli_json(exe, "fit", path, "--device", "rt1060")
    exact = bundlefit.fit(path, device="rt1060")
    check(exact["code"]["cached"] is True, f"fit did not read the code size the CLI cached: {exact['code']}")
    check(without(exact, ("code", "cached")) == without(cli_fit, ("code", "cached")),
          "fit() differs from `bundlefit fit --json`:\n"
          f"{json.dumps(exact)[:2000]}\n{json.dumps(cli_fit)[:2000]}")
    check(exact["code"]["source"] == "compiled" and exact["code"]["text"] > 0, f"{exact['code']}")
    print(f"fit: equal to the CLI's, its code size read from the CLI's cache (code "
          f"{exact['bundle']['code']:,}, {'fits' if exact['fits'] else 'does not fit'})")

    # A model that does not fit is an answer, not an error.
    small = bundlefit.fit(path, device="lpc55s69")
    cli_small = cli_json(exe, "fit", path, "--device", "lpc55s69")
    check(small["fits"] == cli_small["fits"], "lpc55s69 verdicts differ")
    # A sweep turns the suggestions off: suggestions=False is --no-suggestions, suggest_parts
    # is --suggest-parts. This one's 2.6 MB of float weights do not fit the part's 640 KB.
    path = os.path.join(work, "wide.onnx")
    with open(path, "wb") as f:
        f.write(tiny_cnn(channels=64, size=64).SerializeToString())
    for kwargs, flags in (({"suggestions": False}, ["--no-suggestions"]),
                          ({"suggest_parts": ["rt1062"]}, ["--suggest-parts", "rt1062"])):
        py_fit = bundlefit.fit(path, device="lpc55s69", **kwargs)
        cli_fit = cli_json(exe, "fit", path, "--device", "lpc55s69", *flags,
                           expect=0 if py_fit["fits"] else 3)
        check(without(py_fit, ("code", "cached")) == without(cli_fit, ("code", "cached")),
              f"fit({kwargs}) differs from `bundlefit fit {' '.join(flags)}`")
        check(not py_fit["fits"], "the wide model should not fit lpc55s69")
        check((py_fit["suggestions"] == []) == ("suggestions" in kwargs),
              f"fit({kwargs}) suggestions: {py_fit['suggestions']}")
    path = os.path.join(work, "tiny.onnx")

    # pick: the CLI's comparison, candidate for candidate (the same builds, compiled for the core).
    py_pick = bundlefit.pick(path, device="lpc55s69", variants=["float", "int8", "int8-cmsis"])
    cli_pick = cli_json(exe, "pick", path, "--device", "lpc55s69", "--variants", "float,int8,int8-cmsis",
                        expect=0 if py_pick["best"] is not None else 3)
    check(py_pick == cli_pick, "pick differs from `bundlefit pick --json`:\n"
          f"{json.dumps(py_pick)[:2000]}\n{json.dumps(cli_pick)[:2000]}")
    check(len(py_pick["candidates"]) == 6, f"pick: {len(py_pick['candidates'])} candidates, expected 3 x 2")
    best = py_pick["candidates"][py_pick["best"]] if py_pick["best"] is not None else None
    print(f"pick: equal to the CLI's ({len(py_pick['candidates'])} candidates, best "
          f"{best['variant'] + ' weights ' + best['weights'] if best else 'none'})")

    # compile: the bundle's memory.json, as `bundlefit compile --json` prints it.
    py_bundle = bundlefit.compile(model, os.path.join(work, "py_bundle"))
    cli_bundle = cli_json(exe, "compile", path, "-o", os.path.join(work, "cli_bundle"))
    check(os.path.exists(os.path.join(work, "py_bundle", "tiny.o")), "compile wrote no tiny.o")
    check(py_bundle == cli_bundle, "compile reports differ")
    print("compile: equal to the CLI's")

    # Errors carry the CLI's exit code and category, and name what is at fault.
    for call, code, category, named in [
        (lambda: bundlefit.fit(bundlefit.load(b"not a model", name="junk.onnx"), device="rt1060"),
         4, "bad_input_file", "junk.onnx"),
        (lambda: bundlefit.load(os.path.join(work, "missing.onnx")), 4, "bad_input_file", "missing.onnx"),
        (lambda: bundlefit.fit(model, device="rt9999"), 2, "usage", "rt9999"),
    ]:
        try:
            call()
        except bundlefit.Error as e:
            check((e.exit_code, e.category) == (code, category), f"{e}: {e.exit_code} {e.category}")
            check(named in str(e), f"error does not name {named}: {e}")
            cli_code = cli(exe, "fit", os.path.join(work, named), "--device", "rt1060")[0] \
                if code == 4 else cli(exe, "fit", path, "--device", "rt9999")[0]
            check(cli_code == code, f"CLI exit {cli_code} for {named}, module {code}")
        else:
            raise AssertionError(f"no bundlefit.Error for {named}")
    print("errors: bundlefit.Error with the CLI's exit codes")

    # Arguments out of range are usage errors naming the argument (issue 36):
    # static_bytes=2**64-12000 once wrapped the RAM total into a fit.
    for call, named in [
        (lambda: bundlefit.fit(model, device="lpc55s69", static_bytes=2**64 - 12000), "static_bytes"),
        (lambda: bundlefit.pick(model, device="lpc55s69", app_ram=2**64 - 12000), "app_ram"),
        (lambda: bundlefit.fit(model, device="lpc55s69", reserve_ram=str(2**64 - 12000)), "reserve_ram"),
        (lambda: bundlefit.plan(model, memory_opt=99), "memory_opt"),
        (lambda: bundlefit.plan(model, time_limit=-5), "time_limit"),
        (lambda: bundlefit.plan(model, time_limit=float("nan")), "time_limit"),
        (lambda: bundlefit.plan(path + "\0.evil"), "model"),
        (lambda: bundlefit.compile(model, os.path.join(work, "out\0dir")), "output_dir"),
        (lambda: bundlefit.fit(model, device="rt1060", device_files=["a\0b.json"]), "device_files"),
    ]:
        try:
            call()
        except bundlefit.Error as e:
            check(e.exit_code == 2 and named in str(e), f"{named}: {e} (exit {e.exit_code})")
        else:
            raise AssertionError(f"no bundlefit.Error for {named}")
    print("arguments: out-of-range values and NUL bytes refused, naming the argument")

    # A refused build names the keyword given, never the command line's option.
    for call, named in [
        (lambda: bundlefit.fit(model, device="lpc55s69", variant="int16x8"), "variant int16x8: "),
        (lambda: bundlefit.pick(model, device="lpc55s69", variants=["int16x8"]), "variants int16x8: "),
    ]:
        try:
            call()
        except bundlefit.Error as e:
            check(e.exit_code == 2 and named in str(e) and "--" not in str(e),
                  f"{named}: {e} (exit {e.exit_code})")
        else:
            raise AssertionError(f"no bundlefit.Error for {named}")
    print("variants: a refused build names the Python keyword")

    # Threads: the GIL is released, the driver is thread-safe; same answers.
    sizes = [(4, 16), (8, 16), (8, 24), (16, 24)]
    models = [bundlefit.load(tiny_cnn(c, s).SerializeToString(), name=f"tiny_{c}_{s}.onnx") for c, s in sizes]
    serial = [bundlefit.fit(m, device="rt1060") for m in models]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        threaded = list(pool.map(lambda m: bundlefit.fit(m, device="rt1060"), models))
    # The serial fits compiled and cached the code sizes the threaded ones read.
    check([without(r, ("code", "cached")) for r in serial] == [without(r, ("code", "cached")) for r in threaded],
          "fits on two threads differ from serial ones")
    check(len({r["bundle"]["activations"] for r in serial}) > 1, "the candidates should differ")
    print(f"threads: {len(models)} fits on 2 threads equal the serial ones")
    return 0


if __name__ == "__main__":
    sys.exit(main())
