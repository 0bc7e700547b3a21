//===- Int8Args.cpp - Shared steps of the int8 kernel arguments -----------===//
//
// TFLM's Prepare() arithmetic (conv.cc, fully_connected.cc, add.cc, mul.cc,
// softmax_common.cc, quantize.cc): the steps the families' *Int8.cpp share.
//
//===----------------------------------------------------------------------===//
#include "common/Int8Args.h"

#include "bundlefit/ops/ShapeHelpers.h"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>

namespace bundlefit {

namespace int8_args {

int32_t narrow(const Node &node, int64_t v) {
  if (v > INT32_MAX || v < INT32_MIN)
    unsupported(node, "value " + std::to_string(v) + " exceeds int32");
  return int32_t(v);
}

const Value &operand(const Node &node, const Value *value, const char *role) {
  if (!value)
    unsupported(node, std::string("the ") + role + " operand is missing");
  return *value;
}

Affine activationParams(const Node &node, const Value *value, const char *role) {
  const Value &v = operand(node, value, role);
  if (v.type.dtype != DType::Int8 || v.type.quant.empty())
    unsupported(node, std::string("the ") + role + " '" + v.name + "' (" + v.type.str() +
                          ") is not int8 with quantization parameters");
  if (v.type.quant.scales.size() != 1 || v.type.quant.zeroPoints.size() != 1)
    unsupported(node, std::string("the ") + role + " '" + v.name +
                          "' needs one scale and one zero point");
  if (!(v.type.quant.scales[0] > 0.0f))
    unsupported(node, std::string("the ") + role + " '" + v.name + "' has a scale <= 0");
  return {v.type.quant.scales[0], v.type.quant.zeroPoints[0]};
}

/// int8 weight scales: one, or `channels` (per channel).
std::vector<float> weightScales(const Node &node, const Value *value, int64_t channels) {
  const Value &w = operand(node, value, "weight");
  const QuantParams &q = w.type.quant;
  if (w.type.dtype != DType::Int8 || q.empty())
    unsupported(node, "the weight '" + w.name + "' (" + w.type.str() +
                          ") is not int8 with quantization parameters");
  if (q.scales.size() != 1 && int64_t(q.scales.size()) != channels)
    unsupported(node, "the weight '" + w.name + "' has " + std::to_string(q.scales.size()) +
                          " scales for " + std::to_string(channels) + " output channels");
  if (q.zeroPoints.size() > 1 && q.zeroPoints.size() != q.scales.size())
    unsupported(node, "the weight '" + w.name + "' has " + std::to_string(q.zeroPoints.size()) +
                          " zero points for " + std::to_string(q.scales.size()) + " scales");
  for (float s : q.scales)
    if (!(s > 0.0f))
      unsupported(node, "the weight '" + w.name + "' has a scale <= 0");
  return q.scales;
}

/// -(zero point) of each of `channels` weight channels (one zero point is
/// every channel's): the asymmetric kernels' wOffset table.
std::vector<int32_t> weightOffsets(const Value &w, int64_t channels) {
  const std::vector<int32_t> &zp = w.type.quant.zeroPoints;
  std::vector<int32_t> offsets(size_t(channels), 0);
  for (int64_t c = 0; c < channels && !zp.empty(); ++c)
    offsets[size_t(c)] = -zp[zp.size() == 1 ? 0 : size_t(c)];
  return offsets;
}

Int8Scale scaleOf(double real) {
  Int8Scale s;
  int shift = 0;
  quantizeMultiplier(real, s.mult, shift);
  s.shift = shift;
  return s;
}

/// Clamp range of an int8 output from a fused (or standalone) activation:
/// [lo, hi] in real numbers, either side possibly unbounded.
void clampRange(const Affine &out, double lo, double hi, int32_t &actMin, int32_t &actMax) {
  actMin = std::max<int32_t>(-128, quantizeToInt8(lo, out.scale, out.zeroPoint));
  actMax = std::min<int32_t>(127, quantizeToInt8(hi, out.scale, out.zeroPoint));
}

/// The `activation` attribute of Conv/Gemm (passes/FuseActivations).
void fusedActivationRange(const Node &node, const Affine &out, int32_t &actMin, int32_t &actMax) {
  actMin = -128, actMax = 127;
  const std::string name = node.attrs.getString("activation", "");
  if (name.empty() || name == "None" || name == "none")
    return;
  if (name == "Relu")
    return clampRange(out, 0.0, DBL_MAX, actMin, actMax);
  if (name == "Clip")
    return clampRange(out, node.attrs.getFloat("activation_min", -FLT_MAX),
                      node.attrs.getFloat("activation_max", FLT_MAX), actMin, actMax);
  unsupported(node, "fused activation '" + name + "' has no int8 kernel (Relu and Clip do)");
}

Window2D window2D(const Node &node, const Shape &in, const Shape &out, const Ints &kernel,
                  bool ceilMode) {
  const size_t rank = in.size();
  if ((rank != 3 && rank != 4) || out.size() != rank || kernel.size() != rank - 2)
    unsupported(node,
                "int8 kernels take 1-D and 2-D windows only (input " + shapeToString(in) + ")");
  const Ints inSpatial(in.begin() + 2, in.end());
  const shape_helpers::Window w = shape_helpers::resolveWindow(node, inSpatial, kernel, ceilMode);
  for (size_t i = 0; i < rank - 2; ++i)
    if (w.outSpatial[i] != out[2 + i])
      unsupported(node, "output " + shapeToString(out) + " differs from the window geometry");
  Window2D g;
  const size_t x = rank - 3; // W's index among the spatial dims; H is 0 when 2-D
  if (rank == 4) {
    g.H = narrow(node, in[2]), g.OH = narrow(node, out[2]), g.KH = narrow(node, kernel[0]);
    g.strideH = narrow(node, w.strides[0]), g.dilH = narrow(node, w.dilations[0]);
    g.padT = narrow(node, w.padsBegin[0]), g.padB = narrow(node, w.padsEnd[0]);
  }
  g.W = narrow(node, in[rank - 1]), g.OW = narrow(node, out[rank - 1]);
  g.KW = narrow(node, kernel[x]), g.strideW = narrow(node, w.strides[x]);
  g.dilW = narrow(node, w.dilations[x]);
  g.padL = narrow(node, w.padsBegin[x]), g.padR = narrow(node, w.padsEnd[x]);
  return g;
}

/// Output multipliers (inScale * wScale[c] / outScale) and the bias.
void fillRequantization(const Node &node, Int8ConvArgs &args, const Affine &in,
                        const std::vector<float> &wScales, const Affine &out, const Value *bias,
                        int64_t channels) {
  args.perChannel = wScales.size() > 1;
  args.singleRounding = node.attrs.getString(kInt8RoundingAttr, "") == "single";
  for (float ws : wScales) {
    const Int8Scale s = scaleOf(double(in.scale) * double(ws) / double(out.scale));
    args.outMult.push_back(s.mult), args.outShift.push_back(s.shift);
  }
  if (!bias)
    return;
  if (bias->type.numElements() != channels)
    unsupported(node, "the bias '" + bias->name + "' " + shapeToString(bias->type.shape) +
                          " does not have one element per output channel (" +
                          std::to_string(channels) + ")");
  if (bias->type.dtype == DType::Int32)
    return;
  if (bias->type.dtype != DType::Int8 || bias->type.quant.empty())
    unsupported(node, "the bias '" + bias->name + "' (" + bias->type.str() +
                          ") is neither int32 nor quantized int8");
  const QuantParams &bq = bias->type.quant;
  if (bq.scales.size() != 1 && int64_t(bq.scales.size()) != channels)
    unsupported(node, "the bias '" + bias->name + "' has " + std::to_string(bq.scales.size()) +
                          " scales");
  for (int32_t zp : bq.zeroPoints)
    if (zp != 0)
      unsupported(node, "the int8 bias '" + bias->name + "' is not symmetric");
  args.int8Bias = true;
  // One multiplier per channel whenever either side is per channel.
  const size_t n = std::max(wScales.size(), bq.scales.size());
  if (n > 1 && !args.perChannel) { // Per-tensor weights, per-channel bias.
    args.perChannel = true;
    args.outMult.assign(size_t(channels), args.outMult[0]);
    args.outShift.assign(size_t(channels), args.outShift[0]);
  }
  for (size_t c = 0; c < n; ++c) {
    const double bs = bq.scales[bq.scales.size() == 1 ? 0 : c];
    const double ws = wScales[wScales.size() == 1 ? 0 : c];
    int32_t m = 0;
    int shift = 0;
    quantizeMultiplierUnbounded(bs / (double(in.scale) * ws), m, shift);
    args.biasMult.push_back(m), args.biasShift.push_back(shift);
  }
}

/// `shape` as 6-D dims (front-padded with 1) and dense strides.
void dims6(const Node &node, const Shape &shape, std::array<int32_t, 6> &dims,
           std::array<int32_t, 6> &strides) {
  if (shape.size() > 6)
    unsupported(node, "int8 kernels take at most 6 dimensions");
  dims.fill(1), strides.fill(0);
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const size_t d = 5 - i, s = shape.size() - 1 - i;
    dims[d] = narrow(node, shape[s]);
    strides[d] = narrow(node, stride);
    stride *= shape[s];
  }
}

} // namespace int8_args

void quantizeMultiplierUnbounded(double real, int32_t &multiplier, int &shift) {
  if (real == 0.0) {
    multiplier = 0, shift = 0;
    return;
  }
  if (!(real > 0.0) || !std::isfinite(real))
    fatalInternal("quantizeMultiplier: the real multiplier " + std::to_string(real) +
                  " is not positive and finite");
  const double q = std::frexp(real, &shift); // real = q * 2^shift, q in [0.5, 1)
  int64_t fixed = int64_t(std::round(q * double(1ll << 31)));
  if (fixed == (1ll << 31)) { // q rounded up to 1.0
    fixed /= 2;
    ++shift;
  }
  if (shift < -31) { // Flush what every shift would move out to zero.
    shift = 0;
    fixed = 0;
  }
  multiplier = int32_t(fixed);
}

void quantizeMultiplier(double real, int32_t &multiplier, int &shift) {
  quantizeMultiplierUnbounded(real, multiplier, shift);
  if (shift > 30) // TFLM: the largest representable multiplier.
    shift = 30, multiplier = INT32_MAX;
}

int32_t quantizeToInt8(double real, float scale, int32_t zeroPoint) {
  // TFLM divides in float; out-of-range reals (FLT_MAX bounds) saturate.
  const double bounded = std::max(-1.0e30, std::min(1.0e30, real));
  const float q = float(bounded) / scale;
  const double r = std::round(double(q));
  const double v = std::max(-1024.0, std::min(1024.0, r)) + zeroPoint;
  return int32_t(std::max(-128.0, std::min(127.0, v)));
}

size_t setInt8SingleRounding(Graph &graph, bool single) {
  size_t count = 0;
  for (Node *node : graph.nodes()) {
    const OpDef *def = OpRegistry::get().find(node->opType);
    if (!def || !def->int8.singleRounding || !isInt8Node(*node))
      continue;
    if (!single) {
      node->attrs.erase(kInt8RoundingAttr);
      continue;
    }
    node->attrs.setString(kInt8RoundingAttr, "single");
    ++count;
  }
  return count;
}

} // namespace bundlefit
