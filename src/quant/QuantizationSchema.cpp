//===- QuantizationSchema.cpp - Glow's schemas, TFLM's weights -------------===//
#include "bundlefit/quant/QuantizationSchema.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bundlefit {

namespace {

struct SchemaName {
  QuantSchema schema;
  const char *name;
};

constexpr SchemaName kSchemaNames[] = {
    {QuantSchema::Asymmetric, "asymmetric"},
    {QuantSchema::Symmetric, "symmetric"},
    {QuantSchema::SymmetricWithUInt8, "symmetric_with_uint8"},
    {QuantSchema::SymmetricWithPower2Scale, "symmetric_with_power2_scale"},
};

/// The smallest power of two >= `scale` (scale > 0).
double roundUpToPowerOfTwo(double scale) { return std::exp2(std::ceil(std::log2(scale))); }

} // namespace

bool parseQuantSchema(const std::string &text, QuantSchema &out) {
  for (const SchemaName &entry : kSchemaNames)
    if (text == entry.name) {
      out = entry.schema;
      return true;
    }
  return false;
}

const char *quantSchemaName(QuantSchema schema) {
  for (const SchemaName &entry : kSchemaNames)
    if (entry.schema == schema)
      return entry.name;
  return "?";
}

std::vector<std::string> quantSchemaNames() {
  std::vector<std::string> names;
  for (const SchemaName &entry : kSchemaNames)
    names.push_back(entry.name);
  return names;
}

bool isPowerOfTwo(float value) {
  int exponent = 0;
  return value > 0 && std::isfinite(value) && std::frexp(value, &exponent) == 0.5f;
}

ScaleZeroPoint chooseQuantParams(float min, float max, QuantSchema schema, int64_t qmin,
                                 int64_t qmax) {
  if (std::isnan(min))
    min = 0;
  if (std::isnan(max))
    max = 0;
  // Real 0 must be exactly representable (zero padding, Relu's floor).
  double lo = std::min(double(min), 0.0), hi = std::max(double(max), 0.0);

  // symmetric_with_uint8: a purely positive range uses the whole int8 range
  // with zero point qmin; anything else falls back to symmetric.
  if (schema == QuantSchema::SymmetricWithUInt8 && lo < 0)
    schema = QuantSchema::Symmetric;
  if (schema == QuantSchema::Symmetric || schema == QuantSchema::SymmetricWithPower2Scale) {
    // Stretch the end that saturates later so that q = 0 lands on real 0.
    double perStepBelow = lo / double(qmin), perStepAbove = hi / double(qmax);
    if (perStepBelow > perStepAbove)
      hi = perStepBelow * double(qmax);
    else
      lo = perStepAbove * double(qmin);
  }
  lo = std::max(lo, double(std::numeric_limits<float>::lowest()));
  hi = std::min(hi, double(std::numeric_limits<float>::max()));

  double scale = (hi - lo) / double(qmax - qmin);
  if (scale == 0) // A constant-zero tensor: any scale works; Glow takes 0.1.
    scale = 0.1;

  // The zero point solves real(qmin) = lo (or real(qmax) = hi); use the pair
  // with the smaller terms, whose rounding error is smaller.
  double fromMin = double(qmin) - lo / scale, fromMax = double(qmax) - hi / scale;
  double errorMin = std::abs(double(qmin)) + std::abs(lo / scale);
  double errorMax = std::abs(double(qmax)) + std::abs(hi / scale);
  double zeroPoint = errorMin < errorMax ? fromMin : fromMax;
  if (std::abs(hi + lo) <= std::numeric_limits<float>::epsilon())
    zeroPoint = 0;
  if (schema == QuantSchema::Symmetric || schema == QuantSchema::SymmetricWithPower2Scale)
    zeroPoint = 0; // By construction; rounding noise must not move it.

  ScaleZeroPoint result;
  result.zeroPoint = zeroPoint < double(qmin)   ? int32_t(qmin)
                     : zeroPoint > double(qmax) ? int32_t(qmax)
                                                : int32_t(std::round(zeroPoint));
  if (schema == QuantSchema::SymmetricWithPower2Scale)
    scale = roundUpToPowerOfTwo(scale);
  result.scale = float(scale);
  return result;
}

ScaleZeroPoint chooseWeightParams(float maxAbs, bool power2) {
  double scale = std::isfinite(maxAbs) && maxAbs > 0 ? double(maxAbs) / 127.0 : 1.0;
  if (power2)
    scale = roundUpToPowerOfTwo(scale);
  return {float(scale), 0};
}

int64_t quantizeValue(float x, ScaleZeroPoint params, int64_t qmin, int64_t qmax) {
  double scaled = std::round(double(x) / double(params.scale)); // half away from zero
  if (std::isnan(scaled))
    scaled = 0;
  scaled += params.zeroPoint;
  return int64_t(std::clamp(scaled, double(qmin), double(qmax)));
}

float dequantizeValue(int64_t q, ScaleZeroPoint params) {
  return float(double(params.scale) * double(q - params.zeroPoint));
}

} // namespace bundlefit
