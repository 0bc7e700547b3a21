//===- ResizeLower.cpp - Bundle kernel calls of Resize ---------------------===//
//
// 2-D nearest and linear resizes of NCHW tensors. The source coordinate of
// every output row and column is computed here, at compile time, exactly
// as the reference interpreter does (ResizeInterp.cpp); the kernels read
// the resulting index (and weight) tables.
//
//===----------------------------------------------------------------------===//
#include "resize/Resize.h"

#include "bundlefit/ops/LowerHelpers.h"

#include <algorithm>
#include <cmath>

namespace bundlefit {
namespace {

using namespace lowering;

std::vector<KernelCall> lowerResize(const Node &node, const PlanView &) {
  std::vector<KernelCall> calls;
  const Value *x = input(node, 0), *y = node.output(0);
  requireFloat(node, x), requireFloat(node, y);
  const Shape &is = x->type.shape, &os = y->type.shape;
  if (is.size() != 4 || is[0] != os[0] || is[1] != os[1])
    unsupported(node, "only 2-D resizes of NCHW tensors (N and C unchanged)");
  std::vector<float> scales;
  if (const Value *sc = node.input(2)) {
    if (!sc->isConstant())
      unsupported(node, "scales must be a constant");
    scales = sc->toFloats();
  }
  const std::string mode = node.attrs.getString("mode", "nearest");
  const std::string coord = node.attrs.getString("coordinate_transformation_mode", "half_pixel");
  const std::string nearestMode = node.attrs.getString("nearest_mode", "round_prefer_floor");
  if (mode != "nearest" && mode != "linear")
    unsupported(node, "resize mode '" + mode + "'");
  // tf_crop_and_resize samples the region of interest (input 1, per axis
  // start fractions then end fractions); N and C must be left whole.
  const bool crop = coord == "tf_crop_and_resize";
  std::vector<float> roi;
  if (crop) {
    const Value *r = node.input(1);
    if (!r || !r->isConstant())
      unsupported(node, "tf_crop_and_resize needs a constant roi");
    roi = r->toFloats();
    if (roi.size() != 8)
      unsupported(node, "tf_crop_and_resize roi must have 8 values (4-D)");
    for (size_t axis = 0; axis < 2; ++axis)
      if (is[axis] != 1 && (roi[axis] != 0.0f || roi[axis + 4] != 1.0f))
        unsupported(node, "tf_crop_and_resize cropping N or C");
  }
  // Source coordinate of output index o along one axis, exactly as
  // ResizeInterp.cpp (the ONNX reference): with scales, the
  // "resized length" of align_corners / pytorch_half_pixel is scale * inLen,
  // not the (floored) output length, which differs when downsampling.
  const Value *sizes = node.input(3);
  // Without 4 scales the output shape alone defines the scale (sizes input).
  const bool useSizes = (sizes && sizes->type.rank() > 0) || scales.size() != 4;
  auto source = [&](int64_t o, int64_t inLen, int64_t outLen, size_t axis) {
    const double scale = useSizes ? double(outLen) / double(inLen) : double(scales[axis]);
    const double resizedLen = useSizes ? double(outLen) : scale * double(inLen);
    if (coord != "half_pixel" && coord != "pytorch_half_pixel" && coord != "align_corners" &&
        coord != "asymmetric" && coord != "tf_half_pixel_for_nn" && !crop)
      unsupported(node, "coordinate_transformation_mode '" + coord + "'");
    return resizeSourceCoordinate<double>(coord, o, inLen, scale, resizedLen,
                                          crop ? double(roi[axis]) : 0.0,
                                          crop ? double(roi[axis + 4]) : 1.0);
  };
  auto clampIndex = [](int64_t i, int64_t n) { return int32_t(std::clamp<int64_t>(i, 0, n - 1)); };
  // Nearest picks floor(v) or floor(v) + 1 by the fraction, as the interpreter.
  if (nearestMode != "round_prefer_floor" && nearestMode != "round_prefer_ceil" &&
      nearestMode != "floor" && nearestMode != "ceil")
    unsupported(node, "nearest_mode '" + nearestMode + "'");
  auto nearest = [&](double v) -> int64_t {
    const double f = std::floor(v), ratio = v - f;
    bool up = false;
    if (nearestMode == "round_prefer_ceil")
      up = ratio >= 0.5;
    else if (nearestMode == "ceil")
      up = ratio > 0;
    else if (nearestMode == "round_prefer_floor")
      up = ratio > 0.5;
    return int64_t(f) + (up ? 1 : 0);
  };
  const int64_t NC = is[0] * is[1], IH = is[2], IW = is[3], OH = os[2], OW = os[3];
  // tf_crop_and_resize writes extrapolation_value where the source coordinate
  // falls outside the input. The coordinate is linear in the output index, so
  // the inside outputs of an axis are one interval [begin, end); the resize
  // kernels compute every output (clamped, in bounds) and bf_fill_outside_f32
  // overwrites the rest.
  auto insideInterval = [&](int64_t inLen, int64_t outLen, size_t axis) {
    int32_t begin = 0, end = 0;
    bool seen = false;
    for (int64_t o = 0; o < outLen; ++o) {
      const double v = source(o, inLen, outLen, axis);
      const bool inside = !(v < 0 || v > double(inLen - 1));
      if (inside && !seen)
        begin = int32_t(o), seen = true;
      if (inside && end != 0 && end != o)
        unsupported(node, "tf_crop_and_resize with a non-contiguous region");
      if (inside)
        end = int32_t(o + 1);
    }
    return std::make_pair(begin, end);
  };
  auto fillOutside = [&]() {
    if (!crop)
      return;
    const auto [hBegin, hEnd] = insideInterval(IH, OH, 2);
    const auto [wBegin, wEnd] = insideInterval(IW, OW, 3);
    if (hBegin == 0 && hEnd == OH && wBegin == 0 && wEnd == OW)
      return;
    calls.push_back(call("bf_fill_outside_f32",
                         {KernelArg::address(y), KernelArg::i32(NC), KernelArg::i32(OH),
                          KernelArg::i32(OW), KernelArg::i32(hBegin), KernelArg::i32(hEnd),
                          KernelArg::i32(wBegin), KernelArg::i32(wEnd),
                          KernelArg::f32(node.attrs.getFloat("extrapolation_value", 0.0f))}));
  };
  if (mode == "nearest") {
    std::vector<int32_t> hIdx(OH), wIdx(OW);
    for (int64_t o = 0; o < OH; ++o)
      hIdx[o] = clampIndex(nearest(source(o, IH, OH, 2)), IH);
    for (int64_t o = 0; o < OW; ++o)
      wIdx[o] = clampIndex(nearest(source(o, IW, OW, 3)), IW);
    bf_resize_params p = resizeParams(node, is, os);
    p.in_zero_point = 0, p.out_zero_point = 0;
    calls.push_back(
        call("bf_resize_nearest_f32",
             {KernelArg::address(x), KernelArg::address(y), kernelParams(node, p),
              KernelArg::i32Table(std::move(hIdx)), KernelArg::i32Table(std::move(wIdx))}));
    fillOutside();
    return calls;
  }
  auto linearTables = [&](int64_t inLen, int64_t outLen, size_t axis, std::vector<int32_t> &i0,
                          std::vector<int32_t> &i1, std::vector<float> &wt) {
    for (int64_t o = 0; o < outLen; ++o) {
      double v = std::clamp(source(o, inLen, outLen, axis), 0.0, double(inLen - 1));
      const int64_t f = int64_t(std::floor(v));
      i0.push_back(clampIndex(f, inLen));
      i1.push_back(clampIndex(f + 1, inLen));
      wt.push_back(float(v - double(f)));
    }
  };
  std::vector<int32_t> h0, h1, w0, w1;
  std::vector<float> hw, ww;
  linearTables(IH, OH, 2, h0, h1, hw);
  linearTables(IW, OW, 3, w0, w1, ww);
  bf_resize_params p = resizeParams(node, is, os);
  p.in_zero_point = 0, p.out_zero_point = 0;
  calls.push_back(
      call("bf_resize_linear_f32",
           {KernelArg::address(x), KernelArg::address(y), kernelParams(node, p),
            KernelArg::i32Table(h0), KernelArg::i32Table(h1), KernelArg::f32Table(hw),
            KernelArg::i32Table(w0), KernelArg::i32Table(w1), KernelArg::f32Table(ww)}));
  fillOutside();
  return calls;
}

} // namespace

bf_resize_params resizeParams(const Node &node, const Shape &in, const Shape &out) {
  bf_resize_params p = unsetKernelParams<bf_resize_params>();
  p.nc = paramI32(node, in.at(0) * in.at(1));
  p.ih = paramI32(node, in.at(2)), p.iw = paramI32(node, in.at(3));
  p.oh = paramI32(node, out.at(2)), p.ow = paramI32(node, out.at(3));
  return p;
}

void registerResizeLowering(OpRegistry &registry) { registry.at("Resize").lower = lowerResize; }

} // namespace bundlefit
