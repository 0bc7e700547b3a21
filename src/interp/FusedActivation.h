//===- FusedActivation.h - Fused activations and kernel tensor access ------===//
//
// Kernels of Conv, ConvTranspose, Gemm and MatMul apply the activation a pass
// fused into them (bundlefit attributes, see OpRegistry.h):
//   activation = "Relu" | "Clip" (activation_min, activation_max)
//              | "LeakyRelu" (activation_alpha, default 0.01) | "Sigmoid"
//              | "Tanh" | "HardSigmoid" (activation_alpha 0.2, activation_beta
//              0.5) | "HardSwish" | "Silu" | "Mish" | "XHardSigmoid"
//              (x * HardSigmoid(x), activation_alpha/beta)
// FusedActivation reads them once per node; apply() maps one value.
//
// Also: the small helpers the reference kernels use to read any input dtype
// as double and store results in the output dtype.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/ir/Tensor.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace bundlefit {

class FusedActivation {
public:
  enum class Kind {
    None,
    Relu,
    Clip,
    LeakyRelu,
    Sigmoid,
    Tanh,
    HardSigmoid,
    HardSwish,
    Silu,
    Mish,
    XHardSigmoid
  };

  explicit FusedActivation(const Node &node) {
    std::string name = node.attrs.getString("activation", "");
    if (name.empty())
      kind_ = Kind::None;
    else if (name == "Relu")
      kind_ = Kind::Relu;
    else if (name == "Clip")
      kind_ = Kind::Clip;
    else if (name == "LeakyRelu")
      kind_ = Kind::LeakyRelu;
    else if (name == "Sigmoid")
      kind_ = Kind::Sigmoid;
    else if (name == "Tanh")
      kind_ = Kind::Tanh;
    else if (name == "HardSigmoid")
      kind_ = Kind::HardSigmoid;
    else if (name == "HardSwish")
      kind_ = Kind::HardSwish;
    else if (name == "Silu")
      kind_ = Kind::Silu;
    else if (name == "Mish")
      kind_ = Kind::Mish;
    else if (name == "XHardSigmoid")
      kind_ = Kind::XHardSigmoid;
    else
      throw Error(ExitCode::Unsupported,
                  node.describe() + ": attribute 'activation'=\"" + name + "\" is not supported");
    min_ = node.attrs.getFloat("activation_min", -std::numeric_limits<float>::infinity());
    max_ = node.attrs.getFloat("activation_max", std::numeric_limits<float>::infinity());
    float defaultAlpha = kind_ == Kind::HardSigmoid || kind_ == Kind::XHardSigmoid ? 0.2f : 0.01f;
    alpha_ = node.attrs.getFloat("activation_alpha", defaultAlpha);
    beta_ = node.attrs.getFloat("activation_beta", 0.5f);
  }

  Kind kind() const { return kind_; }

  double apply(double x) const {
    switch (kind_) {
    case Kind::None:
      return x;
    case Kind::Relu:
      return x > 0 ? x : 0.0;
    case Kind::Clip:
      return std::min<double>(std::max<double>(x, min_), max_);
    case Kind::LeakyRelu:
      return x >= 0 ? x : x * double(alpha_);
    case Kind::Sigmoid:
      return 1.0 / (1.0 + std::exp(-x));
    case Kind::Tanh:
      return std::tanh(x);
    case Kind::HardSigmoid:
      return std::max(0.0, std::min(1.0, double(alpha_) * x + beta_));
    case Kind::HardSwish:
      return x * std::max(0.0, std::min(1.0, x / 6.0 + 0.5));
    case Kind::Silu:
      return x / (1.0 + std::exp(-x));
    case Kind::Mish:
      return x * std::tanh(x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)));
    case Kind::XHardSigmoid:
      return x * std::max(0.0, std::min(1.0, double(alpha_) * x + beta_));
    }
    return x;
  }

private:
  Kind kind_ = Kind::None;
  float min_ = 0, max_ = 0, alpha_ = 0, beta_ = 0;
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
