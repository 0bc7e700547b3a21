//===- Int8Params.cpp - A quantized node's int8 kernel arguments -----------===//
//
// TFLM's Prepare() arithmetic (conv.cc, fully_connected.cc, add.cc, mul.cc,
// softmax_common.cc, quantize.cc), computed once at compile time from the
// node's operand types. See Int8Params.h.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/int8/Int8Params.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/Softmax.h"

#include "bundlefit/ops/ShapeHelpers.h"

#include "bundlefit/support/Error.h"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>

namespace bundlefit {

namespace {

using Ints = std::vector<int64_t>;

[[noreturn]] void unsupported(const Node &node, const std::string &what) {
  throw Error(ExitCode::Unsupported, node.describe() + ": " + what);
}

int32_t narrow(const Node &node, int64_t v) {
  if (v > INT32_MAX || v < INT32_MIN)
    unsupported(node, "value " + std::to_string(v) + " exceeds int32");
  return int32_t(v);
}

/// The int8 operand `value` with one scale and zero point (activations).
struct Affine {
  float scale = 1.0f;
  int32_t zeroPoint = 0;
  bool operator==(const Affine &o) const { return scale == o.scale && zeroPoint == o.zeroPoint; }
};

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

/// Symmetric int8 weight scales: one, or `channels` (per channel).
std::vector<float> weightScales(const Node &node, const Value *value, int64_t channels) {
  const Value &w = operand(node, value, "weight");
  const QuantParams &q = w.type.quant;
  if (w.type.dtype != DType::Int8 || q.empty())
    unsupported(node, "the weight '" + w.name + "' (" + w.type.str() +
                          ") is not int8 with quantization parameters");
  if (q.scales.size() != 1 && int64_t(q.scales.size()) != channels)
    unsupported(node, "the weight '" + w.name + "' has " + std::to_string(q.scales.size()) +
                          " scales for " + std::to_string(channels) + " output channels");
  for (int32_t zp : q.zeroPoints)
    if (zp != 0)
      unsupported(node, "the weight '" + w.name + "' is not symmetric (zero point " +
                            std::to_string(zp) + ")");
  for (float s : q.scales)
    if (!(s > 0.0f))
      unsupported(node, "the weight '" + w.name + "' has a scale <= 0");
  return q.scales;
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

/// Spatial window of Conv/Pool as 2-D (1-D gets H = KH = 1).
struct Window2D {
  int32_t H = 1, W = 1, OH = 1, OW = 1, KH = 1, KW = 1, strideH = 1, strideW = 1;
  int32_t padT = 0, padL = 0, padB = 0, padR = 0, dilH = 1, dilW = 1;
};

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

} // namespace

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

Int8ConvArgs int8ConvArgs(const Node &node) {
  Int8ConvArgs args;
  const Value &x = operand(node, node.input(0), "input");
  const Value &w = operand(node, node.input(1), "weight");
  const Value &y = operand(node, node.output(0), "output");
  const Affine in = activationParams(node, &x, "input");
  const Affine out = activationParams(node, &y, "output");
  const Shape &xs = x.type.shape, &ys = y.type.shape, &ws = w.type.shape;
  if (ws.size() != xs.size() || xs.size() < 3)
    unsupported(node, "weight rank differs from input rank");
  const Window2D g = window2D(node, xs, ys, Ints(ws.begin() + 2, ws.end()), false);
  const int64_t groups = node.attrs.getInt("group", 1);
  const int64_t C = xs[1], M = ys[1];
  if (groups <= 0 || C % groups != 0 || M % groups != 0 || ws[0] != M || ws[1] != C / groups)
    unsupported(node, "group " + std::to_string(groups) + " does not match the weight " +
                          shapeToString(ws));
  args.N = narrow(node, xs[0]), args.C = narrow(node, C), args.M = narrow(node, M);
  args.H = g.H, args.W = g.W, args.OH = g.OH, args.OW = g.OW, args.KH = g.KH, args.KW = g.KW;
  args.strideH = g.strideH, args.strideW = g.strideW, args.padT = g.padT, args.padL = g.padL;
  args.dilH = g.dilH, args.dilW = g.dilW, args.groups = narrow(node, groups);
  args.depthwise = groups > 1 && groups == C;
  args.chMult = args.depthwise ? narrow(node, M / C) : 1;
  args.inputOffset = -in.zeroPoint, args.outputOffset = out.zeroPoint;
  fusedActivationRange(node, out, args.actMin, args.actMax);
  fillRequantization(node, args, in, weightScales(node, &w, M), out, node.input(2), M);
  return args;
}

Int8ConvArgs int8GemmArgs(const Node &node) {
  Int8ConvArgs args;
  const Value &a = operand(node, node.input(0), "input");
  const Value &b = operand(node, node.input(1), "weight");
  const Value &y = operand(node, node.output(0), "output");
  if (node.attrs.getInt("transA", 0) != 0)
    unsupported(node, "transA=1 has no int8 kernel");
  if (node.attrs.getFloat("alpha", 1.0f) != 1.0f || node.attrs.getFloat("beta", 1.0f) != 1.0f)
    unsupported(node, "int8 Gemm needs alpha = beta = 1");
  const Affine in = activationParams(node, &a, "input");
  const Affine out = activationParams(node, &y, "output");
  const Shape &as = a.type.shape, &bs = b.type.shape, &ys = y.type.shape;
  if (as.size() != 2 || bs.size() != 2 || ys.size() != 2)
    unsupported(node, "int8 Gemm needs 2-D operands");
  args.transB = narrow(node, node.attrs.getInt("transB", 0) != 0);
  args.batches = narrow(node, as[0]), args.accumDepth = narrow(node, as[1]);
  args.outDepth = narrow(node, ys[1]);
  if (bs[args.transB ? 1 : 0] != as[1] || bs[args.transB ? 0 : 1] != ys[1])
    unsupported(node, "weight " + shapeToString(bs) + " does not match the input");
  args.inputOffset = -in.zeroPoint, args.filterOffset = 0, args.outputOffset = out.zeroPoint;
  fusedActivationRange(node, out, args.actMin, args.actMax);
  fillRequantization(node, args, in, weightScales(node, &b, ys[1]), out, node.input(2), ys[1]);
  return args;
}

size_t setInt8SingleRounding(Graph &graph, bool single) {
  size_t count = 0;
  for (Node *node : graph.nodes()) {
    if ((node->opType != "Conv" && node->opType != "Gemm") || !isInt8Node(*node))
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

Int8PoolArgs int8PoolArgs(const Node &node) {
  Int8PoolArgs args;
  const Value &x = operand(node, node.input(0), "input");
  const Value &y = operand(node, node.output(0), "output");
  const Affine in = activationParams(node, &x, "input");
  const Affine out = activationParams(node, &y, "output");
  if (!(in == out))
    unsupported(node, "int8 pooling needs equal input and output quantization parameters");
  const Shape &xs = x.type.shape, &ys = y.type.shape;
  if (xs.size() < 3)
    unsupported(node, "input rank below 3");
  args.NC = narrow(node, xs[0] * xs[1]);
  args.padValue = in.zeroPoint;
  if (node.opType == "GlobalAveragePool") {
    int64_t hw = 1;
    for (size_t i = 2; i < xs.size(); ++i)
      hw *= xs[i];
    args.H = 1, args.W = narrow(node, hw), args.KH = 1, args.KW = args.W;
    return args;
  }
  if (node.outputs.size() > 1 && node.output(1) && !node.output(1)->name.empty())
    unsupported(node, "MaxPool's Indices output has no int8 kernel");
  const Window2D g = window2D(node, xs, ys, node.attrs.getInts("kernel_shape"),
                              node.attrs.getInt("ceil_mode", 0) != 0);
  args.H = g.H, args.W = g.W, args.OH = g.OH, args.OW = g.OW, args.KH = g.KH, args.KW = g.KW;
  args.strideH = g.strideH, args.strideW = g.strideW, args.padT = g.padT, args.padL = g.padL;
  args.padB = g.padB, args.padR = g.padR, args.dilH = g.dilH, args.dilW = g.dilW;
  if (node.opType == "AveragePool") {
    if (g.dilH != 1 || g.dilW != 1)
      unsupported(node, "dilated AveragePool has no int8 kernel");
    args.countIncludePad = node.attrs.getInt("count_include_pad", 0) != 0;
  }
  return args;
}

Int8BinaryArgs int8BinaryArgs(const Node &node) {
  Int8BinaryArgs args;
  const Value &a = operand(node, node.input(0), "first input");
  const Value &b = operand(node, node.input(1), "second input");
  const Value &y = operand(node, node.output(0), "output");
  const Affine pa = activationParams(node, &a, "first input");
  const Affine pb = activationParams(node, &b, "second input");
  const Affine po = activationParams(node, &y, "output");
  const Shape &out = y.type.shape;
  std::array<int32_t, 6> outStrides;
  dims6(node, out, args.dims, outStrides);
  auto broadcastStrides = [&](const Value &v, std::array<int32_t, 6> &strides) {
    Shape s = v.type.shape;
    if (s.size() > out.size())
      unsupported(node, "'" + v.name + "' has a higher rank than the output");
    s.insert(s.begin(), out.size() - s.size(), 1);
    std::array<int32_t, 6> dims;
    dims6(node, s, dims, strides);
    for (size_t d = 0; d < 6; ++d) {
      if (dims[d] == 1 && args.dims[d] != 1)
        strides[d] = 0;
      else if (dims[d] != args.dims[d])
        unsupported(node, "'" + v.name + "' " + shapeToString(v.type.shape) +
                              " does not broadcast to " + shapeToString(out));
    }
  };
  broadcastStrides(a, args.aStrides);
  broadcastStrides(b, args.bStrides);
  args.aOffset = -pa.zeroPoint, args.bOffset = -pb.zeroPoint, args.outOffset = po.zeroPoint;
  if (node.opType == "Add") {
    args.leftShift = 20;
    const double twiceMax = 2.0 * double(std::max(pa.scale, pb.scale));
    args.a = scaleOf(double(pa.scale) / twiceMax);
    args.b = scaleOf(double(pb.scale) / twiceMax);
    args.out = scaleOf(twiceMax / (double(1 << args.leftShift) * double(po.scale)));
  } else if (node.opType == "Mul") {
    args.out = scaleOf(double(pa.scale) * double(pb.scale) / double(po.scale));
  } else {
    unsupported(node, "no int8 binary kernel");
  }
  fusedActivationRange(node, po, args.actMin, args.actMax);
  return args;
}

Int8RescaleArgs int8RescaleArgs(const Node &node) {
  Int8RescaleArgs args;
  const Value &x = operand(node, node.input(0), "input");
  const Value &y = operand(node, node.output(0), "output");
  const Affine in = activationParams(node, &x, "input");
  const Affine out = activationParams(node, &y, "output");
  args.n = narrow(node, y.type.numElements());
  args.clampOnly = in == out;
  args.inOffset = -in.zeroPoint, args.outOffset = out.zeroPoint;
  if (!args.clampOnly)
    args.scale = scaleOf(double(in.scale) / double(out.scale));
  double lo = -DBL_MAX, hi = DBL_MAX;
  if (node.opType == "Relu") {
    lo = 0.0;
  } else if (node.opType == "Clip") {
    // Bounds are constants: float reals, or int8 in the input's parameters.
    auto bound = [&](size_t i, double fallback) {
      const Value *v = node.input(i);
      if (!v)
        return fallback;
      if (!v->isConstant())
        unsupported(node, "Clip bound '" + v->name + "' must be a constant");
      const double raw = v->elementAsDouble(0);
      if (v->type.dtype == DType::Int8 && !v->type.quant.empty())
        return double(v->type.quant.scales[0]) * (raw - v->type.quant.zeroPoints[0]);
      return raw;
    };
    lo = bound(1, -DBL_MAX), hi = bound(2, DBL_MAX);
  } else if (node.opType != "Rescale") {
    unsupported(node, "no int8 clamp/rescale kernel");
  }
  clampRange(out, lo, hi, args.actMin, args.actMax);
  return args;
}

Int8SoftmaxArgs int8SoftmaxArgs(const Node &node) {
  Int8SoftmaxArgs args;
  const Value &x = operand(node, node.input(0), "input");
  const Value &y = operand(node, node.output(0), "output");
  const Affine in = activationParams(node, &x, "input");
  const Affine out = activationParams(node, &y, "output");
  if (out.scale != 1.0f / 256.0f || out.zeroPoint != -128)
    unsupported(node, "int8 Softmax needs output scale 1/256 and zero point -128");
  const SoftmaxExtents e = softmaxExtents(node, x.type.shape);
  args.outer = narrow(node, e.outer);
  args.axis = narrow(node, e.len);
  args.inner = narrow(node, e.inner);
  // TFLM PreprocessSoftmaxScaling(beta = 1, scale, 5 integer bits).
  constexpr int kScaledDiffIntegerBits = 5;
  const double real = std::min(double(in.scale) * double(1 << (31 - kScaledDiffIntegerBits)),
                               double((1ll << 31) - 1));
  int shift = 0;
  quantizeMultiplier(real, args.mult, shift);
  if (shift < 0)
    unsupported(node, "int8 Softmax input scale " + std::to_string(in.scale) + " is too small");
  args.shift = shift;
  // TFLM CalculateInputRadius(5, shift).
  const double radius = double((1 << kScaledDiffIntegerBits) - 1) *
                        double(1ll << (31 - kScaledDiffIntegerBits)) / double(1ll << shift);
  args.diffMin = -int32_t(std::floor(radius));
  return args;
}

Int8ConvertArgs int8ConvertArgs(const Node &node) {
  Int8ConvertArgs args;
  const Value &x = operand(node, node.input(0), "input");
  const Value &y = operand(node, node.output(0), "output");
  Affine p;
  if (node.opType == "Quantize") {
    if (x.type.dtype != DType::Float32)
      unsupported(node, "Quantize needs a float32 input");
    p = activationParams(node, &y, "output");
  } else if (node.opType == "Dequantize") {
    if (y.type.dtype != DType::Float32)
      unsupported(node, "Dequantize needs a float32 output");
    p = activationParams(node, &x, "input");
  } else {
    unsupported(node, "not a Quantize or Dequantize node");
  }
  args.n = narrow(node, y.type.numElements());
  args.scale = p.scale, args.zeroPoint = p.zeroPoint;
  return args;
}

std::vector<Int8ConcatPart> int8ConcatArgs(const Node &node) {
  const Value &y = operand(node, node.output(0), "output");
  const Affine out = activationParams(node, &y, "output");
  const Shape &ys = y.type.shape;
  const int64_t axis =
      shape_helpers::normalizeAxis(node, node.attrs.getInt("axis", 0), int64_t(ys.size()), "axis");
  std::array<int32_t, 6> outDims, outStrides;
  dims6(node, ys, outDims, outStrides);
  const size_t axis6 = 6 - ys.size() + size_t(axis);
  std::vector<Int8ConcatPart> parts;
  int64_t along = 0;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Value &x = operand(node, node.input(i), "input");
    const Affine in = activationParams(node, &x, "input");
    if (x.type.rank() != ys.size())
      unsupported(node, "input '" + x.name + "' rank differs from the output's");
    Int8ConcatPart part;
    dims6(node, x.type.shape, part.dims, part.srcStrides);
    part.dstStrides = outStrides;
    part.dstOffset = along * outStrides[axis6];
    along += x.type.shape[size_t(axis)];
    part.rescale = !(in == out);
    part.inOffset = -in.zeroPoint, part.outOffset = out.zeroPoint;
    if (part.rescale)
      part.scale = scaleOf(double(in.scale) / double(out.scale));
    if (x.type.numElements() > 0)
      parts.push_back(part);
  }
  return parts;
}

} // namespace bundlefit
