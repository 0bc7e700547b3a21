//===- Shape.h - The shape family's hooks (internal) -----------------------===//
//
// The functions of this folder that its registration (ShapeOps.cpp) puts
// into the definitions of views, Transpose, Concat, Split, Slice, Pad, Gather and the shape ops.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/OpRegistry.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

/// Reference interpreter kernels (ShapeInterp.cpp).
namespace shape_interp {
void copyKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs);
void transposeKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                     std::vector<Tensor> &outputs);
void concatKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                  std::vector<Tensor> &outputs);
void splitKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                 std::vector<Tensor> &outputs);
void sliceKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                 std::vector<Tensor> &outputs);
void padKernel(const Node &node, const std::vector<const Tensor *> &inputs,
               std::vector<Tensor> &outputs);
void shapeKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                 std::vector<Tensor> &outputs);
void gatherKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                  std::vector<Tensor> &outputs);
void sizeKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs);
void eyeLikeKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                   std::vector<Tensor> &outputs);
void constantOfShapeKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                           std::vector<Tensor> &outputs);
void rangeKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                 std::vector<Tensor> &outputs);
} // namespace shape_interp

/// The bundle kernel calls (OpDef::lower) of Transpose, Concat, Split, Slice, Pad, Gather
/// (ShapeLower.cpp), after the float registration.
void registerShapeLowering(OpRegistry &registry);

} // namespace bundlefit
