//===- Int16x8Pool.cpp - TFLite's int16 AVERAGE_POOL_2D and MAX_POOL_2D ---===//
//
//   Int16AveragePool  X [N,H,W,C] int16 -> Y [N,OH,OW,C] int16;
//   Int16MaxPool      attributes kernel_shape [KH, KW], strides, pads [top,
//                     left, bottom, right] (TFLite's SAME or VALID padding).
// TFLM's reference int16 pooling (reference_integer_ops/pooling.h): the
// window clipped to the input (padding is never counted), an int32 sum
// rounded half away from zero by the count of valid taps, or the maximum;
// clamped to the fused activation's range (NONE: int16). TFLM's Prepare
// requires the output's scale and zero point to be the input's, so no
// rescaling happens (bf_pool_s16). With --use-cmsis: arm_avgpool_s16 and
// arm_max_pool_s16, which compute the same integers on every build (the
// DSP build's saturating adds cannot saturate below 65,536 taps).
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/CmsisBufferSizes.h"
#include "bundlefit/ops/LowerHelpers.h"

#include "common/CallArgs.h"
#include "int16x8/Int16x8Common.h"

#include <algorithm>
#include <cmath>

namespace bundlefit::int16x8 {

using namespace shape_helpers;

namespace {

using Inputs = std::vector<const Tensor *>;

/// At most this many taps per window: the int32 sums of TFLM and of
/// CMSIS-NN's saturating DSP adds are exact.
constexpr int64_t kMostTaps = int64_t(1) << 16;

struct PoolGeometry {
  int64_t n, h, w, c, oh, ow, kh, kw, sh, sw, pt, pl;
  ActivationRange act{};
};

PoolGeometry poolGeometry(const Node &node) {
  requireInt16(node, 0, "X");
  const float in = int16Scale(node, node.input(0), "X");
  if (node.output(0) && node.output(0)->type.dtype == DType::Int16 &&
      !node.output(0)->type.quant.scales.empty() &&
      std::abs(double(in) - double(int16Scale(node, node.output(0), "Y"))) > 1.0e-6)
    unsupported(node, "the output's scale must be the input's (TFLM's int16 pooling does not "
                      "rescale)");
  const Shape &xs = node.input(0)->type.shape;
  const std::vector<int64_t> k = node.attrs.getInts("kernel_shape", {});
  const std::vector<int64_t> s = node.attrs.getInts("strides", {1, 1});
  const std::vector<int64_t> p = node.attrs.getInts("pads", {0, 0, 0, 0});
  if (xs.size() != 4 || k.size() != 2 || s.size() != 2 || p.size() != 4 || k[0] < 1 || k[1] < 1 ||
      s[0] < 1 || s[1] < 1 || p[0] < 0 || p[1] < 0 || p[2] < 0 || p[3] < 0)
    unsupported(node, "X " + node.input(0)->type.str() +
                          " is not NHWC or the window's kernel_shape, strides or pads are bad");
  constexpr int64_t kLimit = int64_t(1) << 30;
  for (int64_t v : {xs[0], xs[1], xs[2], xs[3], k[0], k[1], s[0], s[1], p[0], p[1], p[2], p[3]})
    if (v > kLimit)
      unsupported(node, "sizes beyond int32");
  PoolGeometry g{xs[0], xs[1], xs[2], xs[3], 0, 0, k[0], k[1], s[0], s[1], p[0], p[1]};
  if (g.h + p[0] + p[2] < g.kh || g.w + p[1] + p[3] < g.kw || g.kh * g.kw > kMostTaps)
    unsupported(node, "the window is larger than the padded input or than " +
                          std::to_string(kMostTaps) + " taps");
  if (p[0] >= g.kh || p[1] >= g.kw || p[2] >= g.kh || p[3] >= g.kw)
    unsupported(node, "a window would lie wholly in the padding");
  g.oh = (g.h + p[0] + p[2] - g.kh) / g.sh + 1;
  g.ow = (g.w + p[1] + p[3] - g.kw) / g.sw + 1;
  if (g.n * g.h * g.w * g.c > kLimit || g.n * g.oh * g.ow * g.c > kLimit)
    unsupported(node, "sizes beyond int32");
  g.act = activationRange(node);
  return g;
}

void inferPool(Node &node) {
  const PoolGeometry g = poolGeometry(node);
  requireSingleOutput(node, "Y");
  setDTypeAndShape(*node.output(0), DType::Int16, {g.n, g.oh, g.ow, g.c});
}

/// The reference: TFLM's loops, written plainly.
void poolKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  const PoolGeometry g = poolGeometry(node);
  const bool max = node.opType == "Int16MaxPool";
  const int16_t *x = inputs[0]->data<int16_t>();
  int16_t *y = outputs[0].data<int16_t>();
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox)
        for (int64_t c = 0; c < g.c; ++c) {
          const int64_t y0 = oy * g.sh - g.pt, x0 = ox * g.sw - g.pl;
          int64_t acc = max ? -32768 : 0, count = 0;
          for (int64_t iy = std::max<int64_t>(y0, 0); iy < std::min(y0 + g.kh, g.h); ++iy)
            for (int64_t ix = std::max<int64_t>(x0, 0); ix < std::min(x0 + g.kw, g.w); ++ix) {
              const int64_t v = x[((n * g.h + iy) * g.w + ix) * g.c + c];
              acc = max ? std::max(acc, v) : acc + v;
              ++count;
            }
          if (!max) // half away from zero; C++ division truncates toward zero
            acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
          y[((n * g.oh + oy) * g.ow + ox) * g.c + c] = clamp16(acc, g.act.lo, g.act.hi);
        }
}

std::vector<KernelCall> lowerPool(const Node &node, const PlanView &) {
  const PoolGeometry g = poolGeometry(node);
  std::vector<int32_t> table;
  for (int64_t v : {g.n, g.h, g.w, g.c, g.oh, g.ow, g.kh, g.kw, g.sh, g.sw, g.pt, g.pl})
    table.push_back(int32_t(v)); // each below 2^30 (poolGeometry)
  table.push_back(g.act.lo), table.push_back(g.act.hi);
  table.push_back(node.opType == "Int16MaxPool" ? 1 : 0);
  call_args::Args args;
  args.addr(node.input(0)).addr(node.output(0));
  return {args.table(table).call("bf_pool_s16")};
}

uint64_t poolMacs(const Node &node) {
  const PoolGeometry g = poolGeometry(node);
  return macProduct(node, {uint64_t(g.n * g.oh * g.ow), uint64_t(g.c), uint64_t(g.kh * g.kw)});
}

/// arm_avgpool_s16 / arm_max_pool_s16 take any batch and geometry.
std::string cmsisChoose(const Node &node, CmsisExtension, std::string *) {
  return node.opType == "Int16MaxPool" ? "arm_max_pool_s16" : "arm_avgpool_s16";
}

/// arm_avgpool_s16_get_buffer_size: arm_avgpool_s8's (C int32 sums with DSP).
int64_t cmsisAvgPoolScratch(const Node &node, const std::string &, CmsisExtension extension) {
  const PoolGeometry g = poolGeometry(node);
  return cmsisAvgPoolBufferSize(int32_t(g.ow), int32_t(g.c), extension);
}

/// arm_avgpool_s16 / arm_max_pool_s16(ctx, pool_params {stride, padding,
/// activation}, input_dims, src, filter_dims, output_dims, dst).
KernelCall cmsisCall(const Node &node, const std::string &function) {
  using namespace call_args;
  const PoolGeometry g = poolGeometry(node);
  auto n32 = [](int64_t v) { return int32_t(v); }; // each below 2^30 (poolGeometry)
  return externalCall(function,
                      {context(node),
                       table({n32(g.sw), n32(g.sh), n32(g.pl), n32(g.pt), g.act.lo, g.act.hi}),
                       dims(n32(g.n), n32(g.h), n32(g.w), n32(g.c)), address(node.input(0)),
                       dims(1, n32(g.kh), n32(g.kw), 1),
                       dims(n32(g.n), n32(g.oh), n32(g.ow), n32(g.c)), address(node.output(0))});
}

} // namespace

void registerInt16x8Pool(OpRegistry &registry) {
  for (const char *name : {"Int16AveragePool", "Int16MaxPool"}) {
    const bool max = std::string(name) == "Int16MaxPool";
    OpDef &op = registry.add({name, inferPool, poolMacs}).runs(poolKernel);
    op.lower = lowerPool;
    op.cmsis.function = max ? "arm_max_pool_s16" : "arm_avgpool_s16";
    op.cmsis.choose = cmsisChoose;
    op.cmsis.nhwc = false;
    op.cmsis.call = cmsisCall;
    op.cmsis.prototypes = {call_args::poolPrototype(op.cmsis.function, "int16_t")};
    if (!max)
      op.cmsis.scratch = cmsisAvgPoolScratch;
  }
}

} // namespace bundlefit::int16x8
