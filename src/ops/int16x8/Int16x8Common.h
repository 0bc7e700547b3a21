//===- Int16x8Common.h - What the int16x8 operators share (family-internal) ===//
//
// The operand checks and integer helpers of src/ops/int16x8: TFLite's int16
// activations have one scale and zero point 0; results are clamped to int16.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/ShapeHelpers.h"

#include "common/Int8Reference.h"

#include <string>

namespace bundlefit::int16x8 {

/// The one scale of int16 operand `v` (zero point 0).
inline float int16Scale(const Node &node, const Value *v, const char *role) {
  if (!v || v->type.dtype != DType::Int16 || v->type.quant.scales.size() != 1 ||
      v->type.quant.zeroPoints[0] != 0)
    shape_helpers::unsupported(node, std::string(role) +
                                         " must be int16 with one scale and zero point 0");
  return v->type.quant.scales[0];
}

inline void requireInt16(const Node &node, size_t i, const char *role) {
  const Value &v = shape_helpers::requireInput(node, i, role);
  if (v.type.dtype != DType::Int16)
    shape_helpers::unsupported(node, std::string(role) + " must be int16, got " + v.type.str());
}

inline int16_t clamp16(int64_t v, int32_t lo = -32768, int32_t hi = 32767) {
  return int16_t(v < lo ? lo : v > hi ? hi : v);
}

/// TFLM's MultiplyByQuantizedMultiplier of an int64 accumulator (the
/// multiplier rounded to 16 bits, one rounding shift).
inline int32_t mbqm64(int64_t x, int8_ref::Multiplier q) {
  const int64_t reduced = q.m < 0x7FFF0000 ? (int64_t(q.m) + (1 << 15)) >> 16 : 0x7FFF;
  const int total = 15 - q.s;
  return int32_t((x * reduced + (int64_t(1) << (total - 1))) >> total);
}

/// The clamp of a fused activation in the output's integers: attribute
/// activation_range [lo, hi], which the TFLite importer computes as TFLM's
/// CalculateActivationRangeQuantized does; int16's range without it.
struct ActivationRange {
  int32_t lo = -32768, hi = 32767;
};

inline ActivationRange activationRange(const Node &node) {
  const std::vector<int64_t> range = node.attrs.getInts("activation_range", {-32768, 32767});
  if (range.size() != 2 || range[0] < -32768 || range[1] > 32767 || range[0] > range[1])
    shape_helpers::unsupported(node, "bad activation_range " + shape_helpers::intsToString(range) +
                                         " (two int16 values, low first)");
  return {int32_t(range[0]), int32_t(range[1])};
}

/// Registered by registerInt16x8Ops.
void registerInt16x8Pool(OpRegistry &registry);
void registerInt16x8Softmax(OpRegistry &registry);

} // namespace bundlefit::int16x8
