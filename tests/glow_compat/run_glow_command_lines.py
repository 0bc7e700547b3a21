#!/usr/bin/python3
"""Runs every command line of glow_command_lines.txt as written.

The list holds the command lines of Glow's AOT document and NXP's AN13001
(see its header for the line format). Each runs through the shell in one
scratch directory, with the build's model-compiler, model-profiler and
image-classifier first on PATH, against small models written under the
documents' names. A plain line must exit 0, and a model-compiler line must
leave <net>.o, <net>.h, <net>.weights.bin and <net>.weights.txt in its
-emit-bundle directory; a `!N "text"` line must exit N and print text.

Usage: run_glow_command_lines.py LIST BIN_DIR MODELS_DIR WORK_DIR
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MODEL_COMPILER_BASE = "-backend=CPU -model=lenet_mnist -emit-bundle=build"
PLACEHOLDERS = {
    "<model-path>": "lenet_mnist",
    "<onnx-model-path>": "lenet_mnist",
    "<caffe2-model-path>": "caffe2_model",
    "<bundle-dir>": "bundle",
    "<network-name>": "mb2",
    "<mode>": "pic",
    "<symbol_name1>,<symbol_value1>": "unk__286,1",
    "<inputName1>,<inputType1>,<inputShape1>": "data,float,[1,1,28,28]",
}


def classifier(path, input_name, shape, batch_param=None):
    """Global average pool, a 10-way Gemm and Softmax over `shape`."""
    rng = np.random.default_rng(zlib.crc32(path.encode()))
    channels = shape[1]
    w = rng.standard_normal((10, channels)).astype(np.float32)
    b = rng.standard_normal(10).astype(np.float32)
    dims = list(shape)
    if batch_param:
        dims[0] = batch_param
    graph = helper.make_graph(
        [helper.make_node("GlobalAveragePool", [input_name], ["pooled"]),
         helper.make_node("Flatten", ["pooled"], ["flat"]),
         helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], transB=1),
         helper.make_node("Softmax", ["logits"], ["softmax"], axis=1)],
        "classifier",
        [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("softmax", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "fc_w"), numpy_helper.from_array(b, "fc_b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)


def write_png(path, width, height, channels, seed):
    """A minimal PNG (zlib stream of unfiltered rows) of random pixels."""
    import struct
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, (height, width * channels), dtype=np.uint8)
    raw = b"".join(b"\0" + row.tobytes() for row in pixels)

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xffffffff)
    color = {1: 0, 3: 2}[channels]
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, color, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw)))
        f.write(chunk(b"IEND", b""))


def make_file(name, kind, models_dir, png_kinds):
    if os.path.isdir(name):
        shutil.rmtree(name)
    elif os.path.exists(name):
        os.remove(name)
    if kind == "lenet":
        shutil.copy(os.path.join(models_dir, "lenet.onnx"), name)
    elif kind == "resnet":
        classifier(name, "gpu_0/data", [1, 3, 224, 224])
    elif kind == "mobilenet":
        classifier(name, "input", [1, 3, 128, 128])
    elif kind == "mobilenet-symbolic":
        classifier(name, "input", [1, 3, 128, 128], batch_param="unk__286")
    elif kind == "caffe2-dir":
        os.makedirs(name)
        for part in ("init_net.pb", "predict_net.pb"):
            open(os.path.join(name, part), "wb").close()
    elif kind == "png-rgb-224":
        write_png(name, 224, 224, 3, zlib.crc32(name.encode()))
    elif kind == "png-grey-28":
        write_png(name, 28, 28, 1, zlib.crc32(name.encode()))
    elif kind == "rawbin-lenet":
        os.makedirs(name)
        rng = np.random.default_rng(7)
        for i in range(4):
            rng.random((1, 1, 28, 28), dtype=np.float32).tofile(os.path.join(name, "%d.bin" % i))
    else:
        sys.exit("unknown @file kind " + kind)
    if kind.startswith("png"):
        png_kinds.setdefault(kind, []).append(name)


def expand(line, png_kinds):
    for key, value in PLACEHOLDERS.items():
        line = line.replace(key, value)
    words = line.split()
    if words[0] == "model-compiler" and "..." in words:
        line = line.replace(" ...", " " + MODEL_COMPILER_BASE, 1)
    elif words[0] == "image-classifier" and "..." in words:
        first = words[1]
        kind = next(k for k, names in png_kinds.items() if first in names)
        others = [n for n in png_kinds[kind] if n != first]
        line = line.replace(" ...", "".join(" " + n for n in others), 1)
    return line


def bundle_files(command):
    args = shlex.split(command)
    options = dict(a[1:].split("=", 1) for a in args[1:] if a.startswith("-") and "=" in a)
    out = options.get("emit-bundle")
    if not out:
        return []
    net = options.get("network-name")
    if not net:
        net = re.sub(r"[^A-Za-z0-9_]", "_", os.path.splitext(os.path.basename(options["model"]))[0])
    return [os.path.join(out, net + ext) for ext in (".o", ".h", ".weights.bin", ".weights.txt")]


def main():
    list_path, bin_dir, models_dir, work = (os.path.abspath(a) for a in sys.argv[1:5])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.chdir(work)
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"])
    png_kinds = {}
    failures, ran = [], 0
    for number, raw in enumerate(open(list_path), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@file "):
            _, name, kind = line.split()
            make_file(name, kind, models_dir, png_kinds)
            continue
        expect_code, expect_text = 0, None
        match = re.match(r'!(\d+) "([^"]*)" (.*)', line)
        if match:
            expect_code, expect_text, line = int(match.group(1)), match.group(2), match.group(3)
        command = expand(line, png_kinds)
        for path in bundle_files(command):
            if os.path.exists(path):
                os.remove(path)
        p = subprocess.run(command, shell=True, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=300)
        ran += 1
        problem = None
        if p.returncode != expect_code:
            problem = "exit %d, expected %d" % (p.returncode, expect_code)
        elif expect_text and expect_text not in p.stdout:
            problem = "output lacks %r" % expect_text
        elif expect_code == 0 and command.startswith("model-compiler"):
            missing = [f for f in bundle_files(command) if not os.path.isfile(f)]
            if missing:
                problem = "missing " + ", ".join(missing)
        status = "FAIL" if problem else "ok"
        print("%s line %d: %s" % (status, number, raw.strip()))
        if problem:
            failures.append("line %d: %s\n  $ %s\n  %s\n%s" % (number, problem, command, problem,
                                                               p.stdout.strip()))
    print("%d command lines, %d failed" % (ran, len(failures)))
    if failures:
        sys.exit("\n".join(failures))


if __name__ == "__main__":
    main()
