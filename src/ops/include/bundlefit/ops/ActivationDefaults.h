//===- ActivationDefaults.h - ONNX constants of LeakyRelu, HardSigmoid, HardSwish ===//
//
// LeakyRelu and HardSigmoid (src/ops/elementwise) are read by their
// interpreter kernel, their float lowering, their int8 tables (src/ops/lut)
// and the fused-activation table (FusedActivations.cpp); each takes an absent
// attribute's value from here, ONNX's default, so the readers cannot disagree.
// HardSwish's fixed constants serve its interpreter kernel, its int8 table
// and the pass that finds it written as x * HardSigmoid(x).
// The float math ops (Elu, Selu, Celu, ThresholdedRelu, Shrink) keep theirs in
// their rows of UnaryMathOps.cpp: read them with unaryMathParams (UnaryMath.h).
//
//===----------------------------------------------------------------------===//
#pragma once

namespace bundlefit {

inline constexpr float kLeakyReluAlpha = 0.01f;
inline constexpr float kHardSigmoidAlpha = 0.2f;
inline constexpr float kHardSigmoidBeta = 0.5f;
/// HardSwish is x * HardSigmoid(x) with these (ONNX's definition: alpha times
/// x, not x over 6, as the bundle's C kernels compute it too).
inline constexpr float kHardSwishAlpha = 1.0f / 6.0f;
inline constexpr float kHardSwishBeta = 0.5f;

} // namespace bundlefit
