//===- Resize.h - The resize family's hooks (internal) ---------------------===//
//
// The functions of this folder that its registration (ResizeOps.cpp) puts
// into the definitions of Resize.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/KernelParams.h"
#include "bundlefit/ops/OpRegistry.h"

#include <string>
#include <vector>

namespace bundlefit {

/// Where output index o of one axis reads in the input (before clamping or
/// rounding), per coordinate_transformation_mode `ctm`: the one formula of
/// every engine. T is double for the float engines (the ONNX reference) and
/// float for int8 linear Resize (onnxruntime's arithmetic, whose rounding
/// the int8 outputs reproduce). resizedLen is scale * inLen (ONNX) or the
/// output length (onnxruntime); roi bounds matter to tf_crop_and_resize only.
template <typename T>
T resizeSourceCoordinate(const std::string &ctm, int64_t o, int64_t inLen, T scale, T resizedLen,
                         T roiStart = T(0), T roiEnd = T(1)) {
  const T x = T(o), last = T(inLen - 1);
  if (ctm == "asymmetric")
    return x / scale;
  if (ctm == "align_corners")
    return resizedLen == 1 ? T(0) : x * last / (resizedLen - 1);
  if (ctm == "pytorch_half_pixel")
    return resizedLen == 1 ? T(-0.5) : (x + T(0.5)) / scale - T(0.5);
  if (ctm == "tf_half_pixel_for_nn")
    return (x + T(0.5)) / scale;
  if (ctm == "tf_crop_and_resize") {
    const T v = resizedLen == 1 ? (roiEnd - roiStart) * last / T(2)
                                : x * (roiEnd - roiStart) * last / (resizedLen - 1);
    return v + roiStart * last;
  }
  return (x + T(0.5)) / scale - T(0.5); // half_pixel
}

/// One axis of an int8 linear Resize as onnxruntime sets it up: the lower
/// and upper neighbour of every output index and their weights, in float.
struct LinearAxis {
  std::vector<int32_t> lo, hi;
  std::vector<float> loWeight, hiWeight;
};
/// Axis `d` of `node`'s input resized to its output, by the constant scale
/// (float, as given, or output / input length), for the node's
/// coordinate_transformation_mode (not tf_crop_and_resize).
LinearAxis linearAxisF32(const Node &node, size_t d);

/// The planes and sizes of a 2-D resize of NCHW `in` to `out`
/// (ResizeLower.cpp); the zero points are left to the caller to set.
bf_resize_params resizeParams(const Node &node, const Shape &in, const Shape &out);

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

/// The int8 reference of Resize (ResizeReference.cpp): nearest copies codes
/// (resize_interp::resizeKernel), linear blends as onnxruntime does.
namespace resize_reference {
void resize(const Node &node, const std::vector<const Tensor *> &inputs,
            std::vector<Tensor> &outputs);
} // namespace resize_reference

/// The bundle kernel calls (OpDef::lower) of Resize
/// (ResizeLower.cpp), after the float registration.
void registerResizeLowering(OpRegistry &registry);

} // namespace bundlefit
