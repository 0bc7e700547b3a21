//===- Int16x8Ops.cpp - TFLite's int16x8 operators -------------------------===//
//
// The operators the TFLite importer writes for an int16x8 model
// (tflite/TfliteInt16x8.cpp): int16 activations with zero point 0, in
// TFLite's NHWC layout, computed with TFLM's reference arithmetic, which no
// composition of the IR's int8 operators reproduces (15-bit headroom in
// ADD/SUB, int64 accumulators rounded by TFLM's 64-bit
// MultiplyByQuantizedMultiplier):
//   Int16LeakyRelu   X -> Y, attribute alpha (bf_leaky_relu_s16);
//   Int16Requantize  X int16 <-> Y int32, attribute output_bits (QUANTIZE;
//                    bf_requantize_s16_s32 / _s32_s16);
//   Int16Add         A, B -> Y broadcasting, attribute subtract (bf_addsub_s16);
//   Int16Conv        X [N,H,W,C], W [M,KH,KW,C] int8 (one scale per M, or
//                    one), B [M] int64 -> Y [N,OH,OW,M]; attributes strides,
//                    dilations, pads [top, left, bottom, right]
//                    (bf_conv2d_s16x8);
//   Int16DepthwiseConv  X [N,H,W,C], W [1,KH,KW,M] int8 (TFLite's layout,
//                    M = C * depth multiplier), B [M] int64 -> Y [N,OH,OW,M];
//                    attributes as Int16Conv's (bf_depthwise_conv2d_s16x8);
//   Int16FullyConnected X [..., K], W [O,K] int8 (one scale), B [O] int64 ->
//                    Y [X.size / K, O], or X's leading dimensions and O with
//                    keep_num_dims; computed as Int16Conv on [B,1,1,K]
//                    (bf_conv2d_s16x8);
//   Int16TransposeConv  X, W [O,KH,KW,I], B, and the model's output_shape
//                    operand (unread) -> Y; attributes strides, pads
//                    [top, left], output_shape (bf_transpose_conv2d_s16x8).
// Int16Add, Int16Conv, Int16DepthwiseConv, Int16FullyConnected and
// Int16TransposeConv clamp to attribute activation_range [lo, hi] (a fused
// RELU, RELU6 or RELU_N1_TO_1 in the output's integers; int16's range without
// it), as TFLM's kernels clamp to the activation range their Prepare computes.
//   Int16AveragePool, Int16MaxPool (Int16x8Pool.cpp), Int16Softmax
//                    (Int16x8Softmax.cpp).
// The parameters are TFLM's Prepare() arithmetic, from the values' scales.
// Each has a reference kernel here for the interpreter, written from TFLM's
// formulas without the bundles' C kernels. Conv's int8 weights make it an
// int8 node to the registry (isInt8Node), so it registers both paths.
// With --use-cmsis, Int16Conv calls arm_convolve_wrapper_s16,
// Int16DepthwiseConv arm_depthwise_conv_wrapper_s16, Int16FullyConnected
// arm_fully_connected_s16, Int16Add arm_elementwise_add_s16 and the pools
// arm_avgpool_s16 / arm_max_pool_s16 where those
// give TFLM's bytes (CmsisDef below).
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/BroadcastShape.h"
#include "bundlefit/ops/LowerHelpers.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/ShapeHelpers.h"

#include "bundlefit/ops/Cmsis.h"

#include "common/CallArgs.h"
#include "common/Int8Reference.h"
#include "int16x8/Int16x8Common.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace bundlefit {

using namespace shape_helpers;
using namespace int16x8;
using int8_ref::Multiplier;
using int8_ref::quantizeMultiplier;
using lowering::broadcastStrides;
using lowering::Ints;
using lowering::padFront;

namespace {

using Inputs = std::vector<const Tensor *>;

int32_t mbqm(int32_t x, Multiplier q) { return int8_ref::multiplyByQuantizedMultiplier(x, q); }

//===----------------------------------------------------------------------===//
// LEAKY_RELU
//===----------------------------------------------------------------------===//

void inferLeakyRelu(Node &node) {
  requireInt16(node, 0, "X");
  requireSingleOutput(node, "Y");
  setDTypeAndShape(*node.output(0), DType::Int16, node.input(0)->type.shape);
}

/// TFLM leaky_relu_common.cc: the ratios in float, then QuantizeMultiplier.
std::pair<Multiplier, Multiplier> leakyReluParams(const Node &node) {
  const float in = int16Scale(node, node.input(0), "X");
  const float out = int16Scale(node, node.output(0), "Y");
  // The importer always sets alpha (0 for a file without options, as TFLM).
  const float alpha = node.attrs.getFloat("alpha", 0.0f);
  if (!(alpha >= 0.0f))
    unsupported(node, "alpha " + std::to_string(alpha) + " (int16 LEAKY_RELU needs alpha >= 0)");
  return {quantizeMultiplier(double(in / out)), quantizeMultiplier(double(in * alpha / out))};
}

void leakyReluKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  const auto [identity, alpha] = leakyReluParams(node);
  const int16_t *x = inputs[0]->data<int16_t>();
  int16_t *y = outputs[0].data<int16_t>();
  for (int64_t i = 0; i < outputs[0].numElements(); ++i)
    y[i] = clamp16(x[i] >= 0 ? mbqm(x[i], identity) : mbqm(x[i], alpha));
}

std::vector<KernelCall> lowerLeakyRelu(const Node &node, const PlanView &) {
  const auto [identity, alpha] = leakyReluParams(node);
  call_args::Args args;
  args.addr(node.input(0)).addr(node.output(0)).i32(node.output(0)->type.numElements());
  args.i32(identity.m).i32(identity.s).i32(alpha.m).i32(alpha.s);
  return {args.call("bf_leaky_relu_s16")};
}

//===----------------------------------------------------------------------===//
// QUANTIZE between int16 and int32
//===----------------------------------------------------------------------===//

/// The one scale and zero point of int16/int32 operand `v`.
std::pair<double, int32_t> affineOf(const Node &node, const Value *v, const char *role) {
  if (!v || (v->type.dtype != DType::Int16 && v->type.dtype != DType::Int32) ||
      v->type.quant.scales.size() != 1)
    unsupported(node, std::string(role) + " must be int16 or int32 with one scale");
  return {double(v->type.quant.scales[0]), v->type.quant.zeroPoints[0]};
}

void inferRequantize(Node &node) {
  const Value &x = requireInput(node, 0, "X");
  const int64_t bits = node.attrs.getInt("output_bits", 16);
  const DType out = bits == 32 ? DType::Int32 : DType::Int16;
  if ((x.type.dtype != DType::Int16 && x.type.dtype != DType::Int32) ||
      (bits != 16 && bits != 32) || x.type.dtype == out)
    unsupported(node, "requantizes " + x.type.str() + " to int" + std::to_string(bits) +
                          " (int16 <-> int32 only)");
  requireSingleOutput(node, "Y");
  setDTypeAndShape(*node.output(0), out, x.type.shape);
}

/// TFLM quantize_common.cc: double(input scale) / double(output scale).
std::vector<int32_t> requantizeParams(const Node &node) {
  const auto [inScale, inZero] = affineOf(node, node.input(0), "X");
  const auto [outScale, outZero] = affineOf(node, node.output(0), "Y");
  const Multiplier m = quantizeMultiplier(inScale / outScale);
  return {m.m, m.s, inZero, outZero};
}

void requantizeKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  const std::vector<int32_t> p = requantizeParams(node);
  const bool toInt32 = outputs[0].type.dtype == DType::Int32;
  for (int64_t i = 0; i < outputs[0].numElements(); ++i) {
    const int32_t x = toInt32 ? inputs[0]->data<int16_t>()[i] : inputs[0]->data<int32_t>()[i];
    const int64_t y = int64_t(mbqm(x - p[2], {p[0], p[1]})) + p[3];
    if (toInt32)
      outputs[0].data<int32_t>()[i] =
          int32_t(std::min<int64_t>(std::max<int64_t>(y, INT32_MIN), INT32_MAX));
    else
      outputs[0].data<int16_t>()[i] = clamp16(y);
  }
}

std::vector<KernelCall> lowerRequantize(const Node &node, const PlanView &) {
  call_args::Args args;
  args.addr(node.input(0)).addr(node.output(0)).i32(node.output(0)->type.numElements());
  args.table(requantizeParams(node));
  return {args.call(node.output(0)->type.dtype == DType::Int32 ? "bf_requantize_s16_s32"
                                                               : "bf_requantize_s32_s16")};
}

//===----------------------------------------------------------------------===//
// ADD / SUB
//===----------------------------------------------------------------------===//

void inferAdd(Node &node) {
  requireInt16(node, 0, "A");
  requireInt16(node, 1, "B");
  requireSingleOutput(node, "Y");
  Shape out;
  if (!broadcastShapes(node.input(0)->type.shape, node.input(1)->type.shape, out))
    unsupported(node, "cannot broadcast " + node.input(0)->type.str() + " with " +
                          node.input(1)->type.str());
  setDTypeAndShape(*node.output(0), DType::Int16, out);
}

/// TFLM add_common.cc / sub_common.cc for int16: 15 bits of headroom; the
/// table bf_addsub_s16 reads. ADD divides the scales in double, SUB in
/// float (sub_common.cc), which can round a multiplier differently.
std::vector<int32_t> addParams(const Node &node) {
  const float a = int16Scale(node, node.input(0), "A");
  const float b = int16Scale(node, node.input(1), "B");
  const float y = int16Scale(node, node.output(0), "Y");
  const bool subtract = node.attrs.getInt("subtract", 0) != 0;
  Multiplier ma, mb, mo;
  if (subtract) {
    const float twiceMax = 2 * std::max(a, b);
    ma = quantizeMultiplier(double(a / twiceMax));
    mb = quantizeMultiplier(double(b / twiceMax));
    mo = quantizeMultiplier(double(twiceMax / (float(1 << 15) * y)));
  } else {
    const double twiceMax = 2 * double(std::max(a, b));
    ma = quantizeMultiplier(double(a) / twiceMax);
    mb = quantizeMultiplier(double(b) / twiceMax);
    mo = quantizeMultiplier(twiceMax / ((1 << 15) * double(y)));
  }
  if (ma.s > 0 || mb.s > 0 || mo.s > 0)
    unsupported(node, "the output scale is too small for TFLM's int16 rescaling");
  const ActivationRange act = activationRange(node);
  return {ma.m, ma.s, mb.m, mb.s, mo.m, mo.s, act.lo, act.hi, int32_t(subtract)};
}

void addKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  const std::vector<int32_t> p = addParams(node);
  const Multiplier ma{p[0], p[1]}, mb{p[2], p[3]}, mo{p[4], p[5]};
  const Shape &out = outputs[0].type.shape;
  const Ints sa = broadcastStrides(node, node.input(0), out);
  const Ints sb = broadcastStrides(node, node.input(1), out);
  const int16_t *a = inputs[0]->data<int16_t>(), *b = inputs[1]->data<int16_t>();
  int16_t *y = outputs[0].data<int16_t>();
  std::vector<int64_t> index(out.size(), 0);
  for (int64_t i = 0; i < outputs[0].numElements(); ++i) {
    int64_t rest = i, ia = 0, ib = 0;
    for (size_t d = out.size(); d-- > 0;) {
      const int64_t coord = rest % out[d];
      rest /= out[d];
      ia += coord * sa[d];
      ib += coord * sb[d];
    }
    const int32_t x1 = mbqm(int32_t(a[ia]) * (1 << 15), ma);
    const int32_t x2 = mbqm(int32_t(b[ib]) * (1 << 15), mb);
    y[i] = clamp16(mbqm(p[8] ? x1 - x2 : x1 + x2, mo), p[6], p[7]);
  }
}

std::vector<KernelCall> lowerAdd(const Node &node, const PlanView &) {
  const Shape &out = node.output(0)->type.shape;
  call_args::Args args;
  args.addr(node.input(0)).addr(node.input(1)).addr(node.output(0));
  args.table(padFront(out, 1, node));
  args.table(padFront(broadcastStrides(node, node.input(0), out), 0, node));
  args.table(padFront(broadcastStrides(node, node.input(1), out), 0, node));
  return {args.table(addParams(node)).call("bf_addsub_s16")};
}

//===----------------------------------------------------------------------===//
// CONV_2D 16x8
//===----------------------------------------------------------------------===//

struct ConvGeometry {
  int64_t n, h, w, c, oh, ow, m, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
  /// Depthwise: output channel m reads input channel m / depthMultiplier
  /// and weights [1,KH,KW,M]; 0: a dense convolution (weights OHWI).
  int64_t depthMultiplier = 0;
  /// The fused activation's clamp.
  ActivationRange act{};
};

/// W constant int8, B constant int64 [m] (m output channels).
void checkWeightsAndBias(const Node &node, const Value &w, const Value &b, int64_t m) {
  if (w.type.dtype != DType::Int8 || !w.isConstant() || b.type.dtype != DType::Int64 ||
      !b.isConstant() || b.type.numElements() != m)
    unsupported(node, "W must be constant int8 and B constant int64 [" + std::to_string(m) + "]");
}

/// The kernels' indices and int64 sums: every size well below 2^31.
void checkSizes(const Node &node, const ConvGeometry &g) {
  constexpr int64_t kLimit = int64_t(1) << 30;
  if (g.n * g.h * g.w * g.c > kLimit || g.n * g.oh * g.ow * g.m > kLimit ||
      g.m * g.kh * g.kw * g.c > kLimit || g.oh > kLimit || g.ow > kLimit || g.pt > kLimit ||
      g.pl > kLimit || g.oh < 1 || g.ow < 1)
    unsupported(node, "sizes beyond int32");
}

/// Int16Conv (dense, OHWI weights) or Int16DepthwiseConv ([1,KH,KW,M]).
ConvGeometry convGeometry(const Node &node) {
  requireInt16(node, 0, "X");
  const Value &w = requireInput(node, 1, "W");
  const Value &b = requireInput(node, 2, "B");
  const bool depthwise = node.opType == "Int16DepthwiseConv";
  const Shape &xs = node.input(0)->type.shape, &ws = w.type.shape;
  if (depthwise) {
    if (xs.size() != 4 || ws.size() != 4 || ws[0] != 1 || xs[3] < 1 || ws[3] % xs[3] != 0)
      unsupported(node, "X " + node.input(0)->type.str() + " and W " + w.type.str() +
                            " are not NHWC and [1,KH,KW,C*multiplier]");
  } else if (xs.size() != 4 || ws.size() != 4 || ws[3] != xs[3]) {
    unsupported(node, "X " + node.input(0)->type.str() + " and W " + w.type.str() +
                          " are not NHWC and OHWI of the same channels (groups are not supported)");
  }
  const int64_t m = depthwise ? ws[3] : ws[0];
  checkWeightsAndBias(node, w, b, m);
  const std::vector<int64_t> s = node.attrs.getInts("strides", {1, 1});
  const std::vector<int64_t> d = node.attrs.getInts("dilations", {1, 1});
  const std::vector<int64_t> p = node.attrs.getInts("pads", {0, 0, 0, 0});
  if (s.size() != 2 || d.size() != 2 || p.size() != 4 || s[0] < 1 || s[1] < 1 || d[0] < 1 ||
      d[1] < 1 || p[0] < 0 || p[1] < 0 || p[2] < 0 || p[3] < 0)
    unsupported(node, "bad strides, dilations or pads");
  ConvGeometry g{xs[0], xs[1], xs[2], xs[3], 0,    0,    m,    ws[1], ws[2],
                 s[0],  s[1],  d[0],  d[1],  p[0], p[1], p[2], p[3]};
  if (depthwise)
    g.depthMultiplier = m / g.c;
  g.act = activationRange(node);
  const int64_t spanH = (g.kh - 1) * g.dh + 1, spanW = (g.kw - 1) * g.dw + 1;
  g.oh = (g.h + g.pt + g.pb - spanH) / g.sh + 1;
  g.ow = (g.w + g.pl + g.pr - spanW) / g.sw + 1;
  if (g.h + g.pt + g.pb < spanH || g.w + g.pl + g.pr < spanW)
    unsupported(node, "the window is larger than the padded input");
  checkSizes(node, g);
  return g;
}

void setConvOutput(Node &node, const ConvGeometry &g) {
  requireSingleOutput(node, "Y");
  setDTypeAndShape(*node.output(0), DType::Int16, {g.n, g.oh, g.ow, g.m});
}

void inferConv(Node &node) { setConvOutput(node, convGeometry(node)); }

uint64_t convMacs(const Node &node) {
  const ConvGeometry g = convGeometry(node);
  const int64_t depth = g.depthMultiplier ? 1 : g.c; // products per output
  return macProduct(node,
                    {uint64_t(g.n * g.oh * g.ow), uint64_t(g.m), uint64_t(g.kh * g.kw * depth)});
}

/// TFLM PopulateConvolutionQuantizationParams: per output channel,
/// double(input scale) * double(filter scale) / double(output scale).
std::vector<Multiplier> convMultipliers(const Node &node, int64_t channels) {
  const double in = int16Scale(node, node.input(0), "X");
  const double out = int16Scale(node, node.output(0), "Y");
  const QuantParams &q = node.input(1)->type.quant;
  if (q.scales.size() != 1 && int64_t(q.scales.size()) != channels)
    unsupported(node, "W needs one scale per tensor or per output channel");
  std::vector<Multiplier> m;
  for (int64_t c = 0; c < channels; ++c) {
    const double scale = q.scales[q.scales.size() == 1 ? 0 : size_t(c)];
    if (q.zeroPoints[q.zeroPoints.size() == 1 ? 0 : size_t(c)] != 0)
      unsupported(node, "W must be symmetric (zero point 0)");
    m.push_back(quantizeMultiplier(in * scale / out));
  }
  return m;
}

/// convMultipliers as the kernels read them: a table of multipliers, one of
/// shifts.
std::pair<std::vector<int32_t>, std::vector<int32_t>> multipliersAndShifts(const Node &node,
                                                                           int64_t channels) {
  std::vector<int32_t> mults, shifts;
  for (const Multiplier &m : convMultipliers(node, channels))
    mults.push_back(m.m), shifts.push_back(m.s);
  return {mults, shifts};
}

/// TFLM's reference int16x8 CONV_2D and DEPTHWISE_CONV_2D (and
/// FULLY_CONNECTED as a 1x1 convolution): int64 sums, the bias, the 64-bit
/// MultiplyByQuantizedMultiplier, clamped.
void convKernelOf(const Node &node, const ConvGeometry &g, const Inputs &inputs,
                  std::vector<Tensor> &outputs) {
  const std::vector<Multiplier> mult = convMultipliers(node, g.m);
  const int16_t *x = inputs[0]->data<int16_t>();
  const int8_t *w = inputs[1]->data<int8_t>();
  const int64_t *bias = inputs[2]->data<int64_t>();
  int16_t *y = outputs[0].data<int16_t>();
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox)
        for (int64_t m = 0; m < g.m; ++m) {
          int64_t acc = 0;
          for (int64_t ky = 0; ky < g.kh; ++ky)
            for (int64_t kx = 0; kx < g.kw; ++kx) {
              const int64_t iy = oy * g.sh - g.pt + ky * g.dh, ix = ox * g.sw - g.pl + kx * g.dw;
              if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w)
                continue;
              const int16_t *px = x + ((n * g.h + iy) * g.w + ix) * g.c;
              if (g.depthMultiplier)
                acc += int64_t(px[m / g.depthMultiplier]) * w[(ky * g.kw + kx) * g.m + m];
              else
                for (int64_t c = 0; c < g.c; ++c)
                  acc += int64_t(px[c]) * w[((m * g.kh + ky) * g.kw + kx) * g.c + c];
            }
          y[((n * g.oh + oy) * g.ow + ox) * g.m + m] =
              clamp16(mbqm64(acc + bias[m], mult[m]), g.act.lo, g.act.hi);
        }
}

void convKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  convKernelOf(node, convGeometry(node), inputs, outputs);
}

/// bf_conv2d_s16x8 / bf_transpose_conv2d_s16x8: X, W, B, Y, the per-channel
/// multipliers and shifts, the geometry table.
KernelCall convCall(const Node &node, const ConvGeometry &g, const char *kernel) {
  const auto [mults, shifts] = multipliersAndShifts(node, g.m);
  std::vector<int32_t> geometry;
  for (int64_t v : {g.n, g.h, g.w, g.c, g.oh, g.ow, g.m, g.kh, g.kw, g.sh, g.sw, g.dh, g.dw, g.pt,
                    g.pl, int64_t(g.act.lo), int64_t(g.act.hi)})
    geometry.push_back(int32_t(v)); // each checked below 2^30 by the geometry
  call_args::Args args;
  args.addr(node.input(0)).addr(node.input(1)).addr(node.input(2)).addr(node.output(0));
  return args.table(mults).table(shifts).table(geometry).call(kernel);
}

std::vector<KernelCall> lowerConv(const Node &node) {
  const ConvGeometry g = convGeometry(node);
  return {convCall(node, g, g.depthMultiplier ? "bf_depthwise_conv2d_s16x8" : "bf_conv2d_s16x8")};
}

//===----------------------------------------------------------------------===//
// FULLY_CONNECTED 16x8: a 1x1 convolution of B pixels of K channels
//===----------------------------------------------------------------------===//

/// X [..., K] (any shape of B*K elements, as TFLM reads it), W [O,K], B [O].
ConvGeometry fullyConnectedGeometry(const Node &node) {
  requireInt16(node, 0, "X");
  const Value &w = requireInput(node, 1, "W");
  const Value &b = requireInput(node, 2, "B");
  const Shape &xs = node.input(0)->type.shape, &ws = w.type.shape;
  const int64_t k = ws.size() == 2 ? ws[1] : 0;
  if (xs.empty() || k < 1 || xs.back() != k || node.input(0)->type.numElements() % k != 0)
    unsupported(node, "X " + node.input(0)->type.str() + " and W " + w.type.str() +
                          " are not [..., K] and [O, K]");
  if (w.type.quant.scales.size() != 1)
    unsupported(node, "W needs one scale (TFLM's int16 FULLY_CONNECTED is per-tensor)");
  checkWeightsAndBias(node, w, b, ws[0]);
  const int64_t batches = node.input(0)->type.numElements() / k;
  ConvGeometry g{batches, 1, 1, k, 1, 1, ws[0], 1, 1, 1, 1, 1, 1, 0, 0, 0, 0};
  g.act = activationRange(node);
  checkSizes(node, g);
  return g;
}

void inferFullyConnected(Node &node) {
  const ConvGeometry g = fullyConnectedGeometry(node);
  requireSingleOutput(node, "Y");
  Shape out = {g.n, g.m};
  if (node.attrs.getInt("keep_num_dims", 0) != 0) {
    out = node.input(0)->type.shape;
    out.back() = g.m;
  }
  setDTypeAndShape(*node.output(0), DType::Int16, out);
}

uint64_t fullyConnectedMacs(const Node &node) {
  const ConvGeometry g = fullyConnectedGeometry(node);
  return macProduct(node, {uint64_t(g.n), uint64_t(g.m), uint64_t(g.c)});
}

void fullyConnectedKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  convKernelOf(node, fullyConnectedGeometry(node), inputs, outputs);
}

std::vector<KernelCall> lowerFullyConnected(const Node &node) {
  return {convCall(node, fullyConnectedGeometry(node), "bf_conv2d_s16x8")};
}

//===----------------------------------------------------------------------===//
// TRANSPOSE_CONV 16x8
//===----------------------------------------------------------------------===//

/// X [N,h,w,I], W [O,KH,KW,I], B [O], the model's output_shape operand
/// (read by nobody: the output's static shape is attribute output_shape).
ConvGeometry transposeGeometry(const Node &node) {
  requireInt16(node, 0, "X");
  const Value &w = requireInput(node, 1, "W");
  const Value &b = requireInput(node, 2, "B");
  const Shape &xs = node.input(0)->type.shape, &ws = w.type.shape;
  const std::vector<int64_t> out = node.attrs.getInts("output_shape", {});
  if (xs.size() != 4 || ws.size() != 4 || ws[3] != xs[3] || out.size() != 4 || out[0] != xs[0] ||
      out[3] != ws[0])
    unsupported(node, "X " + node.input(0)->type.str() + ", W " + w.type.str() +
                          " and output_shape " + intsToString(out) +
                          " are not NHWC, OHWI and NHWC of matching channels");
  checkWeightsAndBias(node, w, b, ws[0]);
  const std::vector<int64_t> s = node.attrs.getInts("strides", {1, 1});
  const std::vector<int64_t> p = node.attrs.getInts("pads", {0, 0});
  if (s.size() != 2 || p.size() != 2 || s[0] < 1 || s[1] < 1 || p[0] < 0 || p[1] < 0)
    unsupported(node, "bad strides or pads");
  ConvGeometry g{xs[0], xs[1], xs[2], xs[3], out[1], out[2], ws[0], ws[1], ws[2],
                 s[0],  s[1],  1,     1,     p[0],   p[1],   0,     0};
  g.act = activationRange(node);
  checkSizes(node, g);
  return g;
}

void inferTransposeConv(Node &node) { setConvOutput(node, transposeGeometry(node)); }

uint64_t transposeConvMacs(const Node &node) {
  const ConvGeometry g = transposeGeometry(node);
  return macProduct(node, {uint64_t(g.n * g.h * g.w), uint64_t(g.m), uint64_t(g.kh * g.kw * g.c)});
}

/// TFLM's reference scatters each input pixel into an int64 scratch; the
/// sums are exact, so gathering them per output pixel gives the same bytes.
void transposeConvKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  const ConvGeometry g = transposeGeometry(node);
  const std::vector<Multiplier> mult = convMultipliers(node, g.m);
  const int16_t *x = inputs[0]->data<int16_t>();
  const int8_t *w = inputs[1]->data<int8_t>();
  const int64_t *bias = inputs[2]->data<int64_t>();
  std::vector<int64_t> acc(size_t(g.n * g.oh * g.ow * g.m), 0);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t iy = 0; iy < g.h; ++iy)
      for (int64_t ix = 0; ix < g.w; ++ix)
        for (int64_t ky = 0; ky < g.kh; ++ky)
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            const int64_t oy = iy * g.sh - g.pt + ky, ox = ix * g.sw - g.pl + kx;
            if (oy < 0 || oy >= g.oh || ox < 0 || ox >= g.ow)
              continue;
            for (int64_t m = 0; m < g.m; ++m)
              for (int64_t c = 0; c < g.c; ++c)
                acc[size_t(((n * g.oh + oy) * g.ow + ox) * g.m + m)] +=
                    int64_t(x[((n * g.h + iy) * g.w + ix) * g.c + c]) *
                    w[((m * g.kh + ky) * g.kw + kx) * g.c + c];
          }
  int16_t *y = outputs[0].data<int16_t>();
  for (size_t i = 0; i < acc.size(); ++i) {
    const size_t m = i % size_t(g.m);
    y[i] = clamp16(mbqm64(acc[i] + bias[m], mult[m]), g.act.lo, g.act.hi);
  }
}

std::vector<KernelCall> lowerTransposeConv(const Node &node) {
  return {convCall(node, transposeGeometry(node), "bf_transpose_conv2d_s16x8")};
}

//===----------------------------------------------------------------------===//
// CMSIS-NN's s16 functions (`--use-cmsis`), where they give TFLM's reference
// bytes: the operands are NHWC already, so no layout copies (nhwc = false).
//===----------------------------------------------------------------------===//

/// arm_convolve_s16 without Helium sums C*KH*KW products of int16 x int8
/// (each at most 2^22 in magnitude) in int32 before widening to int64: up to
/// 511 of them cannot overflow; more could, where TFLM's reference sums in int64.
constexpr int64_t kCmsisS16ExactProducts = 511;
/// Helium's arm_nn_mat_mult_nt_t_s16 (int64 bias) sums a filter row's first
/// MAX_COL_COUNT products in int32 and the rest in int64.
constexpr int64_t kMveInt32Columns = 512;

/// Whether the int32 part of each output channel's sum is exact for every
/// input where CMSIS-NN sums a row's first 512 products in int32 and the rest
/// in int64 (Helium's arm_nn_mat_mult_nt_t_s16; arm_nn_vec_mat_mult_t_s16 with
/// DSP or Helium): |sum| <= 32768 * sum(|w|) over the row's first 512 weights
/// (OHWI, the im2col order; [O,K] for FC) stays below 2^31 unless all 512 are
/// -128.
bool int32PrefixExact(const Node &node, const ConvGeometry &g) {
  const Value &w = *node.input(1);
  const int64_t row = g.c * g.kh * g.kw;
  const int64_t counted = std::min(row, kMveInt32Columns);
  if (!w.isConstant() || w.type.dtype != DType::Int8 || int64_t(w.data.size()) != g.m * row)
    return false;
  const int8_t *weights = w.dataAs<int8_t>();
  for (int64_t m = 0; m < g.m; ++m) {
    int64_t magnitude = 0;
    for (int64_t j = 0; j < counted; ++j)
      magnitude += std::abs(int64_t(weights[m * row + j]));
    if (magnitude * 32768 > int64_t(INT32_MAX))
      return false;
  }
  return true;
}

std::string cmsisConvChoose(const Node &node, CmsisExtension extension, std::string *whyNot) {
  const ConvGeometry g = convGeometry(node);
  const int64_t products = g.c * g.kh * g.kw;
  if (products <= kCmsisS16ExactProducts)
    return "arm_convolve_wrapper_s16";
  if (extension == CmsisExtension::Mve && int32PrefixExact(node, g))
    return "arm_convolve_wrapper_s16";
  if (whyNot)
    *whyNot = "C*KH*KW = " + std::to_string(products) +
              " products: arm_convolve_s16's int32 sums could overflow beyond " +
              std::to_string(kCmsisS16ExactProducts) +
              (extension == CmsisExtension::Mve
                   ? " (Helium's, where a filter's first 512 weights are -128)"
                   : "") +
              " (TFLM sums in int64)";
  return "";
}

/// arm_convolve_wrapper_s16_get_buffer_size: an im2col of two output pixels,
/// with Helium four, each padded to 8 lanes.
int64_t cmsisConvScratch(const Node &node, const std::string &, CmsisExtension extension) {
  const ConvGeometry g = convGeometry(node);
  const int64_t column = g.c * g.kh * g.kw;
  if (extension == CmsisExtension::Mve)
    return 4 * ((column + 7) / 8) * 8 * int64_t(sizeof(int16_t));
  return 2 * column * int64_t(sizeof(int16_t));
}

/// arm_convolve_wrapper_s16(ctx, conv_params, quant_params, input_dims, input,
/// filter_dims, filter, bias_dims, bias_data {int64 bias, is_int32_bias 0},
/// output_dims, output).
KernelCall cmsisConvCall(const Node &node, const std::string &function) {
  using namespace call_args;
  const ConvGeometry g = convGeometry(node);
  const auto [mults, shifts] = multipliersAndShifts(node, g.m);
  // Each below 2^30 (checkSizes).
  auto n32 = [](int64_t v) { return int32_t(v); };
  const KernelArg params = table(
      {0, 0, n32(g.sw), n32(g.sh), n32(g.pl), n32(g.pt), n32(g.dw), n32(g.dh), g.act.lo, g.act.hi});
  const KernelArg bias = KernelArg::structOf({address(node.input(2)), KernelArg::bitsOf(8, 0)});
  return externalCall(function,
                      {context(node), params, KernelArg::structOf({table(mults), table(shifts)}),
                       dims(n32(g.n), n32(g.h), n32(g.w), n32(g.c)), address(node.input(0)),
                       dims(n32(g.m), n32(g.kh), n32(g.kw), n32(g.c)), address(node.input(1)),
                       dims(1, 1, 1, n32(g.m)), bias,
                       dims(n32(g.n), n32(g.oh), n32(g.ow), n32(g.m)), address(node.output(0))});
}

/// arm_elementwise_add_s16 adds two vectors of one shape (TFLM's CMSIS-NN ADD
/// calls it without broadcasting); CMSIS-NN has no s16 subtraction.
std::string cmsisAddChoose(const Node &node, CmsisExtension, std::string *whyNot) {
  std::string why;
  if (node.attrs.getInt("subtract", 0) != 0)
    why = "SUB: no CMSIS-NN s16 subtraction";
  else if (node.input(0)->type.shape != node.output(0)->type.shape ||
           node.input(1)->type.shape != node.output(0)->type.shape)
    why = "broadcasting (arm_elementwise_add_s16 adds operands of one shape)";
  else
    return "arm_elementwise_add_s16";
  if (whyNot)
    *whyNot = why;
  return "";
}

/// arm_elementwise_add_s16(a, b, offset, mult, shift (a), offset, mult, shift
/// (b), left_shift 15, y, offset, mult, shift, min, max, count): the numbers
/// bf_addsub_s16 reads (addParams), zero points 0.
KernelCall cmsisAddCall(const Node &node, const std::string &function) {
  using namespace call_args;
  const std::vector<int32_t> p = addParams(node);
  const int64_t count = node.output(0)->type.numElements();
  if (count > INT32_MAX)
    unsupported(node, "more than 2^31 elements");
  return externalCall(function,
                      {address(node.input(0)), address(node.input(1)), i32(0), i32(p[0]), i32(p[1]),
                       i32(0), i32(p[2]), i32(p[3]), i32(15), address(node.output(0)), i32(0),
                       i32(p[4]), i32(p[5]), i32(p[6]), i32(p[7]), i32(count)});
}

/// arm_depthwise_conv_wrapper_s16 gives TFLM's bytes on every geometry: its
/// fast form (multiplier 1, no dilation, KH*KW < 512) sums at most 511
/// products of int16 x int8 per output in int32, which cannot overflow; the
/// generic form sums in int64.
std::string cmsisDepthwiseChoose(const Node &, CmsisExtension, std::string *) {
  return "arm_depthwise_conv_wrapper_s16";
}

/// arm_depthwise_conv_wrapper_s16_get_buffer_size: the fast form's im2col of
/// one output pixel (DSP), four plus an 8-byte overread (Helium), none
/// without DSP; the generic form takes none.
int64_t cmsisDepthwiseScratch(const Node &node, const std::string &, CmsisExtension extension) {
  const ConvGeometry g = convGeometry(node);
  const bool fast = g.depthMultiplier == 1 && g.dh == 1 && g.dw == 1 && g.kh * g.kw < 512;
  const int64_t column = g.c * g.kh * g.kw * int64_t(sizeof(int16_t));
  if (!fast || extension == CmsisExtension::None)
    return 0;
  return extension == CmsisExtension::Mve ? 4 * column + 8 : column;
}

/// arm_depthwise_conv_wrapper_s16(ctx, dw_conv_params {input and output
/// offsets 0, ch_mult, stride, padding, dilation, activation}, quant_params,
/// input_dims, input, filter_dims [1,KH,KW,M], filter, bias_dims, bias,
/// output_dims, output).
KernelCall cmsisDepthwiseCall(const Node &node, const std::string &function) {
  using namespace call_args;
  const ConvGeometry g = convGeometry(node);
  const auto [mults, shifts] = multipliersAndShifts(node, g.m);
  auto n32 = [](int64_t v) { return int32_t(v); }; // each below 2^30 (checkSizes)
  const KernelArg params = table({0, 0, n32(g.depthMultiplier), n32(g.sw), n32(g.sh), n32(g.pl),
                                  n32(g.pt), n32(g.dw), n32(g.dh), g.act.lo, g.act.hi});
  return externalCall(function,
                      {context(node), params, KernelArg::structOf({table(mults), table(shifts)}),
                       dims(n32(g.n), n32(g.h), n32(g.w), n32(g.c)), address(node.input(0)),
                       dims(1, n32(g.kh), n32(g.kw), n32(g.m)), address(node.input(1)),
                       dims(1, 1, 1, n32(g.m)), address(node.input(2)),
                       dims(n32(g.n), n32(g.oh), n32(g.ow), n32(g.m)), address(node.output(0))});
}

/// arm_fully_connected_s16 (arm_nn_vec_mat_mult_t_s16) sums each row's first
/// 512 products in int32 with DSP or Helium: up to 511 cannot overflow, more
/// only where a row's first 512 weights are all -128 (TFLM sums in int64).
std::string cmsisFullyConnectedChoose(const Node &node, CmsisExtension, std::string *whyNot) {
  const ConvGeometry g = fullyConnectedGeometry(node);
  if (g.c <= kCmsisS16ExactProducts || int32PrefixExact(node, g))
    return "arm_fully_connected_s16";
  if (whyNot)
    *whyNot = "K = " + std::to_string(g.c) +
              ": arm_fully_connected_s16's int32 sums of a row's first 512 products could "
              "overflow (TFLM sums in int64)";
  return "";
}

/// arm_fully_connected_s16(ctx, fc_params {offsets 0, activation},
/// quant_params {multiplier, shift}, input_dims [B,1,1,K], input,
/// filter_dims [K,1,1,O], filter, bias_dims, bias, output_dims [B,1,1,O],
/// output). Its buffer size is 0 on every build.
KernelCall cmsisFullyConnectedCall(const Node &node, const std::string &function) {
  using namespace call_args;
  const ConvGeometry g = fullyConnectedGeometry(node);
  const Multiplier m = convMultipliers(node, 1)[0];
  auto n32 = [](int64_t v) { return int32_t(v); }; // each below 2^30 (checkSizes)
  return externalCall(
      function, {context(node), table({0, 0, 0, g.act.lo, g.act.hi}), table({m.m, m.s}),
                 dims(n32(g.n), 1, 1, n32(g.c)), address(node.input(0)),
                 dims(n32(g.c), 1, 1, n32(g.m)), address(node.input(1)), dims(1, 1, 1, n32(g.m)),
                 address(node.input(2)), dims(n32(g.n), 1, 1, n32(g.m)), address(node.output(0))});
}

/// Cost classes (device_db), as the int8 Conv's and Gemm's: a depthwise or
/// fully-connected MAC costs its library's own rate, and a convolution's
/// weights are fetched once per output pixel when they miss the cache.
CostClass convClass(const Node &node) {
  return node.opType == "Int16DepthwiseConv" ? CostClass::Depthwise : CostClass::Conv;
}
CostClass fullyConnectedClass(const Node &) { return CostClass::FullyConnected; }

/// An operator with int8 weights is an int8 node to the registry
/// (isInt8Node): `kernel` and `Lower` serve both of its paths.
template <std::vector<KernelCall> (*Lower)(const Node &)>
OpDef &addWeighted(OpRegistry &registry, OpDef def, KernelFn kernel) {
  OpDef &op =
      registry.add(std::move(def)).runs(kernel).quantized(Int8Rule::OwnParams).int8Runs(kernel);
  op.lower = [](const Node &node, const PlanView &) { return Lower(node); };
  op.int8.lower = Lower;
  return op;
}

} // namespace

void registerInt16x8Ops(OpRegistry &registry) {
  registry.add({"Int16LeakyRelu", inferLeakyRelu, [](const Node &) { return uint64_t(0); }})
      .runs(leakyReluKernel)
      .lower = lowerLeakyRelu;
  registry.add({"Int16Requantize", inferRequantize, [](const Node &) { return uint64_t(0); }})
      .runs(requantizeKernel)
      .lower = lowerRequantize;
  OpDef &add = registry.add({"Int16Add", inferAdd, [](const Node &) { return uint64_t(0); }})
                   .runs(addKernel);
  add.lower = lowerAdd;
  add.cmsis.function = "arm_elementwise_add_s16";
  add.cmsis.choose = cmsisAddChoose;
  add.cmsis.nhwc = false;
  add.cmsis.call = cmsisAddCall;
  add.cmsis.prototypes = {
      {"arm_elementwise_add_s16",
       "arm_cmsis_nn_status arm_elementwise_add_s16(const int16_t *, const int16_t *, "
       "const int32_t, const int32_t, const int32_t, const int32_t, const int32_t, "
       "const int32_t, const int32_t, int16_t *, const int32_t, const int32_t, const int32_t, "
       "const int32_t, const int32_t, const int32_t);"}};
  OpDef &conv = addWeighted<lowerConv>(registry, {"Int16Conv", inferConv, convMacs}, convKernel);
  conv.cmsis.function = "arm_convolve_wrapper_s16";
  conv.cmsis.choose = cmsisConvChoose;
  conv.cmsis.scratch = cmsisConvScratch;
  conv.cmsis.nhwc = false;
  conv.cmsis.call = cmsisConvCall;
  // The prototype, and where cmsis_nn_bias_data (only this call passes one) keeps is_int32_bias.
  CmsisPrototype convPrototype = call_args::layerPrototype(
      "arm_convolve_wrapper_s16", "cmsis_nn_conv_params", "cmsis_nn_per_channel_quant_params",
      "int16_t", "const cmsis_nn_bias_data *");
  convPrototype.declarations +=
      "\nBF_CMSIS_NN_LAYOUT(cmsis_nn_bias_data, is_int32_bias, sizeof(void *));";
  conv.cmsis.prototypes = {convPrototype};
  conv.device.costClass = convClass;
  OpDef &depthwise =
      addWeighted<lowerConv>(registry, {"Int16DepthwiseConv", inferConv, convMacs}, convKernel);
  depthwise.cmsis.function = "arm_depthwise_conv_wrapper_s16";
  depthwise.cmsis.choose = cmsisDepthwiseChoose;
  depthwise.cmsis.scratch = cmsisDepthwiseScratch;
  depthwise.cmsis.nhwc = false;
  depthwise.cmsis.call = cmsisDepthwiseCall;
  depthwise.cmsis.prototypes = {
      call_args::layerPrototype("arm_depthwise_conv_wrapper_s16", "cmsis_nn_dw_conv_params",
                                "cmsis_nn_per_channel_quant_params", "int16_t", "const int64_t *")};
  depthwise.device.costClass = convClass;
  OpDef &fc = addWeighted<lowerFullyConnected>(
      registry, {"Int16FullyConnected", inferFullyConnected, fullyConnectedMacs},
      fullyConnectedKernel);
  fc.cmsis.function = "arm_fully_connected_s16";
  fc.cmsis.choose = cmsisFullyConnectedChoose;
  fc.cmsis.nhwc = false;
  fc.cmsis.call = cmsisFullyConnectedCall;
  fc.cmsis.prototypes = {call_args::layerPrototype("arm_fully_connected_s16", "cmsis_nn_fc_params",
                                                   "cmsis_nn_per_tensor_quant_params", "int16_t",
                                                   "const int64_t *")};
  fc.device.costClass = fullyConnectedClass;
  // Other, as the int8 ConvTranspose: its MACs cost at the library's general rate.
  addWeighted<lowerTransposeConv>(
      registry, {"Int16TransposeConv", inferTransposeConv, transposeConvMacs}, transposeConvKernel);
  registerInt16x8Pool(registry);
  registerInt16x8Softmax(registry);
}

} // namespace bundlefit
