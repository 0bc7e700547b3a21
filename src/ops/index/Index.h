//===- Index.h - The index family's hooks (internal) -----------------------===//
//
// The functions of this folder that its registration (IndexOps.cpp) puts
// into the definitions of GatherElements, GatherND, ScatterElements, OneHot, NonZero.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/OpRegistry.h"

#include <vector>

namespace bundlefit {

/// Reference interpreter kernels (IndexInterp.cpp).
namespace index_interp {
void gatherElementsKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                          std::vector<Tensor> &outputs);
void scatterElementsKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                           std::vector<Tensor> &outputs);
void gatherNDKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                    std::vector<Tensor> &outputs);
void oneHotKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                  std::vector<Tensor> &outputs);
void nonZeroKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                   std::vector<Tensor> &outputs);
} // namespace index_interp

/// The bundle kernel calls (OpDef::lower) of GatherElements, ScatterElements, GatherND, OneHot
/// (IndexLower.cpp), after the float registration.
void registerIndexLowering(OpRegistry &registry);

} // namespace bundlefit
