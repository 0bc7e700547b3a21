//===- Int8Reference.h - Arithmetic of the int8 reference kernels -*- C++ -*-===//
//
// The interpreter's int8 kernels (src/ops/<family>/*Reference.cpp) are the
// reference the bundles' C kernels (src/kernels/int8_*.c) are compared with,
// so they share no code with them: they read the quantization parameters
// from the operand types, derive every multiplier themselves, and compute in
// plain C++ with int64 products. Each formula is TFLite's (reference_ops and
// TFLM's Prepare()), named after it, with the rounding written out:
//
//   real = scale * (q - zeroPoint)
//   QuantizeMultiplier(real) = (m, s): real = m * 2^(s - 31), m in [2^30, 2^31)
//   MultiplyByQuantizedMultiplier(x, m, s), "double rounding":
//       SaturatingRoundingDoublingHighMul(x * 2^max(s, 0), m)   round half up
//       then RoundingDivideByPOT(., max(-s, 0))                  half away from 0
//   single rounding (int8_rounding = "single", ONNX's QLinearConv):
//       floor((x * m + 2^(30 - s)) / 2^(31 - s)) in int64       half up, once
//
// x * 2^s and sums of int32 terms wrap like the int32 arithmetic TFLite
// specifies (they never do for the shapes of real models).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include "bundlefit/ir/Tensor.h"

#include <cstdint>
#include <vector>

namespace bundlefit::int8_ref {

/// One scale and zero point of an int8 activation.
struct Affine {
  double scale = 1.0;
  int32_t zeroPoint = 0;
  bool operator==(const Affine &o) const { return scale == o.scale && zeroPoint == o.zeroPoint; }
};

/// The parameters of int8 operand `value` of `node`; throws Unsupported
/// naming the node and `role` when it is not int8 with one scale.
Affine activationOf(const Node &node, const Value *value, const char *role);

/// TFLite QuantizeMultiplier: `real` >= 0 as (m, s); reals below 2^-32 flush
/// to (0, 0); `bounded` holds s <= 30 (TFLite's limit: m saturates to
/// 2^31 - 1), unbounded for an int8 bias brought to the accumulator scale.
struct Multiplier {
  int32_t m = 0;
  int32_t s = 0;
};
Multiplier quantizeMultiplier(double real, bool bounded = true);

/// gemmlowp SaturatingRoundingDoublingHighMul: round(a * b / 2^31), ties
/// up; INT32_MIN * INT32_MIN saturates.
int32_t saturatingRoundingDoublingHighMul(int32_t a, int32_t b);
/// gemmlowp RoundingDivideByPOT: x / 2^exponent, ties away from zero.
int32_t roundingDivideByPOT(int32_t x, int32_t exponent);
/// x * 2^left in int32 arithmetic (wraps).
int32_t shiftLeft(int32_t x, int32_t left);
/// TFLite MultiplyByQuantizedMultiplier (double rounding).
int32_t multiplyByQuantizedMultiplier(int32_t x, Multiplier q);
/// The single rounding of x * m * 2^(s - 31), held to +-2^30.
int32_t multiplySingleRounding(int32_t x, Multiplier q);
/// Rounds x * real with the node's rounding (attribute int8_rounding).
int32_t requantize(int32_t x, Multiplier q, bool singleRounding);
/// Whether `node` asks for single rounding (int8_rounding = "single").
bool singleRoundingOf(const Node &node);

/// TFLite's activation-range quantization of one bound: zeroPoint +
/// round_half_away(real / scale) (division in float), held to int8.
int32_t quantizeBound(double real, const Affine &out);
/// The clamp range of an int8 output under `node`'s fused activation
/// (attribute `activation`: none, Relu or Clip with activation_min/max).
void fusedActivationRange(const Node &node, const Affine &out, int32_t &lo, int32_t &hi);

inline int8_t clampToInt8(int64_t v, int32_t lo = -128, int32_t hi = 127) {
  return int8_t(v < lo ? lo : v > hi ? hi : v);
}

/// The output stage of a layer with weights (Conv: W [M, ...]; Gemm: B with
/// `channels` columns): per output channel the accumulator's start (the
/// bias at the accumulator scale xScale * wScale[c]), the weight's zero
/// point, and the requantization of the accumulator to the output:
///   y = clamp(requantize(acc, xScale * wScale[c] / yScale) + yZeroPoint).
/// An int32 bias is used as it is; an int8 bias b with scale bs becomes
/// round_half_away(b * m * 2^(s - 31)) for (m, s) = QuantizeMultiplier(bs /
/// (xScale * wScale[c])) unbounded, saturated to int32 (bundlefit's rule for
/// --quantization-precision-bias Int8, exact for power-of-two scales).
class WeightedOutput {
public:
  /// Operands 0 (x), 1 (weight), 2 (bias, optional) and output 0 of `node`.
  WeightedOutput(const Node &node, const std::vector<const Tensor *> &inputs, int64_t channels);

  const Affine &input() const { return in_; }
  int32_t weightZeroPoint(int64_t c) const { return channels_[size_t(c)].weightZeroPoint; }
  int64_t bias(int64_t c) const { return channels_[size_t(c)].bias; }
  /// The int8 output of accumulator `acc` (wrapped to int32) for channel c.
  int8_t finish(int64_t acc, int64_t c) const;

private:
  struct Channel {
    Multiplier q;
    int32_t bias = 0;
    int32_t weightZeroPoint = 0;
  };
  Affine in_, out_;
  bool single_ = false;
  int32_t lo_ = -128, hi_ = 127;
  std::vector<Channel> channels_;
};

} // namespace bundlefit::int8_ref
