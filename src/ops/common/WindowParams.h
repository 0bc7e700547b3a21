//===- WindowParams.h - 2-D window geometry as kernel structs (internal) ---===//
//
// The float convolutions and pools of the bundle (Conv, ConvTranspose,
// MaxPool, AveragePool and their fused ConvPool form; 1-D to 3-D) pass
// their geometry as abi.h's parameter structs. The pads come from ShapeHelpers.h, the
// helper type inference and the interpreter use, so auto_pad, output_shape
// and ceil_mode resolve exactly as they do there (ConvTranspose SAME pads
// depend on the *input* length and may be negative with output_shape).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/kernels/abi.h"

#include <cstdint>
#include <vector>

namespace bundlefit::window_params {

/// Strides, dilations and pads of a window op over `in` with `kernel`
/// (1-D to 3-D); Unsupported when `out` is not the shape they produce (the
/// kernels take the output extent from it).
struct SpatialWindow {
  std::vector<int64_t> strides, dilations, padsBegin, padsEnd;
};
SpatialWindow resolveSpatial(const Node &node, const Shape &in, const Shape &out,
                             const std::vector<int64_t> &kernel, bool transposed, bool ceilMode);

/// The bf_conv_params of a 1-D (as h = 1) or 2-D Conv (ConvTranspose with
/// `transposed`) of `in` into `out`; its group must divide both channels.
bf_conv_params convParams(const Node &node, const Shape &in, const Shape &out,
                          const std::vector<int64_t> &kernel, bool transposed);

/// The bf_pool_params of a 1-D (as h = 1) or 2-D MaxPool / AveragePool of
/// `in` into `out`: geometry, is_max and count_include_pad; the int8 clamp,
/// pad_value and chunk are 0 (the int8 and fused kernels set their own).
bf_pool_params poolParams(const Node &node, const Shape &in, const Shape &out, bool isMax);

/// The bf_window3d_params of a 3-D Conv (ConvTranspose with `transposed`) of
/// `in` into `out`; its group must divide both channels.
bf_window3d_params conv3dParams(const Node &node, const Shape &in, const Shape &out,
                                const std::vector<int64_t> &kernel, bool transposed);

/// The bf_window3d_params of a 3-D MaxPool / AveragePool of `in` into `out`.
bf_window3d_params pool3dParams(const Node &node, const Shape &in, const Shape &out, bool isMax);

} // namespace bundlefit::window_params
