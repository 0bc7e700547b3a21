//===- Norm.h - The norm family's hooks (internal) -------------------------===//
//
// The functions of this folder that its registration (NormOps.cpp) puts
// into the definitions of normalisations and Softmax.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/OpRegistry.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

/// Reference interpreter kernels (NormInterp.cpp).
namespace norm_interp {
void layerNormKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                     std::vector<Tensor> &outputs);
void instanceNormKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                        std::vector<Tensor> &outputs);
void batchNormKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                     std::vector<Tensor> &outputs);
void softmaxKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                   std::vector<Tensor> &outputs);
} // namespace norm_interp

/// The bundle kernel calls (OpDef::lower) of the normalisations and (Log)Softmax
/// (NormLower.cpp), after the float registration.
void registerNormLowering(OpRegistry &registry);

} // namespace bundlefit
