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
/// Where output coordinate o of one dimension reads: neighbours i0[o] and
/// i1[o] (clamped to the input), i1's weight w1[o] (nearest: 0 or 1), and
/// whether tf_crop_and_resize extrapolates there.
struct DimMap {
  std::vector<int64_t> i0, i1;
  std::vector<double> w1;
  std::vector<bool> outside;
};
/// The maps of every dimension of `node` from input shape xs to output
/// shape ys; `roi` and `scales` may be empty (sizes given).
std::vector<DimMap> dimMaps(const Node &node, const Shape &xs, const Shape &ys,
                            const std::vector<double> &roi, const std::vector<double> &scales,
                            bool useSizes);
void resizeKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                  std::vector<Tensor> &outputs);
} // namespace resize_interp

/// Resize's int8 definition: nearest, a copy by precomputed indices
/// (ResizeInt8.cpp).
void registerResizeInt8(OpRegistry &registry);

/// The bundle kernel calls (OpDef::lower) of Resize
/// (ResizeLower.cpp), after the float registration.
void registerResizeLowering(OpRegistry &registry);

} // namespace bundlefit
