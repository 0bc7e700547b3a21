//===- Int8Reference.cpp - Arithmetic of the int8 reference kernels --------===//
#include "common/Int8Reference.h"

#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace bundlefit::int8_ref {

namespace {

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

/// The low 32 bits of v as a signed value (two's complement wrap).
int32_t wrap(int64_t v) { return int32_t(uint32_t(uint64_t(v))); }

[[noreturn]] void unsupported(const Node &node, const std::string &what) {
  throw Error(ExitCode::Unsupported, node.describe() + ": " + what);
}

} // namespace

Affine activationOf(const Node &node, const Value *value, const char *role) {
  if (!value)
    unsupported(node, std::string("the ") + role + " operand is missing");
  const QuantParams &q = value->type.quant;
  if (value->type.dtype != DType::Int8 || q.scales.size() != 1 || q.zeroPoints.size() != 1)
    unsupported(node, std::string("the ") + role + " '" + value->name + "' (" + value->type.str() +
                          ") is not int8 with one scale and zero point");
  if (!(q.scales[0] > 0.0f))
    unsupported(node, std::string("the ") + role + " '" + value->name + "' has a scale <= 0");
  return {double(q.scales[0]), q.zeroPoints[0]};
}

Multiplier quantizeMultiplier(double real, bool bounded) {
  if (real == 0.0)
    return {};
  if (!(real > 0.0) || !std::isfinite(real))
    fatalInternal("int8 reference: multiplier " + std::to_string(real) + " is not positive");
  int exponent = 0;
  const double fraction = std::frexp(real, &exponent); // real = fraction * 2^exponent
  int64_t fixed = std::llround(fraction * 2147483648.0);
  if (fixed == int64_t(1) << 31) {
    fixed >>= 1;
    ++exponent;
  }
  if (exponent < -31)
    return {};
  if (bounded && exponent > 30)
    return {int32_t(kInt32Max), 30};
  return {int32_t(fixed), exponent};
}

int32_t saturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  if (a == b && a == kInt32Min)
    return int32_t(kInt32Max);
  const int64_t ab = int64_t(a) * int64_t(b);
  const int64_t nudge = ab >= 0 ? (int64_t(1) << 30) : 1 - (int64_t(1) << 30);
  return int32_t((ab + nudge) / (int64_t(1) << 31)); // C++ division truncates toward 0
}

int32_t roundingDivideByPOT(int32_t x, int32_t exponent) {
  if (exponent == 0)
    return x;
  const int64_t divisor = int64_t(1) << exponent;
  const int64_t floor = (int64_t(x) - ((int64_t(x) % divisor + divisor) % divisor)) / divisor;
  const int64_t remainder = int64_t(x) - floor * divisor, half = divisor / 2;
  const bool up = remainder > half || (remainder == half && x >= 0);
  return int32_t(floor + (up ? 1 : 0));
}

int32_t shiftLeft(int32_t x, int32_t left) { return wrap(int64_t(x) * (int64_t(1) << left)); }

int32_t multiplyByQuantizedMultiplier(int32_t x, Multiplier q) {
  const int32_t left = q.s > 0 ? q.s : 0, right = q.s > 0 ? 0 : -q.s;
  return roundingDivideByPOT(saturatingRoundingDoublingHighMul(shiftLeft(x, left), q.m), right);
}

int32_t multiplySingleRounding(int32_t x, Multiplier q) {
  const int32_t right = 31 - q.s;
  const int64_t product = int64_t(x) * int64_t(q.m);
  int64_t rounded = (product + (int64_t(1) << (right - 1)));
  rounded = rounded >= 0 ? rounded >> right : -((-rounded + (int64_t(1) << right) - 1) >> right);
  const int64_t limit = int64_t(1) << 30;
  return int32_t(rounded > limit ? limit : rounded < -limit ? -limit : rounded);
}

int32_t requantize(int32_t x, Multiplier q, bool singleRounding) {
  return singleRounding ? multiplySingleRounding(x, q) : multiplyByQuantizedMultiplier(x, q);
}

bool singleRoundingOf(const Node &node) {
  return node.attrs.getString(kInt8RoundingAttr, "") == "single";
}

int32_t quantizeBound(double real, const Affine &out) {
  if (real >= double(FLT_MAX))
    return 127;
  if (real <= -double(FLT_MAX))
    return -128;
  const float quotient = float(real) / float(out.scale);
  const double rounded = std::round(double(quotient)); // half away from zero
  const double q = rounded + double(out.zeroPoint);
  return int32_t(q < -128.0 ? -128.0 : q > 127.0 ? 127.0 : q);
}

void fusedActivationRange(const Node &node, const Affine &out, int32_t &lo, int32_t &hi) {
  lo = -128, hi = 127;
  const std::string name = node.attrs.getString("activation", "");
  if (name.empty() || name == "None" || name == "none")
    return;
  if (name == "Relu") {
    lo = quantizeBound(0.0, out);
    return;
  }
  if (name == "Clip") {
    lo = quantizeBound(node.attrs.getFloat("activation_min", -FLT_MAX), out);
    hi = quantizeBound(node.attrs.getFloat("activation_max", FLT_MAX), out);
    return;
  }
  unsupported(node, "fused activation '" + name + "' has no int8 kernel (Relu and Clip do)");
}

namespace {

int32_t biasAt(const Node &node, const Value *bias, const uint8_t *bytes, int64_t c,
               double accumulatorScale) {
  if (!bias || !bytes)
    return 0;
  if (bias->type.dtype == DType::Int32) {
    int32_t b;
    std::memcpy(&b, bytes + 4 * c, 4);
    return b;
  }
  const QuantParams &q = bias->type.quant;
  if (bias->type.dtype != DType::Int8 || q.scales.empty())
    unsupported(node, "the bias '" + bias->name + "' is neither int32 nor quantized int8");
  const double biasScale = q.scales[q.scales.size() == 1 ? 0 : size_t(c)];
  const Multiplier k = quantizeMultiplier(biasScale / accumulatorScale, false);
  const int64_t product = int64_t(int8_t(bytes[c])) * int64_t(k.m);
  const int32_t right = 31 - k.s;
  int64_t value;
  if (right > 0) {
    const int64_t magnitude = (std::llabs(product) + (int64_t(1) << (right - 1))) >> right;
    value = product < 0 ? -magnitude : magnitude;
  } else {
    // |product| < 2^38: a left shift of up to 24 bits fits; beyond, any
    // non-zero bias is far past int32 and saturates anyway.
    value = product * (int64_t(1) << (-right > 24 ? 24 : -right));
  }
  return int32_t(value < kInt32Min ? kInt32Min : value > kInt32Max ? kInt32Max : value);
}

} // namespace

WeightedOutput::WeightedOutput(const Node &node, const std::vector<const Tensor *> &inputs,
                               int64_t channels)
    : in_(activationOf(node, node.input(0), "input")),
      out_(activationOf(node, node.output(0), "output")), single_(singleRoundingOf(node)) {
  const Value *w = node.input(1), *bias = node.input(2);
  if (!w || w->type.dtype != DType::Int8 || w->type.quant.empty())
    unsupported(node, "the weight is not quantized int8");
  const std::vector<float> &scales = w->type.quant.scales;
  const std::vector<int32_t> &zeroPoints = w->type.quant.zeroPoints;
  if (scales.size() != 1 && int64_t(scales.size()) != channels)
    unsupported(node, "the weight '" + w->name + "' has " + std::to_string(scales.size()) +
                          " scales for " + std::to_string(channels) + " output channels");
  const uint8_t *biasBytes =
      bias && inputs.size() > 2 && inputs[2] ? inputs[2]->bytes.data() : nullptr;
  fusedActivationRange(node, out_, lo_, hi_);
  for (int64_t c = 0; c < channels; ++c) {
    const size_t k = scales.size() == 1 ? 0 : size_t(c);
    const double accumulatorScale = in_.scale * double(scales[k]);
    Channel channel;
    channel.q = quantizeMultiplier(accumulatorScale / out_.scale);
    channel.bias = biasAt(node, bias, biasBytes, c, accumulatorScale);
    channel.weightZeroPoint =
        zeroPoints.empty() ? 0 : zeroPoints[std::min(k, zeroPoints.size() - 1)];
    channels_.push_back(channel);
  }
}

int8_t WeightedOutput::finish(int64_t acc, int64_t c) const {
  const int32_t scaled = requantize(wrap(acc), channels_[size_t(c)].q, single_);
  return clampToInt8(int64_t(scaled) + out_.zeroPoint, lo_, hi_);
}

} // namespace bundlefit::int8_ref
