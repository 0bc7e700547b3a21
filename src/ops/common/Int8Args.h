//===- Int8Args.h - Shared steps of the int8 kernel arguments (internal) ===//
//
// What the families' *Int8.cpp (bundlefit/ops/Int8Params.h builders) share:
// reading an operand's quantization parameters, the output multipliers, the
// clamp range of a fused activation, 2-D windows and 6-D strides. Errors are
// Error(Unsupported) naming the node.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/Int8Params.h"
#include "bundlefit/ops/ShapeHelpers.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit::int8_args {

using Ints = std::vector<int64_t>;

using shape_helpers::unsupported;
/// `v` as int32, or Unsupported.
int32_t narrow(const Node &node, int64_t v);

/// The int8 operand `value` with one scale and zero point (activations).
struct Affine {
  float scale = 1.0f;
  int32_t zeroPoint = 0;
  bool operator==(const Affine &o) const { return scale == o.scale && zeroPoint == o.zeroPoint; }
};

/// Operand `value` of `node` (Unsupported naming `role` when missing).
const Value &operand(const Node &node, const Value *value, const char *role);
/// One scale and zero point of int8 activation `value`.
Affine activationParams(const Node &node, const Value *value, const char *role);
/// int8 weight scales: one, or `channels` (per channel).
std::vector<float> weightScales(const Node &node, const Value *value, int64_t channels);
/// -(zero point) per output channel (zero points beyond one, or none, as 0).
std::vector<int32_t> weightOffsets(const Value &w, int64_t channels);
Int8Scale scaleOf(double real);
/// Clamp range of an int8 output from [lo, hi] in real numbers.
void clampRange(const Affine &out, double lo, double hi, int32_t &actMin, int32_t &actMax);
/// The clamp range of the `activation` attribute of Conv/Gemm.
void fusedActivationRange(const Node &node, const Affine &out, int32_t &actMin, int32_t &actMax);

/// Spatial window of Conv/Pool as 2-D (1-D gets H = KH = 1).
struct Window2D {
  int32_t H = 1, W = 1, OH = 1, OW = 1, KH = 1, KW = 1, strideH = 1, strideW = 1;
  int32_t padT = 0, padL = 0, padB = 0, padR = 0, dilH = 1, dilW = 1;
};

Window2D window2D(const Node &node, const Shape &in, const Shape &out, const Ints &kernel,
                  bool ceilMode);
/// Output multipliers (inScale * wScale[c] / outScale) and the bias.
void fillRequantization(const Node &node, Int8ConvArgs &args, const Affine &in,
                        const std::vector<float> &wScales, const Affine &out, const Value *bias,
                        int64_t channels);
/// `shape` as 6-D dims (front-padded with 1) and dense strides.
void dims6(const Node &node, const Shape &shape, std::array<int32_t, 6> &dims,
           std::array<int32_t, 6> &strides);

} // namespace bundlefit::int8_args
