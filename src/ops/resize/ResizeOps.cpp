//===- ResizeOps.cpp - Resize (opset-13 operands) --------------------------===//
//
// Resize(X, roi?, scales?, sizes?): exactly one of scales / sizes is a
// non-empty constant of length rank(X). Output dims are sizes, or
// floor(in * scale). Supported: mode nearest (nearest_mode
// round_prefer_floor, round_prefer_ceil, floor, ceil) and linear (N-D,
// separable); coordinate_transformation_mode half_pixel, asymmetric,
// align_corners, pytorch_half_pixel, tf_half_pixel_for_nn, tf_crop_and_resize
// (roi must then be a constant). Unsupported: mode cubic, antialias, axes,
// keep_aspect_ratio_policy. MACs = 0 (data movement / interpolation).
//
//===----------------------------------------------------------------------===//
#include "resize/Resize.h"

#include "bundlefit/ops/OpRegistry.h"

#include "bundlefit/ops/ShapeHelpers.h"

#include <cmath>

namespace bundlefit {

using namespace shape_helpers;

namespace {

/// A present, non-empty optional operand (nullptr otherwise).
const Value *nonEmpty(const Node &node, size_t index) {
  const Value *value = node.input(index);
  return value && value->type.numElements() > 0 && value->type.rank() > 0 ? value : nullptr;
}

void inferResize(Node &node) {
  const Value &x = requireInput(node, 0, "X");
  size_t rank = x.type.rank();
  if (rank == 0)
    unsupported(node, "input X " + x.type.str() + " must have rank >= 1");

  std::string mode = node.attrs.getString("mode", "nearest");
  if (mode == "cubic")
    unsupported(node, "attribute 'mode'=\"cubic\" is not supported");
  if (mode != "nearest" && mode != "linear")
    unsupported(node, "attribute 'mode'=\"" + mode + "\" is not supported");
  std::string nearestMode = node.attrs.getString("nearest_mode", "round_prefer_floor");
  if (nearestMode != "round_prefer_floor" && nearestMode != "round_prefer_ceil" &&
      nearestMode != "floor" && nearestMode != "ceil")
    unsupported(node, "attribute 'nearest_mode'=\"" + nearestMode + "\" is not supported");
  std::string ctm = node.attrs.getString("coordinate_transformation_mode", "half_pixel");
  if (ctm != "half_pixel" && ctm != "asymmetric" && ctm != "align_corners" &&
      ctm != "pytorch_half_pixel" && ctm != "tf_half_pixel_for_nn" && ctm != "tf_crop_and_resize")
    unsupported(node,
                "attribute 'coordinate_transformation_mode'=\"" + ctm + "\" is not supported");
  if (node.attrs.getInt("antialias", 0) != 0)
    unsupported(node, "attribute 'antialias'=1 is not supported");
  if (node.attrs.has("axes"))
    unsupported(node, "attribute 'axes' is not supported");
  std::string policy = node.attrs.getString("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch")
    unsupported(node, "attribute 'keep_aspect_ratio_policy'=\"" + policy + "\" is not supported");

  if (ctm == "tf_crop_and_resize") {
    const Value *roi = nonEmpty(node, 1);
    if (!roi)
      unsupported(node, "input 'roi' is required with coordinate_transformation_mode "
                        "\"tf_crop_and_resize\"");
    if (!roi->isConstant())
      unsupported(node, "input 'roi' ('" + roi->name + "') must be a constant");
    if (size_t(roi->type.numElements()) != 2 * rank)
      unsupported(node, "input 'roi' " + roi->type.str() + " must have " +
                            std::to_string(2 * rank) + " elements");
  }

  const Value *scales = nonEmpty(node, 2), *sizes = nonEmpty(node, 3);
  if (scales && sizes)
    unsupported(node, "inputs 'scales' and 'sizes' are both given; only one may be");
  if (!scales && !sizes)
    unsupported(node, "one of the inputs 'scales' and 'sizes' is required");
  Shape out(rank);
  if (sizes) {
    if (!sizes->isConstant())
      unsupported(node, "input 'sizes' ('" + sizes->name + "') must be a constant");
    std::vector<int64_t> values = sizes->toInts();
    if (values.size() != rank)
      unsupported(node, "input 'sizes' has " + std::to_string(values.size()) + " elements, X " +
                            x.type.str() + " has rank " + std::to_string(rank));
    for (size_t i = 0; i < rank; ++i) {
      if (values[i] < 1)
        unsupported(node, "input 'sizes'=" + intsToString(values) + " must be positive");
      out[i] = values[i];
    }
  } else {
    if (!scales->isConstant())
      unsupported(node, "input 'scales' ('" + scales->name + "') must be a constant");
    std::vector<float> values = scales->toFloats();
    if (values.size() != rank)
      unsupported(node, "input 'scales' has " + std::to_string(values.size()) + " elements, X " +
                            x.type.str() + " has rank " + std::to_string(rank));
    for (size_t i = 0; i < rank; ++i) {
      if (!(values[i] > 0))
        unsupported(node, "input 'scales' must be positive, element " + std::to_string(i) + " is " +
                              std::to_string(values[i]));
      out[i] = int64_t(std::floor(double(values[i]) * double(x.type.shape[i])));
      if (out[i] < 1)
        unsupported(node, "input 'scales' element " + std::to_string(i) + " (" +
                              std::to_string(values[i]) + ") gives an empty output");
    }
  }
  // Keeps an int8 output's parameters (the quantizer's; Int8Rule::SameParams).
  setDTypeAndShape(*node.output(0), x.type.dtype, out);
}

uint64_t noMacs(const Node &) { return 0; }

} // namespace

void registerResizeOps(OpRegistry &registry) {
  registry.add({"Resize", inferResize, noMacs})
      .parameters(kParametersFrom1)
      .runs(resize_interp::resizeKernel);
  registerResizeLowering(registry);
}

} // namespace bundlefit
