//===- Math.h - The math family's hooks (internal) -------------------------===//
//
// The functions of this folder that its registration (UnaryMathOps.cpp) puts
// into the definitions of the float math functions of UnaryMath.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/OpRegistry.h"

#include <vector>

namespace bundlefit {

/// Reference interpreter kernels (UnaryMathInterp.cpp).
namespace math_interp {
void unaryMathKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                     std::vector<Tensor> &outputs);
} // namespace math_interp

/// The bundle kernel calls (OpDef::lower) of the float math ops
/// (UnaryMathLower.cpp), after the float registration.
void registerUnaryMathLowering(OpRegistry &registry);

} // namespace bundlefit
