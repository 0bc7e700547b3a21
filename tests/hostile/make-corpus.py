#!/usr/bin/env python3
"""Writes the hostile-input corpus of issues 16 and 36 into OUT_DIR/<kind>/.

Every file here once crashed bundlefit, made it print an internal error, or
gave a plausible wrong answer. fuzz/run-fuzzers.sh replays them through the
sanitizer-built fuzz targets; tests/badinput checks the tool's exit codes and
messages for the same cases. ONNX files are encoded by hand (protobuf wire
format) so the script needs nothing but python3.

Usage: make-corpus.py OUT_DIR [DEVICE_JSON]
"""
import json
import os
import struct
import sys

# --- protobuf wire format -------------------------------------------------


def varint(value):
    value &= (1 << 64) - 1  # negative int64 as two's complement
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field_varint(number, value):
    return varint(number << 3) + varint(value)


def field_bytes(number, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(number << 3 | 2) + varint(len(payload)) + payload


# --- ONNX messages (field numbers from onnx.proto) --------------------------

FLOAT, INT64 = 1, 7


def tensor(name, dims, data_type, raw=b"", int64s=()):
    out = b"".join(field_varint(1, d) for d in dims) + field_varint(2, data_type)
    out += b"".join(field_varint(7, v) for v in int64s)
    out += field_bytes(8, name)
    if raw or not int64s:
        out += field_bytes(9, raw)
    return out


def value_info(name, dims, elem_type=None):
    shape = b"".join(field_bytes(1, field_varint(1, d)) for d in dims)
    tensor_type = field_varint(1, elem_type or FLOAT) + field_bytes(2, shape)
    return field_bytes(1, name) + field_bytes(2, field_bytes(1, tensor_type))


def attr_int(name, value):
    return field_bytes(1, name) + field_varint(3, value) + field_varint(20, 2)  # type INT


def node(op, inputs, outputs, name, attributes=()):
    out = b"".join(field_bytes(1, i) for i in inputs)
    out += b"".join(field_bytes(2, o) for o in outputs)
    out += field_bytes(3, name) + field_bytes(4, op)
    return out + b"".join(field_bytes(5, a) for a in attributes)


def model(nodes, inputs=(), outputs=(), initializers=()):
    graph = b"".join(field_bytes(1, n) for n in nodes) + field_bytes(2, "hostile")
    graph += b"".join(field_bytes(5, t) for t in initializers)
    graph += b"".join(field_bytes(11, value_info(n, d)) for n, d in inputs)
    graph += b"".join(field_bytes(12, field_bytes(1, n)) for n in outputs)
    return field_varint(1, 8) + field_bytes(8, field_varint(2, 13)) + field_bytes(7, graph)


def relu_model(input_dims, initializers=()):
    return model([node("Relu", ["x"], ["y"], "relu")], [("x", input_dims)], ["y"], initializers)


def onnx_cases():
    big = 1 << 31
    yield "constantofshape-2p31x2p31.onnx", model(
        [node("ConstantOfShape", ["shape"], ["filled"], "huge_fill")], outputs=["filled"],
        initializers=[tensor("shape", [2], INT64, int64s=[big, big])])
    yield "slice-step-minus-2p62.onnx", model(
        [node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"], "far_step")],
        [("x", [1, 8])], ["y"],
        [tensor("starts", [1], INT64, int64s=[7]), tensor("ends", [1], INT64, int64s=[-(1 << 63)]),
         tensor("axes", [1], INT64, int64s=[1]), tensor("steps", [1], INT64, int64s=[-(1 << 62)])])
    yield "input-int64max-by-2.onnx", relu_model([(1 << 63) - 1, 2])
    yield "initializer-2p62-floats-no-data.onnx", relu_model(
        [1, 4], [tensor("w", [1 << 62], FLOAT)])
    yield "initializer-2p40-floats-4-bytes.onnx", relu_model(
        [1, 4], [tensor("w", [1 << 40], FLOAT, raw=struct.pack("<f", 1.0))])
    yield "initializer-2gib-4-bytes.onnx", relu_model(
        [1, 4], [tensor("w", [1 << 29], FLOAT, raw=struct.pack("<f", 1.0))])
    # Issue 36: memory bombs (refused by the memory budget, --max-memory 1G
    # in check-corpus.sh), Range's undefined cases, MAC totals past 2^64.
    hidden = 2
    yield "lstm-batch-2p30.onnx", model(
        [node("LSTM", ["x", "w", "r"], ["y"], "bomb", [attr_int("hidden_size", hidden)])],
        [("x", [1, 1 << 30, 1])], ["y"],
        [tensor("w", [1, 4 * hidden, 1], FLOAT, raw=b"\0" * 4 * 4 * hidden),
         tensor("r", [1, 4 * hidden, hidden], FLOAT, raw=b"\0" * 4 * 4 * hidden * hidden)])
    yield "constantofshape-2p28-add.onnx", model(
        [node("ConstantOfShape", ["shape"], ["zeros"], "fill"),
         node("Add", ["zeros", "zeros"], ["sum"], "twice")], outputs=["sum"],
        initializers=[tensor("shape", [1], INT64, int64s=[1 << 28])])

    def int64_range(name, start, limit, delta):
        return model([node("Range", ["start", "limit", "delta"], ["y"], name)], outputs=["y"],
                     initializers=[tensor("start", [], INT64, int64s=[start]),
                                   tensor("limit", [], INT64, int64s=[limit]),
                                   tensor("delta", [], INT64, int64s=[delta])])
    yield "range-int64-to-2p31.onnx", int64_range("count", 0, 1 << 31, 1)
    yield "range-int64-2p64-elements.onnx", int64_range("wide", -(1 << 63), (1 << 63) - 1, 1)
    yield "range-int64-min-one-element.onnx", int64_range("one", 0, -(1 << 63), -(1 << 63))

    def float_range(name, start, limit, delta):
        return model([node("Range", ["start", "limit", "delta"], ["y"], name)], outputs=["y"],
                     initializers=[tensor("start", [], FLOAT, raw=struct.pack("<f", start)),
                                   tensor("limit", [], FLOAT, raw=struct.pack("<f", limit)),
                                   tensor("delta", [], FLOAT, raw=struct.pack("<f", delta))])
    yield "range-float-inf.onnx", float_range("endless", 0.0, float("inf"), 1.0)
    yield "range-float-nan.onnx", float_range("unknown", 0.0, float("nan"), 1.0)
    yield "range-float-1e30-steps.onnx", float_range("far", -1e30, 1e30, 1e-30)
    # 1,025 MatMuls of 2^54 MACs each: the total wrapped to 2^54.
    yield "matmuls-1025-of-2p54-macs.onnx", model(
        [node("MatMul", ["a", "b"], ["y%d" % i], "mm%d" % i) for i in range(1025)],
        [("a", [1 << 16, 1 << 20]), ("b", [1 << 20, 1 << 18])],
        ["y%d" % i for i in range(1025)])
    # Latin-1 names (not UTF-8) in the node and tensors: a valid model.
    yield "latin1-names.onnx", model(
        [node("Relu", [b"caf\xe9_in"], [b"caf\xe9_out"], b"caf\xe9")],
        [(b"caf\xe9_in", [1, 4])], [b"caf\xe9_out"])


# --- .npy -------------------------------------------------------------------


def npy(shape_text, data=b"\0" * 16):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape_text
    header = header.ljust(128 - 10 - 1) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + data


def npy_cases():
    yield "negative-dim.npy", npy("(1, -4)")
    yield "word-dim.npy", npy("(1, four)")
    yield "huge-dim.npy", npy("(4611686018427387904, 4)")
    yield "overflowing-dims.npy", npy("(4294967296, 4294967296, 4)")
    yield "truncated-data.npy", npy("(1, 1024)")
    yield "flat-784.npy", npy("(784,)", b"\0" * 784 * 4)  # not LeNet's [1,1,28,28]


# --- plan-buffers -------------------------------------------------------------


def plan_buffer_cases():
    yield "lifetime-past-2p31.csv", "id,lower,upper,size\n0,0,%d,64\n1,1,2,64\n" % ((1 << 31) + 5)
    yield "negative-size.csv", "id,lower,upper,size\n0,0,2,-100\n"
    yield "two-int64max-buffers.csv", "id,lower,upper,size\n0,0,2,%d\n1,0,2,%d\n" % (
        (1 << 63) - 1, (1 << 63) - 1)
    yield "size-2p64.csv", "id,lower,upper,size\n0,0,2,18446744073709551616\n"
    yield "negative-lifetime.csv", "id,lower,upper,size\n0,5,-3,64\n"


# --- device files -------------------------------------------------------------


def device_cases(base_path):
    if not base_path or not os.path.exists(base_path):
        return
    with open(base_path) as f:
        base = json.load(f)
    base["id"] = "hostile"
    base.pop("aliases", None)
    marker = 123456789012345

    def mutate(path, number):
        doc = json.loads(json.dumps(base))
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = marker
        return json.dumps(doc, indent=2).replace(str(marker), number)

    clash = json.loads(json.dumps(base))
    clash["id"] = "rt1062"  # a built-in part's id (issue 36: silently replaced it)
    yield "id-of-a-built-in-part.json", json.dumps(clash, indent=2)
    yield "region-size-2p64.json", mutate(["memory", 0, "size"], "18446744073709551616")
    yield "region-size-1.5e300.json", mutate(["memory", 0, "size"], "1.5e300")
    yield "region-size-1e999.json", mutate(["memory", 0, "size"], "1e999")
    yield "sdk-ram-2p64-minus-1.json", mutate(["sdk_baseline", "ram"], "18446744073709551615")
    if "flexram" in base:
        yield "flexram-4096-banks.json", mutate(["flexram", "banks"], "4096")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    device = sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "device_db/parts/rt1062.json")
    kinds = {"onnx": onnx_cases(), "npy": npy_cases(), "plan-buffers": plan_buffer_cases(),
             "device": device_cases(device)}
    count = 0
    for kind, cases in kinds.items():
        os.makedirs(os.path.join(out, kind), exist_ok=True)
        for name, content in cases:
            mode = "wb" if isinstance(content, bytes) else "w"
            with open(os.path.join(out, kind, name), mode) as f:
                f.write(content)
            count += 1
    print("wrote %d hostile inputs under %s" % (count, out))


if __name__ == "__main__":
    main()
