#!/usr/bin/python3
"""Sanity checks for the reference model zoo built by make_models.py.

onnx 1.12 (Debian) has no onnx.reference, so this does not execute the ONNX
files. It checks the generator itself:
  * onnx.checker + strict shape inference, static shapes for every tensor,
    unique node names (make_models.validate);
  * parameter counts against published / known figures (table below);
  * LeNet: exactly 8 initializers, 64-aligned weight bytes == 1,724,608;
  * outputs of the builder's eager numpy evaluation are finite and the softmax
    outputs are not saturated (sanity of the weight/BN scaling only);
  * branchy: the node order stored in the file has a clearly higher peak live
    memory than the best order (exhaustive DP over schedules);
  * with --dir DIR: the files in DIR are byte-identical to a fresh build
    (i.e. the generator is deterministic / the files are up to date).
Exit status is non-zero on any failure.

    /usr/bin/python3 tests/models/check_models.py [--dir DIR]
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models as mm  # noqa: E402

# name -> (description of the reference figure, lo, hi, which count)
# "total": every initializer element (incl. BN running mean/var, Keras' "Total params")
# "trainable": total minus BN running mean/var and the two Clip bounds
#              (PyTorch's sum(p.numel() for p in model.parameters()))
REFERENCE = {
    "lenet": ("Caffe LeNet: 520+25,050+400,500+5,010", 431_080, 431_080, "total"),
    "resnet8": ("MLPerf Tiny ResNet-8 ~78k (+-2%)", 78_000 * 0.98, 78_000 * 1.02, "total"),
    "ds_cnn": ("MLPerf Tiny DS-CNN small 24k-38.6k", 24_000, 38_600, "total"),
    "mobilenet_v1_025": ("MobileNetV1 0.25 96x96 2-class 0.20-0.22M", 200_000, 220_000, "total"),
    "autoencoder": ("MLPerf Tiny AD FC-AE ~0.27M (+-1%)", 270_000 * 0.99, 270_000 * 1.01, "total"),
    "mobilenet_v2": ("torchvision mobilenet_v2 3,504,872", 3_504_872, 3_504_872, "trainable"),
    "branchy": ("(none; synthetic)", 0, float("inf"), "total"),
    "efficientnet_b0_tiny": ("(none; width 0.25, 64x64, 10 classes)", 0, float("inf"), "total"),
    "mobilenet_v3_small_tiny": ("(none; width 0.25, 64x64, 10 classes)", 0, float("inf"), "total"),
    "efficientnet_b0": ("torchvision efficientnet_b0 5,288,548", 5_288_548, 5_288_548, "trainable"),
    "mobilenet_v3_small": ("torchvision mobilenet_v3_small 2,542,856", 2_542_856, 2_542_856,
                           "trainable"),
    "mnasnet1_0": ("torchvision mnasnet1_0 4,383,312", 4_383_312, 4_383_312, "trainable"),
    "mobilenet_v3_large": ("torchvision mobilenet_v3_large 5,483,032", 5_483_032, 5_483_032,
                           "trainable"),
    "resnet18": ("torchvision resnet18 11,689,512", 11_689_512, 11_689_512, "trainable"),
    "squeezenet1_1": ("torchvision squeezenet1_1 1,235,496", 1_235_496, 1_235_496, "trainable"),
}

DTYPE_BYTES = {onnx.TensorProto.FLOAT: 4, onnx.TensorProto.INT64: 8}


def counts(model):
    total = mm.param_count(model)
    running = 0
    for n in model.graph.node:
        if n.op_type == "BatchNormalization":
            init = {t.name: t for t in model.graph.initializer}
            running += sum(int(np.prod(init[i].dims)) for i in n.input[3:5])
    clip = sum(1 for t in model.graph.initializer if t.name in ("relu6_min", "relu6_max"))
    return total, total - running - clip


# ----------------------------------------------------------------------------
# live-memory model: a tensor lives from its producer's step to its last
# consumer's step (inclusive); graph inputs live from the start, graph outputs
# to the end; initializers and Constant-node outputs are not counted.
# ----------------------------------------------------------------------------
def tensor_sizes(model):
    inf = onnx.shape_inference.infer_shapes(model)
    sizes = {}
    for vi in list(inf.graph.input) + list(inf.graph.value_info) + list(inf.graph.output):
        tt = vi.type.tensor_type
        sizes[vi.name] = int(np.prod([d.dim_value for d in tt.shape.dim])) * DTYPE_BYTES[tt.elem_type]
    return sizes


class LiveGraph:
    def __init__(self, model):
        g = model.graph
        self.sizes = tensor_sizes(model)
        consts = {t.name for t in g.initializer}
        consts |= {o for n in g.node if n.op_type == "Constant" for o in n.output}
        self.nodes = [n.name for n in g.node]
        self.idx = {n: i for i, n in enumerate(self.nodes)}
        self.ins = [[t for t in n.input if t and t not in consts] for n in g.node]
        self.outs = [[t for t in n.output if t not in consts] for n in g.node]
        self.producer = {t: i for i, o in enumerate(self.outs) for t in o}
        self.consumers = {}
        for i, ts in enumerate(self.ins):
            for t in ts:
                self.consumers.setdefault(t, set()).add(i)
        self.graph_inputs = [i.name for i in g.input if i.name not in consts]
        self.graph_outputs = {o.name for o in g.output}
        self.preds = [{self.producer[t] for t in ts if t in self.producer} for ts in self.ins]

    def step_live(self, done, i):
        """Bytes live while node i runs, given the set `done` of nodes already run."""
        live = 0
        cand = list(self.graph_inputs) + [t for j in done for t in self.outs[j]] + self.outs[i]
        for t in set(cand):
            cons = self.consumers.get(t, set())
            if t in self.outs[i] or t in self.graph_outputs or not cons <= done:
                live += self.sizes[t]
        return live

    def peak(self, order):
        done, peak = set(), 0
        for name in order:
            i = self.idx[name]
            assert self.preds[i] <= done, f"order is not topological at {name}"
            peak = max(peak, self.step_live(done, i))
            done.add(i)
        return peak

    def best_order(self):
        """Exact minimum-peak schedule by DP over the sets of already-run nodes."""
        n = len(self.nodes)
        best = {frozenset(): (0, [])}
        for _ in range(n):
            nxt = {}
            for done, (pk, order) in best.items():
                for i in range(n):
                    if i in done or not self.preds[i] <= done:
                        continue
                    p = max(pk, self.step_live(done, i))
                    key = done | {i}
                    if key not in nxt or p < nxt[key][0]:
                        nxt[key] = (p, order + [self.nodes[i]])
            best = nxt
        (pk, order), = best.values()
        return pk, order


def main(argv=None):
    ap = argparse.ArgumentParser(description="sanity checks for tests/models")
    ap.add_argument("--dir", help="also check that DIR/<name>.onnx/.input.npy equal a fresh build")
    args = ap.parse_args(argv)
    failures = []

    def fail(msg):
        failures.append(msg)
        print("FAIL:", msg)

    print(f"{'model':18s} {'nodes':>5s} {'params':>9s} {'trainable':>9s}  {'reference':44s} result")
    built = {}
    for name in mm.MODELS:
        try:
            b, model = mm.build(name)  # checker, strict shape inference, names, lenet sum
        except Exception as e:  # noqa: BLE001
            fail(f"{name}: build/validate: {e}")
            continue
        built[name] = (b, model)
        total, trainable = counts(model)
        desc, lo, hi, which = REFERENCE[name]
        got = total if which == "total" else trainable
        ok = lo <= got <= hi
        print(f"{name:18s} {len(model.graph.node):5d} {total:9d} {trainable:9d}  {desc:44s} "
              f"{'ok' if ok else 'MISMATCH'} ({which})")
        if not ok:
            fail(f"{name}: {which} params {got} outside [{lo:.0f}, {hi:.0f}]")

        # eager-evaluation sanity (weights/BN scaling)
        for nd in model.graph.node:
            v = b.v(nd.output[0])
            if v.dtype == np.float32 and not np.all(np.isfinite(v)):
                fail(f"{name}: non-finite values in {nd.output[0]}")
        out = b.v(b.outputs[0])[0]
        if model.graph.node[-1].op_type == "Softmax":
            if not (out.max() < 0.99 and out.min() > 1e-6):
                fail(f"{name}: softmax saturated (max {out.max():.4f}, min {out.min():.2e})")
            msg = f"softmax max {out.max():.3f} min {out.min():.2e}"
        else:
            msg = f"output std {out.std():.3f} max|.| {np.abs(out).max():.3f}"
        print(f"{'':18s} eager output: {msg}")

        if args.dir:
            p = os.path.join(args.dir, name + ".onnx")
            if not os.path.exists(p):
                if name not in mm.BENCH_ONLY:  # those only when bench/memory is built
                    fail(f"{name}: {p} missing")
            else:
                with open(p, "rb") as f:
                    if f.read() != model.SerializeToString():
                        fail(f"{name}: {p} differs from a fresh build")
                x = np.load(os.path.join(args.dir, name + ".input.npy"))
                shp = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
                if x.dtype != np.float32 or list(x.shape) != shp or not np.array_equal(x, b.input_value):
                    fail(f"{name}: input.npy wrong dtype/shape/content")

    if "lenet" in built:
        inits = built["lenet"][1].graph.initializer
        parts = [(t.name, numpy_helper.to_array(t).nbytes) for t in inits]
        s = sum(mm.align(n) for _, n in parts)
        print("lenet 64-aligned weights: " + " + ".join(f"{mm.align(n)}" for _, n in parts) + f" = {s}")
        if s != mm.LENET_ALIGNED_WEIGHT_BYTES:
            fail(f"lenet aligned weight bytes {s} != {mm.LENET_ALIGNED_WEIGHT_BYTES}")

    if "branchy" in built:
        lg = LiveGraph(built["branchy"][1])
        file_peak = lg.peak([n.name for n in built["branchy"][1].graph.node])
        good_peak = lg.peak(mm.BRANCHY_GOOD_ORDER)
        opt_peak, opt_order = lg.best_order()
        print(f"branchy peak live bytes: file order {file_peak}, BRANCHY_GOOD_ORDER {good_peak}, "
              f"optimal {opt_peak}")
        print("  optimal order: " + " ".join(opt_order))
        if not file_peak >= 1.2 * opt_peak:
            fail("branchy: file order is not clearly worse than the optimum")
        if good_peak != opt_peak:
            fail("branchy: BRANCHY_GOOD_ORDER is not optimal")

    print("OK" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
