//===- Resize.h - The resize family's hooks (internal) ---------------------===//
//
// The functions of this folder that its registration (ResizeOps.cpp) puts
// into the definitions of Resize.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/OpRegistry.h"

#include <vector>

namespace bundlefit {

/// Reference interpreter kernels (ResizeInterp.cpp).
namespace resize_interp {
void resizeKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                  std::vector<Tensor> &outputs);
} // namespace resize_interp

} // namespace bundlefit
