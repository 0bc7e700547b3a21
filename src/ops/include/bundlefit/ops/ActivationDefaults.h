//===- ActivationDefaults.h - ONNX defaults of LeakyRelu, HardSigmoid ------===//
//
// LeakyRelu and HardSigmoid (src/ops/elementwise) are read by their
// interpreter kernel, their float lowering, their int8 tables (src/ops/lut)
// and the fused-activation table (FusedActivations.cpp); each takes an absent
// attribute's value from here, ONNX's default, so the readers cannot disagree.
// The float math ops (Elu, Selu, Celu, ThresholdedRelu, Shrink) keep theirs in
// their rows of UnaryMathOps.cpp: read them with unaryMathParams (UnaryMath.h).
//
//===----------------------------------------------------------------------===//
#pragma once

namespace bundlefit {

inline constexpr float kLeakyReluAlpha = 0.01f;
inline constexpr float kHardSigmoidAlpha = 0.2f;
inline constexpr float kHardSigmoidBeta = 0.5f;

} // namespace bundlefit
