//===- Conv.h - The conv family's hooks (internal) -------------------------===//
//
// The functions of this folder that its registration (ConvOps.cpp) puts
// into the definitions of Conv and ConvTranspose.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/OpRegistry.h"

#include <vector>

namespace bundlefit {

/// Reference interpreter kernels (ConvInterp.cpp).
namespace conv_interp {
void convKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs);
void convTransposeKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                         std::vector<Tensor> &outputs);
} // namespace conv_interp

/// The int8 reference (ConvReference.cpp).
namespace conv_reference {
void conv(const Node &node, const std::vector<const Tensor *> &inputs,
          std::vector<Tensor> &outputs);
} // namespace conv_reference

} // namespace bundlefit
