//===- Movement.h - The movement family's hooks (internal) -----------------===//
//
// The functions of this folder that its registration (MovementOps.cpp) puts
// into the definitions of Expand, Tile, DepthToSpace, SpaceToDepth, Trilu.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/OpRegistry.h"

#include <vector>

namespace bundlefit {

/// Reference interpreter kernels (MovementInterp.cpp).
namespace movement_interp {
void expandKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                  std::vector<Tensor> &outputs);
void tileKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs);
void spaceDepthKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                      std::vector<Tensor> &outputs);
void triluKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                 std::vector<Tensor> &outputs);
} // namespace movement_interp

/// Input `index` of `node` as integers; throws naming the node and input `name`
/// when it is missing or not a constant (MovementOps.cpp).
std::vector<int64_t> constantOperand(const Node &node, size_t index, const char *name);

/// Col2Im's whole definition (Col2Im.cpp): shape rules, reference kernel, bundle call.
void registerCol2Im(OpRegistry &registry);

/// The bundle kernel calls (OpDef::lower) of Expand, Tile, DepthToSpace, SpaceToDepth, Trilu
/// (MovementLower.cpp), after the float registration.
void registerMovementLowering(OpRegistry &registry);

} // namespace bundlefit
