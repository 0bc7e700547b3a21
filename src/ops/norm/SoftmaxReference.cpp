//===- SoftmaxReference.cpp - The int8 reference Softmax --------------------===//
//
// TFLite's int8 softmax (reference_ops::Softmax with TFLM's Prepare: beta
// 1, 5 integer bits for the scaled differences, 12 for the sum), written
// with the gemmlowp fixed-point functions it is defined by. A FixedPoint
// value with I integer bits is an int32 `raw` meaning raw / 2^(31 - I):
//
//   for each row: d = x - max(row), kept when d >= diffMin
//     e      = exp_on_negative_values(Q5.26 of d * inputScale)     Q0.31
//     sum   += Rescale<12>(e)                                      Q12.19
//   1 / sum  = one_over_one_plus_x_for_x_in_0_1 of sum normalised  Q0.31
//   y = clamp(RoundingDivideByPOT(e * (1 / sum), bits) - 128)    scale 1/256
//
//===----------------------------------------------------------------------===//
#include "norm/Norm.h"

#include "bundlefit/ops/ShapeHelpers.h"
#include "bundlefit/ops/Softmax.h"
#include "common/Int8Reference.h"

#include <cmath>
#include <limits>

namespace bundlefit::norm_reference {

using namespace int8_ref;

namespace {

constexpr int kScaledDiffIntegerBits = 5;
constexpr int kAccumulationIntegerBits = 12;

/// gemmlowp's FixedPoint<int32_t, I> product of two values with I1 and I2
/// integer bits is a value with I1 + I2 integer bits of the same raw
/// arithmetic: SaturatingRoundingDoublingHighMul.
int32_t mul(int32_t a, int32_t b) { return saturatingRoundingDoublingHighMul(a, b); }

/// SaturatingRoundingMultiplyByPOT<exponent> for exponent > 0.
int32_t saturatingShiftLeft(int32_t x, int exponent) {
  const int32_t threshold = int32_t((int64_t(1) << (31 - exponent)) - 1);
  if (x > threshold)
    return std::numeric_limits<int32_t>::max();
  if (x < -threshold)
    return std::numeric_limits<int32_t>::min();
  return shiftLeft(x, exponent);
}

/// exp(a) for a in [-1/4, 0), Q0.31: Taylor expansion around -1/8.
int32_t expOnIntervalBetweenNegativeOneQuarterAnd0Excl(int32_t a) {
  const int32_t constantTerm = 1895147668; // exp(-1/8)
  const int32_t constant1Over3 = 715827883;
  const int32_t x = a + (1 << 28); // + 1/8
  const int32_t x2 = mul(x, x), x3 = mul(x2, x), x4 = mul(x2, x2);
  const int32_t x4Over4 = roundingDivideByPOT(x4, 2);
  const int32_t poly = roundingDivideByPOT(mul(x4Over4 + x3, constant1Over3) + x2, 1);
  return constantTerm + mul(constantTerm, x + poly);
}

/// exp(a) for a <= 0 given in Q5.26, result Q0.31 (gemmlowp's barrel shifter).
int32_t expOnNegativeValues(int32_t a) {
  constexpr int kFractionalBits = 31 - kScaledDiffIntegerBits;
  const int32_t oneQuarter = 1 << (kFractionalBits - 2);
  const int32_t aModQuarterMinusOneQuarter = (a & (oneQuarter - 1)) - oneQuarter;
  int32_t result = expOnIntervalBetweenNegativeOneQuarterAnd0Excl(
      saturatingShiftLeft(aModQuarterMinusOneQuarter, kScaledDiffIntegerBits)); // Rescale<0>
  const int32_t remainder = aModQuarterMinusOneQuarter - a;
  // exp(-2^k) for k = -2 .. 4 in Q0.31: every k below the integer bits.
  const struct {
    int exponent;
    int32_t multiplier;
  } barrel[] = {{-2, 1672461947}, {-1, 1302514674}, {0, 790015084}, {1, 290630308},
                {2, 39332535},    {3, 720401},      {4, 242}};
  for (const auto &step : barrel)
    if (kScaledDiffIntegerBits > step.exponent &&
        (remainder & (1 << (kFractionalBits + step.exponent))) != 0)
      result = mul(result, step.multiplier);
  return a == 0 ? std::numeric_limits<int32_t>::max() : result; // One() for a == 0
}

/// 1 / (1 + x) for x in [0, 1) in Q0.31: Newton-Raphson in Q2.29.
int32_t oneOverOnePlusXForXIn01(int32_t a) {
  const int64_t sum = int64_t(a) + std::numeric_limits<int32_t>::max();
  const int32_t halfDenominator = int32_t((sum + (sum >= 0 ? 1 : -1)) / 2); // RoundingHalfSum
  const int32_t constant48Over17 = 1515870810, constantNeg32Over17 = -1010580540;
  int32_t x = constant48Over17 + mul(halfDenominator, constantNeg32Over17);
  const int32_t one = 1 << 29; // F2::One()
  for (int i = 0; i < 3; ++i) {
    const int32_t oneMinusHalfDenominatorTimesX = one - mul(halfDenominator, x);
    x = x + saturatingShiftLeft(mul(x, oneMinusHalfDenominatorTimesX), 2); // Q4 -> Q2
  }
  return saturatingShiftLeft(x, 1); // ExactMulByPot<-1>, then Q1 -> Q0
}

} // namespace

void softmax(const Node &node, const std::vector<const Tensor *> &inputs,
             std::vector<Tensor> &outputs) {
  const Affine in = activationOf(node, node.input(0), "input");
  const Affine out = activationOf(node, node.output(0), "output");
  if (out.scale != 1.0 / 256.0 || out.zeroPoint != -128)
    shape_helpers::unsupported(node, "int8 Softmax needs output scale 1/256 and zero point -128");
  // TFLM PreprocessSoftmaxScaling and CalculateInputRadius.
  const double real = std::min(in.scale * double(int64_t(1) << (31 - kScaledDiffIntegerBits)),
                               double((int64_t(1) << 31) - 1));
  const Multiplier beta = quantizeMultiplier(real);
  if (beta.s < 0)
    shape_helpers::unsupported(node, "int8 Softmax input scale " + std::to_string(in.scale) +
                                         " is too small");
  const double radius = double((1 << kScaledDiffIntegerBits) - 1) *
                        double(int64_t(1) << (31 - kScaledDiffIntegerBits)) /
                        double(int64_t(1) << beta.s);
  const int32_t diffMin = -int32_t(std::floor(radius));
  auto scaledExp = [&](int32_t diff) {
    // MultiplyByQuantizedMultiplierGreaterThanOne: Q5.26 of diff * scale.
    return expOnNegativeValues(saturatingRoundingDoublingHighMul(shiftLeft(diff, beta.s), beta.m));
  };

  const SoftmaxExtents e = softmaxExtents(node, node.input(0)->type.shape);
  const int8_t *x = inputs[0]->data<int8_t>();
  int8_t *y = outputs[0].data<int8_t>();
  for (int64_t o = 0; o < e.outer; ++o)
    for (int64_t j = 0; j < e.inner; ++j) {
      auto at = [&](int64_t i) { return (o * e.len + i) * e.inner + j; };
      int32_t maxValue = -128;
      for (int64_t i = 0; i < e.len; ++i)
        maxValue = std::max<int32_t>(maxValue, x[at(i)]);
      int32_t sumOfExps = 0; // Q12.19
      for (int64_t i = 0; i < e.len; ++i) {
        const int32_t diff = x[at(i)] - maxValue;
        if (diff >= diffMin)
          sumOfExps += roundingDivideByPOT(scaledExp(diff), kAccumulationIntegerBits);
      }
      // GetReciprocal: sum = 2^(12 - headroom) * (1 + fraction).
      int headroom = 0;
      while (headroom < 32 && (uint32_t(sumOfExps) & (0x80000000u >> headroom)) == 0)
        ++headroom;
      const int bitsOverUnit = kAccumulationIntegerBits - headroom;
      const int32_t shiftedSumMinusOne =
          int32_t(uint32_t(uint64_t(uint32_t(sumOfExps)) << headroom) - 0x80000000u);
      const int32_t shiftedScale = oneOverOnePlusXForXIn01(shiftedSumMinusOne);
      // bits beyond 31 happen only for rows of hundreds of maxima, where
      // TFLite's shift is undefined; held at 31 as the bundles do.
      const int32_t exponent = std::min(bitsOverUnit + 31 - 8, 31);
      for (int64_t i = 0; i < e.len; ++i) {
        const int32_t diff = x[at(i)] - maxValue;
        y[at(i)] = diff < diffMin ? int8_t(-128)
                                  : clampToInt8(int64_t(roundingDivideByPOT(
                                                    mul(shiftedScale, scaledExp(diff)), exponent)) -
                                                128);
      }
    }
}

} // namespace bundlefit::norm_reference

namespace bundlefit {

void registerSoftmaxInt8Reference(OpRegistry &registry) {
  registry.at("Softmax").int8Runs(norm_reference::softmax);
}

} // namespace bundlefit
