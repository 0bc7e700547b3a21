//===- FusedActivation.h - Fused activations and kernel tensor access ------===//
//
// Reference kernels of Conv, ConvTranspose, Gemm and MatMul apply the
// activation a pass fused into them (attribute `activation`, with its
// parameters: bundlefit/ops/FusedActivations.h, whose table also holds
// their defaults). FusedActivation reads them once per node; apply() maps
// one value in double precision.
//
// Also: the small helpers the reference kernels use to read any input dtype
// as double and store results in the output dtype.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/ir/Tensor.h"
#include "bundlefit/kernels/abi.h"
#include "bundlefit/ops/FusedActivations.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace bundlefit {

class FusedActivation {
public:
  explicit FusedActivation(const Node &node) : kind_(fusedActivationOf(node).code) {
    fusedActivationParams(fusedActivationOf(node), node, a_, b_);
  }

  bool isNone() const { return kind_ == BF_ACT_NONE; }

  /// The kernels' enum bf_activation, in double precision; a and b are the
  /// row's parameters (Clip: min, max; LeakyRelu: alpha; HardSigmoid and
  /// XHardSigmoid: alpha, beta).
  double apply(double x) const {
    const double a = a_, b = b_;
    switch (kind_) {
    case BF_ACT_RELU:
      return x > 0 ? x : 0.0;
    case BF_ACT_CLIP:
      return std::min(std::max(x, a), b);
    case BF_ACT_LEAKY_RELU:
      return x >= 0 ? x : x * a;
    case BF_ACT_SIGMOID:
      return 1.0 / (1.0 + std::exp(-x));
    case BF_ACT_TANH:
      return std::tanh(x);
    case BF_ACT_HARD_SIGMOID:
      return std::max(0.0, std::min(1.0, a * x + b));
    case BF_ACT_HARD_SWISH:
      return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5));
    case BF_ACT_SILU:
      return x / (1.0 + std::exp(-x));
    case BF_ACT_MISH:
      return x * std::tanh(x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)));
    case BF_ACT_X_HARD_SIGMOID:
      return x * std::max(0.0, std::min(1.0, a * x + b));
    default:
      return x;
    }
  }

private:
  int32_t kind_ = BF_ACT_NONE;
  float a_ = 0, b_ = 0;
};

namespace kernel_util {

/// All elements of `tensor` as doubles (any dtype).
inline std::vector<double> toDoubles(const Tensor &tensor) {
  std::vector<double> values(size_t(tensor.numElements()));
  if (tensor.type.dtype == DType::Float32) {
    const float *data = tensor.data<float>();
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = data[i];
  } else {
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = tensor.at(int64_t(i));
  }
  return values;
}

/// Stores `value` as element `i` of `tensor`, rounding and saturating for
/// integer dtypes.
inline void store(Tensor &tensor, int64_t i, double value) {
  auto sat = [&](double lo, double hi) {
    double r = std::nearbyint(value);
    return r < lo ? lo : r > hi ? hi : r;
  };
  switch (tensor.type.dtype) {
  case DType::Float32:
    tensor.data<float>()[i] = float(value);
    return;
  case DType::Int8:
    tensor.data<int8_t>()[i] = int8_t(sat(-128, 127));
    return;
  case DType::UInt8:
    tensor.data<uint8_t>()[i] = uint8_t(sat(0, 255));
    return;
  case DType::Int16:
    tensor.data<int16_t>()[i] = int16_t(sat(-32768, 32767));
    return;
  case DType::Int32:
    tensor.data<int32_t>()[i] = int32_t(sat(-2147483648.0, 2147483647.0));
    return;
  case DType::Int64:
    tensor.data<int64_t>()[i] = int64_t(std::nearbyint(value));
    return;
  case DType::Bool:
    tensor.data<uint8_t>()[i] = value != 0;
    return;
  }
}

/// Stores a whole vector of doubles into `tensor`.
inline void storeAll(Tensor &tensor, const std::vector<double> &values) {
  for (size_t i = 0; i < values.size(); ++i)
    store(tensor, int64_t(i), values[i]);
}

/// Row-major strides of `shape`.
inline std::vector<int64_t> stridesOf(const Shape &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

/// A required input tensor, or an Internal error.
inline const Tensor &in(const Node &node, const std::vector<const Tensor *> &inputs, size_t i) {
  if (i >= inputs.size() || !inputs[i])
    fatalInternal(node.describe() + ": kernel called without input " + std::to_string(i));
  return *inputs[i];
}

/// An optional input: nullptr when omitted or empty.
inline const Tensor *optionalIn(const std::vector<const Tensor *> &inputs, size_t i) {
  if (i >= inputs.size() || !inputs[i] || inputs[i]->numElements() == 0)
    return nullptr;
  return inputs[i];
}

} // namespace kernel_util
} // namespace bundlefit
