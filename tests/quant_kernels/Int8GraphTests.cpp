// Hand-built quantized graphs (docs/quantized-ir.md types, set by hand, no
// quantization pass): the interpreter's int8 reference (src/ops, plain C++
// from the TFLite formulas) and bundles (the C kernels as bitcode, specialised
// by LLVM) must agree bit for bit, on the host and on a Cortex-M7 under QEMU.
#include "QuantGraphBuilder.h"
#include "bundlefit/bundle/BundleRunner.h"
#include "bundlefit/bundle/BundleWriter.h"
#include "bundlefit/codegen/BundleCodegen.h"
#include "bundlefit/codegen/Target.h"
#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/ops/InPlaceOps.h"
#include "bundlefit/ops/Int8Params.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/schedule/MemoryPlan.h"
#include "bundlefit/support/Error.h"

#include "SkipTest.h"
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <set>

using namespace bundlefit;
namespace fs = std::filesystem;
using test::Builder;
using test::floatType;
using test::int8Type;

namespace {

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

/// Every quantizer-visible op: conv+relu, maxpool, depthwise, avgpool, add,
/// mul, concat (rescaling both inputs), relu, clip (rescale), global average
/// pool, flatten, gemm with an int8 bias, softmax, quantize/dequantize.
std::unique_ptr<Graph> buildConvNet() {
  Builder b("qnet");
  Value *x = b.input("x", {1, 3, 12, 12});
  Value *q = b.op("Quantize", "q", {x}, int8Type({1, 3, 12, 12}, 1.0f / 64, 3));
  std::vector<float> w1Scales;
  for (int c = 0; c < 8; ++c)
    w1Scales.push_back(0.006f + 0.001f * c);
  std::vector<float> b1Scales;
  for (float s : w1Scales)
    b1Scales.push_back(s / 64);
  Value *c1 = b.op("Conv", "c1",
                   {q, b.weights("w1", {8, 3, 3, 3}, w1Scales), b.int32Bias("b1", 8, b1Scales)},
                   int8Type({1, 8, 12, 12}, 0.02f, -128), [](Attributes &a) {
                     a.setInts("kernel_shape", {3, 3});
                     a.setInts("pads", {1, 1, 1, 1});
                     a.setString("activation", "Relu");
                   });
  Value *p1 = b.op("MaxPool", "p1", {c1}, int8Type({1, 8, 6, 6}, 0.02f, -128), [](Attributes &a) {
    a.setInts("kernel_shape", {2, 2});
    a.setInts("strides", {2, 2});
  });
  Value *d1 =
      b.op("Conv", "d1",
           {p1, b.weights("wd", {8, 1, 3, 3}, {0.01f}), b.int32Bias("bd", 8, {0.02f * 0.01f})},
           int8Type({1, 8, 6, 6}, 0.05f, 4), [](Attributes &a) {
             a.setInts("kernel_shape", {3, 3});
             a.setInts("pads", {1, 1, 1, 1});
             a.setInt("group", 8);
           });
  Value *a1 = b.op("AveragePool", "a1", {d1}, int8Type({1, 8, 6, 6}, 0.05f, 4), [](Attributes &a) {
    a.setInts("kernel_shape", {3, 3});
    a.setInts("pads", {1, 1, 1, 1});
  });
  Value *s1 = b.op("Add", "s1", {a1, p1}, int8Type({1, 8, 6, 6}, 0.04f, -60));
  Value *m1 = b.op("Mul", "m1", {s1, p1}, int8Type({1, 8, 6, 6}, 0.06f, -100));
  Value *cat = b.op("Concat", "cat", {m1, d1}, int8Type({1, 16, 6, 6}, 0.07f, -20),
                    [](Attributes &a) { a.setInt("axis", 1); });
  Value *r1 = b.op("Relu", "r1", {cat}, int8Type({1, 16, 6, 6}, 0.07f, -20));
  Value *k1 = b.op("Clip", "k1", {r1, b.floatScalar("lo", 0.0f), b.floatScalar("hi", 6.0f)},
                   int8Type({1, 16, 6, 6}, 6.0f / 255, -128));
  Value *g1 = b.op("GlobalAveragePool", "g1", {k1}, int8Type({1, 16, 1, 1}, 6.0f / 255, -128));
  Value *f1 = b.op("Flatten", "f1", {g1}, int8Type({1, 16}, 6.0f / 255, -128));
  TensorType biasType = int8Type({10}, 0.05f, 0);
  std::vector<uint8_t> biasBytes;
  for (int i = 0; i < 10; ++i)
    biasBytes.push_back(uint8_t(int8_t(i * 7 - 30)));
  Value *fcBias = b.graph->addConstant("bfc", biasType, biasBytes);
  Value *fc = b.op("Gemm", "fc", {f1, b.weights("wfc", {10, 16}, {0.002f}), fcBias},
                   int8Type({1, 10}, 0.05f, 0), [](Attributes &a) { a.setInt("transB", 1); });
  Value *sm = b.op("Softmax", "sm", {fc}, int8Type({1, 10}, 1.0f / 256, -128),
                   [](Attributes &a) { a.setInt("axis", 1); });
  Value *out = b.op("Dequantize", "out", {sm}, floatType({1, 10}));
  b.graph->markOutput(out);
  b.graph->markOutput(fc);
  b.graph->markOutput(cat);
  return std::move(b.graph);
}

/// The other forms: 1-D conv with an int8 per-channel bias and fused Clip,
/// softmax over a strided axis, average pool with count_include_pad and
/// ceil_mode, a broadcasting Add with an int8 constant, Gemm with [K,N]
/// asymmetric weights, a conv with per-channel weight zero points, Rescale,
/// Dequantize of an Add, a linear Resize to other output parameters, a
/// nearest Resize.
std::unique_ptr<Graph> buildVariants() {
  Builder b("qvar");
  Value *x = b.input("x", {1, 4, 9, 9});
  Value *q = b.op("Quantize", "q", {x}, int8Type({1, 4, 9, 9}, 1.0f / 50, -2));
  Value *flat = b.op("Reshape", "flat", {q, b.int64s("shape", {1, 4, 81})},
                     int8Type({1, 4, 81}, 1.0f / 50, -2));
  // Power-of-two scales (symmetric_with_power2_scale) with an int8 bias.
  Value *bias8 =
      b.weights("bc", {6}, {1.0f / 128, 1.0f / 64, 1.0f / 256, 1.0f / 128, 1.0f / 64, 1.0f / 256});
  Value *conv =
      b.op("Conv", "conv1d",
           {flat,
            b.weights("wc", {6, 4, 3},
                      {1.0f / 256, 1.0f / 512, 1.0f / 256, 1.0f / 128, 1.0f / 256, 1.0f / 512}),
            bias8},
           int8Type({1, 6, 41}, 1.0f / 16, 0), [](Attributes &a) {
             a.setInts("kernel_shape", {3});
             a.setInts("strides", {2});
             a.setInts("pads", {1, 1});
             a.setString("activation", "Clip");
             a.setFloat("activation_min", -1.0f);
             a.setFloat("activation_max", 2.0f);
           });
  Value *sm = b.op("Softmax", "sm1", {conv}, int8Type({1, 6, 41}, 1.0f / 256, -128),
                   [](Attributes &a) { a.setInt("axis", 1); });
  Value *avg =
      b.op("AveragePool", "avg", {q}, int8Type({1, 4, 5, 5}, 1.0f / 50, -2), [](Attributes &a) {
        a.setInts("kernel_shape", {3, 3});
        a.setInts("strides", {2, 2});
        a.setInts("pads", {1, 1, 0, 0});
        a.setInt("count_include_pad", 1);
        a.setInt("ceil_mode", 1);
      });
  Value *avgFlat = b.op("Flatten", "avgflat", {avg}, int8Type({1, 100}, 1.0f / 50, -2));
  // Asymmetric weights (bf_fully_connected_wzp_s8, bf_conv2d_wzp_s8): a
  // Gemm's per-tensor zero point, a conv's per-channel ones.
  Value *wg = b.weights("wg", {100, 7}, {0.01f});
  wg->type.quant.zeroPoints = {-5};
  Value *gemm = b.op("Gemm", "gemm", {avgFlat, wg, b.int32Bias("bg", 7, {0.01f / 50})},
                     int8Type({1, 7}, 0.03f, 5));
  Value *wa = b.weights("wa", {3, 4, 3, 3}, {0.004f, 0.005f, 0.006f});
  wa->type.quant.zeroPoints = {3, -7, 0};
  Value *asym =
      b.op("Conv", "asym", {q, wa, b.int32Bias("ba", 3, {0.004f / 50, 0.005f / 50, 0.006f / 50})},
           int8Type({1, 3, 9, 9}, 0.02f, -3), [](Attributes &a) {
             a.setInts("kernel_shape", {3, 3});
             a.setInts("pads", {1, 1, 1, 1});
           });
  TensorType addend = int8Type({1, 4, 1, 1}, 0.01f, 7);
  Value *c = b.graph->addConstant("addend", addend, {10, 250, 100, 7});
  Value *sum = b.op("Add", "sum", {q, c}, int8Type({1, 4, 9, 9}, 0.025f, -1));
  Value *res = b.op("Rescale", "res", {sum}, int8Type({1, 4, 9, 9}, 0.011f, 3));
  Value *out = b.op("Dequantize", "out", {res}, floatType({1, 4, 9, 9}));
  b.graph->markOutput(sm);
  b.graph->markOutput(gemm);
  b.graph->markOutput(out);
  b.graph->markOutput(asym);
  // Table activations (src/ops/lut/) and a squeeze-and-excitation gate: a
  // broadcasting Mul by HardSigmoid(GlobalAveragePool(x)).
  const Shape s = {1, 4, 9, 9};
  b.graph->markOutput(b.op("Sigmoid", "sig", {q}, int8Type(s, 1.0f / 256, -128)));
  b.graph->markOutput(b.op("Tanh", "tanh", {q}, int8Type(s, 1.0f / 128, 0)));
  b.graph->markOutput(b.op("LeakyRelu", "lrelu", {q}, int8Type(s, 0.012f, -60),
                           [](Attributes &a) { a.setFloat("alpha", 0.2f); }));
  b.graph->markOutput(b.op("Elu", "elu", {q}, int8Type(s, 0.015f, -50)));
  b.graph->markOutput(b.op("HardSwish", "hswish", {q}, int8Type(s, 0.011f, -90)));
  Value *silu = b.op("Silu", "silu", {q}, int8Type(s, 0.011f, -103));
  Value *pool = b.op("GlobalAveragePool", "se_pool", {q}, int8Type({1, 4, 1, 1}, 1.0f / 50, -2));
  Value *gate = b.op("HardSigmoid", "se_gate", {pool}, int8Type({1, 4, 1, 1}, 1.0f / 255, -128),
                     [](Attributes &a) { a.setFloat("alpha", 1.0f / 6); });
  b.graph->markOutput(b.op("Mul", "se_scale", {silu, gate}, int8Type(s, 0.01f, -110)));
  // bf_resize_linear_s8 of a plane that is not square: every field of its
  // bf_resize_params differs from the others, so a swapped one shows.
  Value *wide = b.op("Reshape", "wide", {q, b.int64s("wide_shape", {1, 4, 3, 27})},
                     int8Type({1, 4, 3, 27}, 1.0f / 50, -2));
  b.graph->markOutput(b.op(
      "Resize", "resize", {wide, nullptr, nullptr, b.int64s("resize_sizes", {1, 4, 5, 20})},
      int8Type({1, 4, 5, 20}, 1.0f / 40, 5), [](Attributes &a) { a.setString("mode", "linear"); }));
  // bf_resize_nearest_u8 of the same plane (a copy: the input's parameters).
  b.graph->markOutput(b.op("Resize", "resize_nearest",
                           {wide, nullptr, nullptr, b.int64s("nearest_sizes", {1, 4, 5, 20})},
                           int8Type({1, 4, 5, 20}, 1.0f / 50, -2)));
  return std::move(b.graph);
}

/// Graph outputs that later nodes read: int8 convolutions each followed by
/// a table activation, Relu or Rescale, and a float chain. The memory-aware
/// order search once saw no dependency through a graph output (it is not in
/// the arena) and ran the readers before their producers: the host bundle's
/// activations differed on 651-748 of 784 output bytes.
std::unique_ptr<Graph> buildOutputsReadOnward() {
  Builder b("qoutread");
  const Shape s = {1, 4, 7, 7};
  Value *x = b.input("x", s);
  Value *leaky = b.op("LeakyRelu", "fleaky", {x}, floatType(s),
                      [](Attributes &a) { a.setFloat("alpha", 0.25f); });
  b.graph->markOutput(leaky);
  b.graph->markOutput(b.op("Relu", "frelu", {leaky}, floatType(s)));
  Value *q = b.op("Quantize", "q", {x}, int8Type(s, 1.0f / 64, 3));
  int i = 0;
  for (const char *opType : {"HardSwish", "Sigmoid", "Relu", "Rescale"}) {
    const std::string id = std::to_string(i++);
    Value *conv = b.op(
        "Conv", "c" + id,
        {q, b.weights("w" + id, {4, 4, 3, 3}, {0.006f}), b.int32Bias("b" + id, 4, {0.006f / 64})},
        int8Type(s, 0.06f, -5), [](Attributes &a) {
          a.setInts("kernel_shape", {3, 3});
          a.setInts("pads", {1, 1, 1, 1});
        });
    b.graph->markOutput(conv);
    Value *act = b.op(opType, "a" + id, {conv}, int8Type(s, 0.012f, -60));
    b.graph->markOutput(b.op("Dequantize", "o" + id, {act}, floatType(s)));
  }
  return std::move(b.graph);
}

/// The random draws of the random-graph builders: integers in [lo, hi] and a
/// layer's weight scales (per tensor or, by a coin, per output channel) with
/// its bias scales at input scale 1/64.
struct RandomDraws {
  std::mt19937 rng;
  explicit RandomDraws(unsigned seed) : rng(seed) {}
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  std::vector<float> weightScales(int M, std::vector<float> &biasScales) {
    std::vector<float> scales(pick(0, 1) ? size_t(M) : 1u);
    for (float &sc : scales) {
      sc = 0.004f + 0.0005f * float(pick(0, 20));
      biasScales.push_back(sc / 64);
    }
    return scales;
  }
};

/// Group-1 convolutions of random shapes (the im2col matrix product and its
/// requantization): kernel sizes 1-5, strides, pads, dilation, channel counts
/// whose C*KH*KW is rarely a multiple of 16, odd pixel and channel counts,
/// input zero points -128 (offset 128), 0 and others, per-tensor and
/// per-channel scales, clamps; depthwise convolutions (3x3 mostly) and a
/// fully connected layer per zero point.
/// Every conv's and Gemm's output is a graph output.
std::unique_ptr<Graph> buildRandomConvs(unsigned seed) {
  Builder b("qconvs" + std::to_string(seed), seed);
  RandomDraws draws(seed);
  auto pick = [&](int lo, int hi) { return draws.pick(lo, hi); };
  const int C = pick(1, 21), H = pick(3, 11), W = pick(3, 11);
  Value *x = b.input("x", {1, C, H, W});
  const int zeroPoints[] = {-128, 0, pick(-127, 127)};
  for (int z = 0; z < 3; ++z) {
    const std::string zs = std::to_string(z);
    Value *q = b.op("Quantize", "q" + zs, {x}, int8Type({1, C, H, W}, 1.0f / 64, zeroPoints[z]));
    for (int i = 0; i < 4; ++i) {
      const std::string id = zs + "_" + std::to_string(i);
      const int M = pick(1, 19), KH = pick(1, 4), KW = pick(1, 5), sH = pick(1, 2), sW = pick(1, 2),
                dH = pick(0, 3) ? 1 : 2, dW = pick(0, 3) ? 1 : 2;
      const int pT = pick(0, 2), pL = pick(0, 2), pB = pick(0, 2), pR = pick(0, 2);
      const int spanH = H + pT + pB - dH * (KH - 1) - 1, spanW = W + pL + pR - dW * (KW - 1) - 1;
      if (spanH < 0 || spanW < 0)
        continue;
      const int OH = spanH / sH + 1, OW = spanW / sW + 1;
      std::vector<float> biasScales;
      const std::vector<float> scales = draws.weightScales(M, biasScales);
      const float outScale = 0.01f * std::sqrt(float(C * KH * KW));
      const int outZero = pick(-128, 40);
      const bool relu = pick(0, 2) == 0;
      Value *conv = b.op(
          "Conv", "c" + id,
          {q, b.weights("w" + id, {M, C, KH, KW}, scales), b.int32Bias("b" + id, M, biasScales)},
          int8Type({1, M, OH, OW}, outScale, relu ? -128 : outZero), [&](Attributes &a) {
            a.setInts("kernel_shape", {KH, KW});
            a.setInts("strides", {sH, sW});
            a.setInts("pads", {pT, pL, pB, pR});
            a.setInts("dilations", {dH, dW});
            if (relu)
              a.setString("activation", "Relu");
          });
      b.graph->markOutput(conv);
    }
    // Depthwise convolutions: mostly 3x3 (the row and whole-plane fast
    // paths: "same" rows, stride 2, vertical stride and dilation, pads 0-2),
    // channel multiplier 1 or 2; other kernels take the grouped kernel.
    for (int i = 0; i < 3; ++i) {
      const std::string id = zs + "_" + std::to_string(i);
      const bool same = pick(0, 1);
      const int chMult = pick(1, 2), M = C * chMult;
      const int KH = pick(0, 4) ? 3 : pick(1, 4), KW = pick(0, 4) ? 3 : pick(1, 4);
      const int sH = same ? 1 : pick(1, 2), sW = same ? 1 : pick(1, 2);
      const int dH = same || pick(0, 3) ? 1 : 2;
      const int pT = same ? 1 : pick(0, 2), pL = same ? 1 : pick(0, 2), pB = same ? 1 : pick(0, 2),
                pR = same ? 1 : pick(0, 2);
      const int spanH = H + pT + pB - dH * (KH - 1) - 1, spanW = W + pL + pR - (KW - 1) - 1;
      if (spanH < 0 || spanW < 0)
        continue;
      const int OH = spanH / sH + 1, OW = spanW / sW + 1;
      std::vector<float> biasScales;
      const std::vector<float> scales = draws.weightScales(M, biasScales);
      const bool relu = pick(0, 1) == 0;
      Value *dw = b.op(
          "Conv", "d" + id,
          {q, b.weights("wd" + id, {M, 1, KH, KW}, scales), b.int32Bias("bd" + id, M, biasScales)},
          int8Type({1, M, OH, OW}, 0.01f * float(KH * KW), relu ? -128 : pick(-60, 60)),
          [&](Attributes &a) {
            a.setInts("kernel_shape", {KH, KW});
            a.setInts("strides", {sH, sW});
            a.setInts("pads", {pT, pL, pB, pR});
            a.setInts("dilations", {dH, 1});
            a.setInt("group", C);
            if (relu)
              a.setString("activation", "Relu");
          });
      b.graph->markOutput(dw);
    }
    // A fully connected layer over the whole input (K = C*H*W, rarely a
    // multiple of 16), an odd or even number of rows.
    const int K = C * H * W, N = pick(1, 64);
    Value *flat = b.op("Flatten", "f" + zs, {q}, int8Type({1, K}, 1.0f / 64, zeroPoints[z]));
    Value *fc = b.op(
        "Gemm", "g" + zs,
        {flat, b.weights("wg" + zs, {N, K}, {0.006f}), b.int32Bias("bg" + zs, N, {0.006f / 64})},
        int8Type({1, N}, 0.01f * std::sqrt(float(K)), pick(-20, 20)),
        [](Attributes &a) { a.setInt("transB", 1); });
    b.graph->markOutput(fc);
  }
  return std::move(b.graph);
}

/// Random 1x1 stride-1 convolutions (the DSP kernels' shared pointwise path,
/// K = C a run-time value): channel counts C with and without a multiple of
/// 4, odd M (and 1), odd pixel counts (and 1), input zero points -128, 0 and
/// another, per-tensor and per-channel scales, relu, and per-tensor layers
/// whose first channels' biases are too large for the cheaper exact output
/// form (the general one then takes those channels). Every conv's output is
/// a graph output.
std::unique_ptr<Graph> buildRandomPointwise(unsigned seed) {
  Builder b("qpw" + std::to_string(seed), seed);
  RandomDraws draws(seed);
  auto pick = [&](int lo, int hi) { return draws.pick(lo, hi); };
  const int zeroPoints[] = {-128, 0, pick(-127, 127)};
  for (int z = 0; z < 3; ++z) {
    const std::string zs = std::to_string(z);
    const int C = pick(0, 1) ? 4 * pick(1, 17) : pick(1, 70), H = pick(1, 7), W = pick(1, 7);
    Value *x = b.input("x" + zs, {1, C, H, W});
    Value *q = b.op("Quantize", "q" + zs, {x}, int8Type({1, C, H, W}, 1.0f / 64, zeroPoints[z]));
    for (int i = 0; i < 3; ++i) {
      const std::string id = zs + "_" + std::to_string(i);
      const int M = i == 2 ? 1 : pick(2, 33);
      std::vector<float> biasScales;
      const std::vector<float> scales = draws.weightScales(M, biasScales);
      Value *bias = b.int32Bias("b" + id, M, biasScales);
      if (i == 1) { // |bias| near 2^30 for the first channels
        int32_t *values = bias->mutableDataAs<int32_t>();
        for (int m = 0; m < std::min(M, 3); ++m)
          values[m] = (m % 2 ? -1 : 1) * ((1 << 30) - pick(0, 1 << 20));
      }
      const bool relu = pick(0, 2) == 0;
      Value *conv =
          b.op("Conv", "c" + id, {q, b.weights("w" + id, {M, C, 1, 1}, scales), bias},
               int8Type({1, M, H, W}, 0.01f * std::sqrt(float(C)), relu ? -128 : pick(-128, 40)),
               [&](Attributes &a) {
                 a.setInts("kernel_shape", {1, 1});
                 if (relu)
                   a.setString("activation", "Relu");
               });
      b.graph->markOutput(conv);
    }
  }
  return std::move(b.graph);
}

/// int8 convolutions each followed by a table activation that alone reads
/// its output. Fused (src/codegen/LutFusion.h: the table is applied at the
/// conv's stores): depthwise 3x3 "same" and stride 2 (the row fast paths,
/// per-tensor scales) and 1x1 convs (the pointwise kernels, one with a fused
/// Relu before its table). Unfused, the table in its own pass: a 3x3 conv
/// and a depthwise 5x5 (kernels where the table in the stores does not pay),
/// a 1x1 conv that is also a graph output and a table of the quantized
/// input.
constexpr size_t kFusedTables = 4;
std::unique_ptr<Graph> buildTableConvs(unsigned seed) {
  Builder b("qluts" + std::to_string(seed), seed);
  RandomDraws draws(seed);
  const int C = 8, H = 9, W = 9;
  Value *x = b.input("x", {1, C, H, W});
  Value *q = b.op("Quantize", "q", {x}, int8Type({1, C, H, W}, 1.0f / 64, draws.pick(-20, 20)));
  struct Layer {
    const char *table;
    int M, K, stride, group;
    bool relu, alsoOutput;
  };
  const Layer layers[] = {
      {"HardSwish", 6, 3, 1, 1, false, false},    {"Silu", C, 3, 1, C, false, false},
      {"Sigmoid", C, 3, 2, C, false, false},      {"Tanh", C, 5, 1, C, false, false},
      {"HardSigmoid", 10, 1, 1, 1, false, false}, {"LeakyRelu", 5, 1, 1, 1, true, false},
      {"HardSwish", 7, 1, 1, 1, false, true}};
  int i = 0;
  for (const Layer &l : layers) {
    const std::string id = std::to_string(i++);
    const int pad = l.K / 2, OH = (H + 2 * pad - l.K) / l.stride + 1,
              OW = (W + 2 * pad - l.K) / l.stride + 1;
    std::vector<float> biasScales;
    // Per-tensor weight scales (the depthwise and pointwise fast paths).
    std::vector<float> scales = {0.004f + 0.0005f * float(draws.pick(0, 20))};
    biasScales = {scales[0] / 64};
    const int Cg = C / l.group;
    Value *conv = b.op("Conv", "c" + id,
                       {q, b.weights("w" + id, {l.M, Cg, l.K, l.K}, scales),
                        b.int32Bias("b" + id, l.M, biasScales)},
                       int8Type({1, l.M, OH, OW}, 0.01f * std::sqrt(float(Cg * l.K * l.K)),
                                l.relu ? -128 : draws.pick(-40, 40)),
                       [&](Attributes &a) {
                         a.setInts("kernel_shape", {l.K, l.K});
                         a.setInts("strides", {l.stride, l.stride});
                         a.setInts("pads", {pad, pad, pad, pad});
                         a.setInt("group", l.group);
                         if (l.relu)
                           a.setString("activation", "Relu");
                       });
    // Dequantized: a graph output gets storage of its own, and the plan puts
    // an intermediate table's output on its input, as fusion requires.
    Value *t =
        b.op(l.table, "t" + id, {conv}, int8Type({1, l.M, OH, OW}, 0.012f, draws.pick(-100, -20)));
    b.graph->markOutput(b.op("Dequantize", "o" + id, {t}, floatType({1, l.M, OH, OW})));
    if (l.alsoOutput) // the conv's own values are an output too
      b.graph->markOutput(conv);
  }
  b.graph->markOutput(b.op("Sigmoid", "tq", {q}, int8Type({1, C, H, W}, 1.0f / 256, -128)));
  return std::move(b.graph);
}

std::map<std::string, Tensor> inputsFor(const Graph &graph, unsigned seed) {
  std::map<std::string, Tensor> inputs;
  for (const Value *in : graph.inputs())
    inputs.emplace(
        in->name,
        Tensor::fromFloats(in->type.shape, randomFloats(size_t(in->type.numElements()), seed++)));
  return inputs;
}

std::map<std::string, Tensor> runAsBundle(const Graph &graph, const std::string &target,
                                          const std::map<std::string, Tensor> &inputs,
                                          size_t *fusedTables = nullptr) {
  const MemoryPlan plan = planGraphMemory(graph);
  const fs::path work = fs::path(BUNDLEFIT_TEST_TMP) / (graph.name + "-" + target);
  fs::remove_all(work);
  const std::string net = graph.name;
  CodegenResult code = generateBundleObject(graph, plan, net, resolveTarget(target));
  if (fusedTables)
    *fusedTables = code.fusedTables;
  const std::vector<uint8_t> weights = packWeights(plan);
  const std::string bundleDir = (work / "bundle").string();
  writeBundleDirectory(bundleDir,
                       {{net + ".o", std::string(code.object.begin(), code.object.end())},
                        {net + ".weights.bin", std::string(weights.begin(), weights.end())}});
  BundleRunSpec spec = makeRunSpec(plan, bundleDir, net, target);
  spec.timeoutSeconds = 300;
  return runBundle(spec, inputs, (work / "run").string());
}

/// Interpreter vs bundle: every output byte for byte; the bundle applied
/// `fusedTables` table activations in their convs' stores.
void checkBitExact(const Graph &graph, const std::string &target, unsigned seed,
                   size_t fusedTables = 0) {
  const auto inputs = inputsFor(graph, seed);
  const auto expected = Interpreter(graph).run(inputs);
  size_t fused = 0;
  const auto got = runAsBundle(graph, target, inputs, &fused);
  CHECK_MESSAGE(fused == fusedTables, "table activations fused on " << target);
  REQUIRE(got.size() == expected.size());
  for (const auto &[name, tensor] : expected) {
    INFO("output " << name << " on " << target);
    REQUIRE(got.count(name) == 1);
    const Tensor &g = got.at(name);
    REQUIRE(g.bytes.size() == tensor.bytes.size());
    size_t differing = 0;
    for (size_t i = 0; i < g.bytes.size(); ++i)
      differing += g.bytes[i] != tensor.bytes[i];
    CHECK(differing == 0);
  }
}

/// The interpreter's int8 tensors are not degenerate (the test would prove
/// little if everything saturated): each has several distinct values.
void checkInformative(const Graph &graph, unsigned seed) {
  Interpreter interp(graph);
  std::map<std::string, std::set<int>> distinct;
  interp.setObserver([&](const Value &v, const Tensor &t) {
    if (t.type.dtype != DType::Int8)
      return;
    for (int64_t i = 0; i < t.numElements(); ++i)
      distinct[v.name].insert(t.data<int8_t>()[i]);
  });
  interp.run(inputsFor(graph, seed));
  for (const auto &[name, values] : distinct) {
    INFO("tensor " << name << " has " << values.size() << " distinct values in [" << *values.begin()
                   << ", " << *values.rbegin() << "]");
    if (std::getenv("BUNDLEFIT_TEST_VERBOSE"))
      MESSAGE(name << ": " << values.size() << " values in [" << *values.begin() << ", "
                   << *values.rbegin() << "]");
    CHECK(values.size() >= 4);
  }
}

} // namespace

TEST_CASE("quantized graphs: every int8 node gets an int8 kernel, tensors are informative") {
  for (auto build : {buildConvNet, buildVariants}) {
    std::unique_ptr<Graph> graph = build();
    for (const Node *node : graph->nodes())
      if (node->opType != "Reshape" && node->opType != "Flatten")
        CHECK_MESSAGE(needsInt8Kernel(*node), node->describe());
    checkInformative(*graph, 1);
  }
  // Softmax output rows of the conv net sum to about one.
  std::unique_ptr<Graph> graph = buildConvNet();
  const auto out = Interpreter(*graph).run(inputsFor(*graph, 2));
  const Tensor &probs = out.at("out");
  double sum = 0;
  for (int64_t i = 0; i < probs.numElements(); ++i)
    sum += probs.data<float>()[i];
  CHECK(sum == doctest::Approx(1.0).epsilon(0.03));
}

TEST_CASE("interpreter int8 == host bundle int8, bit for bit") {
  for (unsigned seed : {3u, 4u}) {
    checkBitExact(*buildConvNet(), "host", seed);
    checkBitExact(*buildVariants(), "host", seed);
    checkBitExact(*buildTableConvs(seed), "host", seed, kFusedTables);
  }
}

TEST_CASE("nodes that read a graph output run after its producer (host bundle == interpreter)") {
  checkBitExact(*buildOutputsReadOnward(), "host", 11);
}

TEST_CASE("interpreter int8 == Cortex-M7 / M33 bundle int8 under QEMU, bit for bit" *
          doctest::test_suite("needs_qemu")) {
  if (findTool("qemu-system-arm").empty() || findTool("arm-none-eabi-gcc").empty())
    BUNDLEFIT_SKIP_TEST("qemu-system-arm or arm-none-eabi-gcc missing");
  checkBitExact(*buildConvNet(), "cortex-m7", 5);
  checkBitExact(*buildVariants(), "cortex-m7", 6);
  checkBitExact(*buildTableConvs(5), "cortex-m7", 5, kFusedTables);
  // Another kernel bitcode family (thumbv8m.main).
  checkBitExact(*buildConvNet(), "cortex-m33", 7);
}

TEST_CASE("interpreter int8 == Cortex-M55 (Helium) bundle int8 under QEMU, bit for bit" *
          doctest::test_suite("needs_qemu")) {
  // The thumbv81m_mve kernel family: MVE dot products and requantization
  // (int8_mve.h) against the interpreter's portable kernels.
  if (findTool("qemu-system-arm").empty() || findTool("arm-none-eabi-gcc").empty())
    BUNDLEFIT_SKIP_TEST("qemu-system-arm or arm-none-eabi-gcc missing");
  checkBitExact(*buildConvNet(), "cortex-m55", 8);
  checkBitExact(*buildVariants(), "cortex-m55", 9);
  // Helium's vector stores take no table: the entry points apply it after.
  checkBitExact(*buildTableConvs(8), "cortex-m55", 8, kFusedTables);
  for (unsigned seed = 20; seed < 32; ++seed)
    checkBitExact(*buildRandomConvs(seed), "cortex-m55", seed);
}

TEST_CASE(
    "random int8 1x1 convolutions: Cortex-M7 / M33 / M55 bundles == interpreter, bit for bit" *
    doctest::test_suite("needs_qemu")) {
  if (findTool("qemu-system-arm").empty() || findTool("arm-none-eabi-gcc").empty())
    BUNDLEFIT_SKIP_TEST("qemu-system-arm or arm-none-eabi-gcc missing");
  for (unsigned seed : {21u, 22u, 23u}) {
    std::unique_ptr<Graph> graph = buildRandomPointwise(seed);
    checkBitExact(*graph, "cortex-m7", seed);
    checkBitExact(*graph, seed == 21u ? "cortex-m33" : "host", seed);
    checkBitExact(*graph, "cortex-m55", seed); // Helium: int8_mve.h
  }
}

TEST_CASE("int8 1x1 convolutions share one kernel function in a bundle of several shapes") {
  // choosePointwiseSharing: one shape stays specialised (two calls, one
  // copy), three shapes call the shared function (a local symbol of the
  // object) on the DSP targets.
  for (const std::vector<int> &ms : {std::vector<int>{6, 6}, std::vector<int>{4, 6, 8}}) {
    Builder b("pw" + std::to_string(ms.size()));
    Value *x = b.input("x", {1, 8, 6, 6});
    Value *q = b.op("Quantize", "q", {x}, int8Type({1, 8, 6, 6}, 1.0f / 64, -128));
    for (size_t i = 0; i < ms.size(); ++i) {
      const std::string id = std::to_string(i);
      b.graph->markOutput(b.op("Conv", "c" + id,
                               {q, b.weights("w" + id, {ms[i], 8, 1, 1}, {0.005f}),
                                b.int32Bias("b" + id, ms[i], {0.005f / 64})},
                               int8Type({1, ms[i], 6, 6}, 0.03f, -128), [](Attributes &a) {
                                 a.setInts("kernel_shape", {1, 1});
                               }));
    }
    const MemoryPlan plan = planGraphMemory(*b.graph);
    const CodegenResult code =
        generateBundleObject(*b.graph, plan, b.graph->name, resolveTarget("cortex-m7"));
    const std::string object(code.object.begin(), code.object.end());
    INFO(ms.size() << " convolutions");
    CHECK((object.find("bf_i8_pointwise_off128") != std::string::npos) == (ms.size() == 3));
  }
}

TEST_CASE("unsupported int8 forms are reported with the node") {
  Builder b("bad");
  Value *x = b.input("x", {1, 2, 4, 4});
  Value *q = b.op("Quantize", "q", {x}, int8Type({1, 2, 4, 4}, 0.1f, 0));
  // Two weight zero points for one scale.
  Value *w = b.weights("w", {2, 2, 1, 1}, {0.1f});
  w->type.quant.zeroPoints = {3, 4};
  Value *c = b.op("Conv", "conv", {q, w}, int8Type({1, 2, 4, 4}, 0.1f, 0), [](Attributes &a) {
    a.setInts("kernel_shape", {1, 1});
  });
  b.graph->markOutput(c);
  const Node *node = b.graph->findNode("conv");
  REQUIRE(node != nullptr);
  try {
    int8ConvArgs(*node);
    FAIL("expected an error");
  } catch (const Error &e) {
    CHECK(e.code() == ExitCode::Unsupported);
    CHECK(std::string(e.what()).find("node 'conv' (Conv)") != std::string::npos);
    CHECK(std::string(e.what()).find("2 zero points for 1 scales") != std::string::npos);
  }
}

TEST_CASE("asymmetric int8 weights take the exact zero-point kernel, never CMSIS-NN's") {
  Builder b("asym");
  Value *x = b.input("x", {1, 2, 4, 4});
  Value *q = b.op("Quantize", "q", {x}, int8Type({1, 2, 4, 4}, 0.1f, 0));
  Value *w = b.weights("w", {2, 2, 3, 3}, {0.1f});
  w->type.quant.zeroPoints = {3};
  Value *c = b.op("Conv", "conv", {q, w}, int8Type({1, 2, 4, 4}, 0.1f, 0), [](Attributes &a) {
    a.setInts("kernel_shape", {3, 3});
    a.setInts("pads", {1, 1, 1, 1});
  });
  Value *y = b.op("Dequantize", "dq", {c}, TensorType{DType::Float32, {1, 2, 4, 4}, {}});
  b.graph->markOutput(y);
  const Node *node = b.graph->findNode("conv");
  REQUIRE(node != nullptr);
  CHECK(int8ConvIm2colBytes(*node) == 0); // no im2col scratch
  CHECK(!hasInPlaceConvKernel(*node));    // no in-place form
  std::string whyNot;
  const OpDef *conv = OpRegistry::get().find("Conv");
  REQUIRE(conv != nullptr);
  CHECK(conv->cmsis.choose(*node, CmsisExtension::None, &whyNot).empty());
  CHECK(whyNot.find("asymmetric weights") != std::string::npos);
  // Its results: buildVariants' "asym" and "gemm", interpreter == bundle.
}

TEST_CASE("int8 bundles compile for every target; multipliers are read-only data") {
  std::unique_ptr<Graph> graph = buildConvNet();
  const MemoryPlan plan = planGraphMemory(*graph);
  // One target per kernel bitcode family (Cortex-M55 and M85: Helium), and
  // Cortex-M3: v7-M without the DSP extension the thumbv7em kernels use
  // (SMLAD) gets the portable ones.
  for (const char *target : {"host", "cortex-a53", "cortex-m7", "cortex-m33", "cortex-m55",
                             "cortex-m85", "cortex-m0plus", "cortex-m3"}) {
    INFO("target " << std::string(target));
    const CodegenResult code = generateBundleObject(*graph, plan, "qnet", resolveTarget(target));
    const ObjectSummary summary = inspectObject(code.object);
    MESSAGE(std::string(target) << ": text " << code.textBytes << " B, rodata " << code.rodataBytes
                                << " B");
    CHECK(code.textBytes > 0);
    // Shape tables, multipliers and shifts: read-only data, not weights.
    CHECK(code.rodataBytes > 0);
    CHECK(code.dataBytes == 0);
    // Only libc/libgcc helpers remain undefined (no int8 kernel symbol).
    for (const std::string &sym : summary.undefinedSymbols) {
      INFO("undefined " << sym);
      CHECK(sym.rfind("bf_", 0) != 0);
    }
  }
  // The constant region holds int8 weights and int32 / int8 biases only
  // (Clip's bounds are parameters baked into the code).
  uint64_t constantBytes = 0;
  for (const Value *c : plan.constants)
    constantBytes += c->type.bytes();
  CHECK(constantBytes == 8 * 27 + 8 * 4 + 8 * 9 + 8 * 4 + 10 * 16 + 10);
}
