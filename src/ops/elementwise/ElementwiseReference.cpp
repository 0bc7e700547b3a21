//===- ElementwiseReference.cpp - The int8 reference Add, Mul, Relu, Clip ---===//
//
// TFLite's int8 arithmetic (reference_integer_ops::Add / Mul), with numpy
// broadcasting, and the clamp of Relu and Clip (common/Int8Reference.h):
//
//   Add: each input (q - zeroPoint) * 2^20 is brought to a common scale
//        (twice the larger input scale) by MultiplyByQuantizedMultiplier,
//        the two are summed, and the sum brought to the output scale;
//   Mul: requantize((a - aZeroPoint) * (b - bZeroPoint), aScale * bScale / yScale);
//        in a pre-quantized ONNX model (kInt8RoundingAttr "single"),
//        onnxruntime's nearbyint(float(aScale * bScale / yScale) * product);
//   Relu/Clip: the input at the output's parameters (a plain copy when they
//        are equal, else requantized), clamped to the bounds' int8 values.
//
//===----------------------------------------------------------------------===//
#include "elementwise/Elementwise.h"

#include "bundlefit/ops/ShapeHelpers.h"
#include "common/Broadcast.h"
#include "common/Int8Reference.h"
#include "common/RequantizeTable.h"

#include <cmath>

#include <algorithm>
#include <cfloat>

namespace bundlefit::elementwise_reference {

using namespace int8_ref;

namespace {

/// out[i] = f(a[ia], b[ib]) over the broadcast output shape.
template <typename F>
void broadcastBinary(const Node &node, const Tensor &a, const Tensor &b, Tensor &out, F f) {
  const Shape &shape = out.type.shape;
  if (a.type.shape.size() > shape.size() || b.type.shape.size() > shape.size())
    shape_helpers::unsupported(node, "an operand has a higher rank than the output");
  const std::vector<int64_t> ia = broadcastIndexMap(a.type.shape, shape);
  const std::vector<int64_t> ib = broadcastIndexMap(b.type.shape, shape);
  const int8_t *ad = a.data<int8_t>(), *bd = b.data<int8_t>();
  int8_t *yd = out.data<int8_t>();
  for (size_t i = 0; i < ia.size(); ++i)
    yd[i] = f(ad[ia[i]], bd[ib[i]]);
}

} // namespace

void add(const Node &node, const std::vector<const Tensor *> &inputs,
         std::vector<Tensor> &outputs) {
  const Affine pa = activationOf(node, node.input(0), "first input");
  const Affine pb = activationOf(node, node.input(1), "second input");
  const Affine py = activationOf(node, node.output(0), "output");
  constexpr int32_t kLeftShift = 20;
  const double twiceMax = 2.0 * std::max(pa.scale, pb.scale);
  const Multiplier qa = quantizeMultiplier(pa.scale / twiceMax);
  const Multiplier qb = quantizeMultiplier(pb.scale / twiceMax);
  const Multiplier qy = quantizeMultiplier(twiceMax / (double(1 << kLeftShift) * py.scale));
  int32_t lo, hi;
  fusedActivationRange(node, py, lo, hi);
  broadcastBinary(node, *inputs[0], *inputs[1], outputs[0], [&](int8_t a, int8_t b) {
    const int32_t sa = multiplyByQuantizedMultiplier(shiftLeft(a - pa.zeroPoint, kLeftShift), qa);
    const int32_t sb = multiplyByQuantizedMultiplier(shiftLeft(b - pb.zeroPoint, kLeftShift), qb);
    const int32_t sum = int32_t(uint32_t(sa) + uint32_t(sb));
    return clampToInt8(int64_t(multiplyByQuantizedMultiplier(sum, qy)) + py.zeroPoint, lo, hi);
  });
}

void mul(const Node &node, const std::vector<const Tensor *> &inputs,
         std::vector<Tensor> &outputs) {
  const Affine pa = activationOf(node, node.input(0), "first input");
  const Affine pb = activationOf(node, node.input(1), "second input");
  const Affine py = activationOf(node, node.output(0), "output");
  const Multiplier q = quantizeMultiplier(pa.scale * pb.scale / py.scale);
  // An ONNX model's: onnxruntime's QLinearMul, in float (MLAS).
  const bool onnx = singleRoundingOf(node);
  const float ratio = float(pa.scale) * float(pb.scale) / float(py.scale);
  int32_t lo, hi;
  fusedActivationRange(node, py, lo, hi);
  broadcastBinary(node, *inputs[0], *inputs[1], outputs[0], [&](int8_t a, int8_t b) {
    const int32_t product = (a - pa.zeroPoint) * (b - pb.zeroPoint);
    if (onnx) {
      const float scaled = ratio * float(product);
      return clampToInt8(int64_t(std::nearbyint(scaled)) + py.zeroPoint, lo, hi);
    }
    return clampToInt8(int64_t(multiplyByQuantizedMultiplier(product, q)) + py.zeroPoint, lo, hi);
  });
}

/// Relu and Clip: `lowReal`/`highReal` are the bounds in real numbers.
void clampAt(const Node &node, const Tensor &x, Tensor &y, double lowReal, double highReal) {
  const Affine in = activationOf(node, node.input(0), "input");
  const Affine out = activationOf(node, node.output(0), "output");
  const int32_t lo = quantizeBound(lowReal, out), hi = quantizeBound(highReal, out);
  const std::array<int8_t, 256> table =
      requantizeTable(float(in.scale), in.zeroPoint, float(out.scale), out.zeroPoint, lo, hi);
  const int8_t *xd = x.data<int8_t>();
  int8_t *yd = y.data<int8_t>();
  for (int64_t i = 0; i < y.numElements(); ++i)
    yd[i] = in == out ? clampToInt8(xd[i], lo, hi) : table[size_t(xd[i] + 128)];
}

void relu(const Node &node, const std::vector<const Tensor *> &inputs,
          std::vector<Tensor> &outputs) {
  clampAt(node, *inputs[0], outputs[0], 0.0, DBL_MAX);
}

void clip(const Node &node, const std::vector<const Tensor *> &inputs,
          std::vector<Tensor> &outputs) {
  // Bounds are constants: float reals, or int8 in the input's parameters.
  auto bound = [&](size_t i, double fallback) {
    const Value *v = node.input(i);
    if (!v || v->type.numElements() == 0)
      return fallback;
    if (!v->isConstant())
      shape_helpers::unsupported(node, "Clip bound '" + v->name + "' must be a constant");
    const double raw = v->elementAsDouble(0);
    if (v->type.dtype == DType::Int8 && !v->type.quant.empty())
      return double(v->type.quant.scales[0]) * (raw - v->type.quant.zeroPoints[0]);
    return raw;
  };
  clampAt(node, *inputs[0], outputs[0], bound(1, -DBL_MAX), bound(2, DBL_MAX));
}

} // namespace bundlefit::elementwise_reference

namespace bundlefit {

void registerElementwiseInt8Reference(OpRegistry &registry) {
  registry.at("Add").int8Runs(elementwise_reference::add);
  registry.at("Mul").int8Runs(elementwise_reference::mul);
  registry.at("Relu").int8Runs(elementwise_reference::relu);
  registry.at("Clip").int8Runs(elementwise_reference::clip);
}

} // namespace bundlefit
