//===- Reduce.h - The reduce family's hooks (internal) ---------------------===//
//
// The functions of this folder that its registration (ReduceOps.cpp) puts
// into the definitions of reductions, ArgMax/ArgMin, Hardmax.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/OpRegistry.h"

#include <vector>

namespace bundlefit {

/// Reference interpreter kernels (ReduceInterp.cpp).
namespace reduce_interp {
void reduceArithmeticKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                            std::vector<Tensor> &outputs);
void reduceMaxKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                     std::vector<Tensor> &outputs);
void argReduceKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                     std::vector<Tensor> &outputs);
void hardmaxKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                   std::vector<Tensor> &outputs);
} // namespace reduce_interp

/// The bundle kernel calls (OpDef::lower) of the Reduce ops, ArgMax/ArgMin, Hardmax
/// (ReduceLower.cpp), after the float registration.
void registerReduceLowering(OpRegistry &registry);

} // namespace bundlefit
