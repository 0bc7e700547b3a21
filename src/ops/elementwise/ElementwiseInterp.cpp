//===- ElementwiseInterp.cpp - Reference arithmetic, activations, Cast -----===//
//
// Arithmetic (Add..Min, Relu, Clip, PRelu) runs on float32, int8, uint8,
// int32 and int64 in the input's own type (integer overflow wraps, integer
// Div truncates toward zero like C and onnxruntime; x / 0 gives 0 instead of
// crashing). Transcendental activations are float32 only. Max/Min propagate
// NaN like numpy.
//
//===----------------------------------------------------------------------===//
#include "elementwise/Elementwise.h"

#include "bundlefit/ops/ActivationDefaults.h"
#include "bundlefit/ops/OpRegistry.h"

#include "bundlefit/support/Error.h"
#include "common/Broadcast.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>

namespace bundlefit {
namespace elementwise_interp {

template <typename T> struct Tag { using type = T; };

[[noreturn]] void unsupportedDType(const Node &node, DType dtype) {
  throw Error(ExitCode::Unsupported, node.describe() +
                                         ": the reference interpreter does not support " +
                                         dtypeName(dtype) + " here");
}

/// Calls fn(Tag<T>{}) with the C++ type of a numeric dtype (Bool is rejected).
template <typename Fn> void dispatchNumeric(const Node &node, DType dtype, Fn &&fn) {
  switch (dtype) {
  case DType::Float32:
    fn(Tag<float>{});
    return;
  case DType::Int8:
    fn(Tag<int8_t>{});
    return;
  case DType::UInt8:
    fn(Tag<uint8_t>{});
    return;
  case DType::Int16:
    fn(Tag<int16_t>{});
    return;
  case DType::Int32:
    fn(Tag<int32_t>{});
    return;
  case DType::Int64:
    fn(Tag<int64_t>{});
    return;
  case DType::Bool:
    break;
  }
  unsupportedDType(node, dtype);
}

const Tensor *arg(const std::vector<const Tensor *> &inputs, size_t index) {
  return index < inputs.size() ? inputs[index] : nullptr;
}

/// out = f(...f(f(in0, in1), in2)..., inN) with every input broadcast to out.
template <typename T, typename F>
void foldBroadcast(const std::vector<const Tensor *> &inputs, Tensor &out, F f) {
  T *o = out.data<T>();
  for (size_t k = 0; k < inputs.size(); ++k) {
    const T *in = inputs[k]->data<T>();
    std::vector<int64_t> map = broadcastIndexMap(inputs[k]->type.shape, out.type.shape);
    for (size_t i = 0; i < map.size(); ++i)
      o[i] = k == 0 ? in[map[i]] : f(o[i], in[map[i]]);
  }
}

template <typename T> T maxOf(T a, T b) {
  if (a != a) // NaN propagates, as in numpy.maximum
    return a;
  if (b != b)
    return b;
  return a < b ? b : a;
}

template <typename T> T minOf(T a, T b) {
  if (a != a)
    return a;
  if (b != b)
    return b;
  return b < a ? b : a;
}

template <typename T> T divide(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0)
      return 0;
    if (std::is_signed_v<T> && b == T(-1))
      return T(0 - a); // avoids the INT_MIN / -1 trap
  }
  return T(a / b);
}

/// Remainder with the dividend's sign (C's fmod, ONNX Mod fmod=1).
template <typename T> T truncMod(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0 || (std::is_signed_v<T> && b == T(-1)))
      return 0;
    return T(a % b);
  } else {
    return std::fmod(a, b);
  }
}

/// Integer remainder with the divisor's sign (Python's %, ONNX Mod fmod=0);
/// x % 0 gives 0 instead of trapping.
template <typename T> T floorMod(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0)
      return 0;
    if (std::is_signed_v<T> && b == T(-1))
      return 0;
    T r = T(a % b);
    return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
  } else {
    T r = std::fmod(a, b);
    return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
  }
}

void binaryKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                  std::vector<Tensor> &outputs) {
  const std::string &op = node.opType;
  Tensor &out = outputs[0];
  dispatchNumeric(node, out.type.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (op == "Add")
      foldBroadcast<T>(inputs, out, [](T a, T b) { return T(a + b); });
    else if (op == "Sub")
      foldBroadcast<T>(inputs, out, [](T a, T b) { return T(a - b); });
    else if (op == "Mul")
      foldBroadcast<T>(inputs, out, [](T a, T b) { return T(a * b); });
    else if (op == "Div")
      foldBroadcast<T>(inputs, out, divide<T>);
    else if (op == "Max")
      foldBroadcast<T>(inputs, out, maxOf<T>);
    else if (op == "Min")
      foldBroadcast<T>(inputs, out, minOf<T>);
    else if (op == "Sum")
      foldBroadcast<T>(inputs, out, [](T a, T b) { return T(a + b); });
    else if (op == "Mean") {
      foldBroadcast<T>(inputs, out, [](T a, T b) { return T(a + b); });
      for (int64_t i = 0; i < out.numElements(); ++i)
        out.data<T>()[i] = T(out.data<T>()[i] / T(inputs.size()));
    } else if (op == "Mod" && node.attrs.getInt("fmod", 0) != 0)
      foldBroadcast<T>(inputs, out, truncMod<T>);
    else if (op == "Mod")
      foldBroadcast<T>(inputs, out, floorMod<T>);
    else
      fatalInternal(node.describe() + ": not a binary op");
  });
}

void preluKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                 std::vector<Tensor> &outputs) {
  Tensor &out = outputs[0];
  dispatchNumeric(node, out.type.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = inputs[0]->data<T>();
    const T *slope = inputs[1]->data<T>();
    std::vector<int64_t> map = broadcastIndexMap(inputs[1]->type.shape, out.type.shape);
    T *o = out.data<T>();
    for (size_t i = 0; i < map.size(); ++i)
      o[i] = x[i] < T(0) ? T(slope[map[i]] * x[i]) : x[i];
  });
}

void reluKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs) {
  Tensor &out = outputs[0];
  dispatchNumeric(node, out.type.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = inputs[0]->data<T>();
    T *o = out.data<T>();
    for (int64_t i = 0; i < out.numElements(); ++i)
      o[i] = x[i] < T(0) ? T(0) : x[i];
  });
}

/// Clip(input, min?, max?) = min(max(input, min), max); an omitted bound is
/// the type's lowest / highest value (±inf for float).
void clipKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs) {
  Tensor &out = outputs[0];
  dispatchNumeric(node, out.type.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Limits = std::numeric_limits<T>;
    T lo = Limits::has_infinity ? -Limits::infinity() : Limits::lowest();
    T hi = Limits::has_infinity ? Limits::infinity() : Limits::max();
    if (const Tensor *t = arg(inputs, 1))
      lo = t->data<T>()[0];
    if (const Tensor *t = arg(inputs, 2))
      hi = t->data<T>()[0];
    const T *x = inputs[0]->data<T>();
    T *o = out.data<T>();
    for (int64_t i = 0; i < out.numElements(); ++i)
      o[i] = std::min(std::max(x[i], lo), hi);
  });
}

/// Float32-only activations: out[i] = f(x[i]).
void floatUnaryKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                      std::vector<Tensor> &outputs) {
  Tensor &out = outputs[0];
  if (out.type.dtype != DType::Float32)
    unsupportedDType(node, out.type.dtype);
  const std::string &op = node.opType;
  std::function<float(float)> f;
  if (op == "LeakyRelu") {
    float alpha = node.attrs.getFloat("alpha", kLeakyReluAlpha);
    f = [alpha](float v) { return v < 0 ? alpha * v : v; };
  } else if (op == "Sigmoid") {
    f = [](float v) { return 1.0f / (1.0f + std::exp(-v)); };
  } else if (op == "Tanh") {
    f = [](float v) { return std::tanh(v); };
  } else if (op == "HardSigmoid") {
    float alpha = node.attrs.getFloat("alpha", kHardSigmoidAlpha);
    float beta = node.attrs.getFloat("beta", kHardSigmoidBeta);
    f = [alpha, beta](float v) { return std::max(0.0f, std::min(1.0f, alpha * v + beta)); };
  } else if (op == "HardSwish") {
    f = [](float v) {
      return v * std::max(0.0f, std::min(1.0f, kHardSwishAlpha * v + kHardSwishBeta));
    };
  } else if (op == "Exp") {
    f = [](float v) { return std::exp(v); };
  } else if (op == "Sqrt") {
    f = [](float v) { return std::sqrt(v); };
  } else {
    fatalInternal(node.describe() + ": not a float activation");
  }
  const float *x = inputs[0]->data<float>();
  float *o = out.data<float>();
  for (int64_t i = 0; i < out.numElements(); ++i)
    o[i] = f(x[i]);
}

void powKernel(const Node &node, const std::vector<const Tensor *> &inputs,
               std::vector<Tensor> &outputs) {
  Tensor &out = outputs[0];
  std::vector<int64_t> mapX = broadcastIndexMap(inputs[0]->type.shape, out.type.shape);
  std::vector<int64_t> mapY = broadcastIndexMap(inputs[1]->type.shape, out.type.shape);
  dispatchNumeric(node, out.type.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T *o = out.data<T>();
    for (size_t i = 0; i < mapX.size(); ++i) {
      // Tensor::at reads any dtype: the exponent may differ from the base.
      double v = std::pow(inputs[0]->at(mapX[i]), inputs[1]->at(mapY[i]));
      o[i] = std::is_integral_v<T> ? T(int64_t(v)) : T(v);
    }
  });
}

/// Equal, Less, LessOrEqual, Greater, GreaterOrEqual -> bool (one byte 0/1).
void compareKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                   std::vector<Tensor> &outputs) {
  Tensor &out = outputs[0];
  const std::string &op = node.opType;
  std::vector<int64_t> mapA = broadcastIndexMap(inputs[0]->type.shape, out.type.shape);
  std::vector<int64_t> mapB = broadcastIndexMap(inputs[1]->type.shape, out.type.shape);
  DType dtype = inputs[0]->type.dtype == DType::Bool ? DType::UInt8 : inputs[0]->type.dtype;
  dispatchNumeric(node, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *a = inputs[0]->data<T>(), *b = inputs[1]->data<T>();
    uint8_t *o = out.data<uint8_t>();
    for (size_t i = 0; i < mapA.size(); ++i) {
      T x = a[mapA[i]], y = b[mapB[i]];
      bool r = op == "Equal"         ? x == y
               : op == "Less"        ? x < y
               : op == "LessOrEqual" ? x <= y
               : op == "Greater"     ? x > y
                                     : x >= y;
      o[i] = r ? 1 : 0;
    }
  });
}

/// And, Or, Xor, Not on bools stored as one byte 0/1.
void logicalKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                   std::vector<Tensor> &outputs) {
  Tensor &out = outputs[0];
  const std::string &op = node.opType;
  uint8_t *o = out.data<uint8_t>();
  std::vector<int64_t> mapA = broadcastIndexMap(inputs[0]->type.shape, out.type.shape);
  const uint8_t *a = inputs[0]->data<uint8_t>();
  if (op == "Not") {
    for (size_t i = 0; i < mapA.size(); ++i)
      o[i] = a[mapA[i]] ? 0 : 1;
    return;
  }
  std::vector<int64_t> mapB = broadcastIndexMap(inputs[1]->type.shape, out.type.shape);
  const uint8_t *b = inputs[1]->data<uint8_t>();
  for (size_t i = 0; i < mapA.size(); ++i) {
    bool x = a[mapA[i]] != 0, y = b[mapB[i]] != 0;
    o[i] = (op == "And" ? x && y : op == "Or" ? x || y : x != y) ? 1 : 0;
  }
}

/// Where(condition, X, Y): any dtype, copied element by element as bytes.
void whereKernel(const Node &, const std::vector<const Tensor *> &inputs,
                 std::vector<Tensor> &outputs) {
  Tensor &out = outputs[0];
  const size_t size = dtypeSize(out.type.dtype);
  std::vector<int64_t> mapC = broadcastIndexMap(inputs[0]->type.shape, out.type.shape);
  std::vector<int64_t> mapX = broadcastIndexMap(inputs[1]->type.shape, out.type.shape);
  std::vector<int64_t> mapY = broadcastIndexMap(inputs[2]->type.shape, out.type.shape);
  const uint8_t *c = inputs[0]->data<uint8_t>();
  const uint8_t *x = inputs[1]->data<uint8_t>(), *y = inputs[2]->data<uint8_t>();
  uint8_t *o = out.data<uint8_t>();
  for (size_t i = 0; i < mapC.size(); ++i) {
    const uint8_t *src = c[mapC[i]] ? x + mapX[i] * size : y + mapY[i] * size;
    std::copy(src, src + size, o + i * size);
  }
}

/// IsNaN; IsInf with detect_negative / detect_positive (default 1).
void floatTestKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                     std::vector<Tensor> &outputs) {
  const float *x = inputs[0]->data<float>();
  uint8_t *o = outputs[0].data<uint8_t>();
  const bool isNaN = node.opType == "IsNaN";
  const bool negative = node.attrs.getInt("detect_negative", 1) != 0;
  const bool positive = node.attrs.getInt("detect_positive", 1) != 0;
  for (int64_t i = 0; i < outputs[0].numElements(); ++i) {
    const float v = x[i];
    o[i] = isNaN ? std::isnan(v) : std::isinf(v) && (v < 0 ? negative : positive);
  }
}

/// One element of Cast. Float -> integer truncates toward zero, then wraps
/// into the target type (what numpy's astype does on x86); NaN becomes 0.
template <typename Dst, typename Src> Dst convertElement(Src v) {
  if constexpr (std::is_floating_point_v<Dst> || !std::is_floating_point_v<Src>) {
    return Dst(v);
  } else {
    if (std::isnan(v))
      return Dst(0);
    double t = std::trunc(double(v));
    t = std::max(-9.2e18, std::min(9.2e18, t)); // stay inside int64
    return Dst(int64_t(t));
  }
}

void castKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs) {
  const Tensor &in = *inputs[0];
  Tensor &out = outputs[0];
  int64_t count = out.numElements();
  // Bool is stored as one byte 0/1: read it as uint8.
  DType source = in.type.dtype == DType::Bool ? DType::UInt8 : in.type.dtype;
  dispatchNumeric(node, source, [&](auto srcTag) {
    using Src = typename decltype(srcTag)::type;
    const Src *x = in.data<Src>();
    if (out.type.dtype == DType::Bool) {
      uint8_t *o = out.data<uint8_t>();
      for (int64_t i = 0; i < count; ++i)
        o[i] = x[i] != Src(0) ? 1 : 0;
      return;
    }
    dispatchNumeric(node, out.type.dtype, [&](auto dstTag) {
      using Dst = typename decltype(dstTag)::type;
      Dst *o = out.data<Dst>();
      for (int64_t i = 0; i < count; ++i)
        o[i] = convertElement<Dst>(x[i]);
    });
  });
}

} // namespace elementwise_interp

} // namespace bundlefit
