//===- QuantizationSchema.h - From a float range to int8 scale/zero point --===//
//
// Glow's four schemas (lib/Quantization/Base/Base.cpp, chooseQuantizationParams),
// reimplemented so that a profile gives the same activation parameters in
// bundlefit as in Glow:
//
//   asymmetric                   any zero point in [qmin, qmax]
//   symmetric                    zero point 0, range widened to [-a, a]
//   symmetric_with_uint8         zero point qmin when the range is [0, max]
//                                (all of int8 holds the positive range), else
//                                symmetric
//   symmetric_with_power2_scale  symmetric, scale rounded up to a power of 2
//
// The float range is first widened to include 0, so real 0 is exactly
// representable (zero padding, Relu). Weights do not use this table: they are
// always symmetric in [-127, 127] (TFLM's int8 spec, which CMSIS-NN kernels
// assume), see chooseWeightParams.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

enum class QuantSchema : uint8_t {
  Asymmetric,
  Symmetric,
  SymmetricWithUInt8,
  SymmetricWithPower2Scale,
};

/// Glow's spellings: "asymmetric", "symmetric", "symmetric_with_uint8",
/// "symmetric_with_power2_scale".
bool parseQuantSchema(const std::string &text, QuantSchema &out);
const char *quantSchemaName(QuantSchema schema);
/// The spellings parseQuantSchema accepts, for help and error text.
std::vector<std::string> quantSchemaNames();

/// real = scale * (q - zeroPoint).
struct ScaleZeroPoint {
  float scale = 1.0f;
  int32_t zeroPoint = 0;
};

/// Glow's chooseQuantizationParams for a quantized range [qmin, qmax]
/// (int8 by default). `min` <= `max` must hold; NaNs are treated as 0.
ScaleZeroPoint chooseQuantParams(float min, float max, QuantSchema schema, int64_t qmin = -128,
                                 int64_t qmax = 127);

/// Symmetric parameters for a weight (or int8 bias) whose largest magnitude is
/// `maxAbs`: zero point 0, scale = maxAbs / 127 (values in [-127, 127]);
/// rounded up to a power of two when `power2`. A zero tensor gets scale 1.
ScaleZeroPoint chooseWeightParams(float maxAbs, bool power2);

/// Whether `value` is exactly 2^k for an integer k.
bool isPowerOfTwo(float value);

/// round_half_away(x / scale) + zeroPoint, clamped to [qmin, qmax].
int64_t quantizeValue(float x, ScaleZeroPoint params, int64_t qmin = -128, int64_t qmax = 127);
/// scale * (q - zeroPoint).
float dequantizeValue(int64_t q, ScaleZeroPoint params);

} // namespace bundlefit
