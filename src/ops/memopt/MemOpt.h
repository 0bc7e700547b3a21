//===- MemOpt.h - The memopt family's hooks (internal) ---------------------===//
//
// The functions of this folder that its registration (FusedOps.cpp, PatchStage.cpp) puts
// into the definitions of ConvPool and PatchStage.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/OpRegistry.h"

#include <vector>

namespace bundlefit {

/// Reference interpreter kernels (MemOptInterp.cpp).
namespace memopt_interp {
void convPoolKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                    std::vector<Tensor> &outputs);
void patchStageKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                      std::vector<Tensor> &outputs);
} // namespace memopt_interp

} // namespace bundlefit
