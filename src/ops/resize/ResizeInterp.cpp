//===- ResizeInterp.cpp - Reference Resize ---------------------------------===//
//
// Follows the ONNX reference implementation: each output coordinate is mapped
// to an input coordinate per dim (coordinate_transformation_mode), then
// nearest picks one neighbour (nearest_mode) and linear blends floor(x) and
// floor(x)+1; neighbour indices are clamped to the input (edge padding). N-D
// interpolation is the product of the per-dim weights (separable).
//
//===----------------------------------------------------------------------===//
#include "resize/Resize.h"

#include "bundlefit/ops/OpRegistry.h"

#include "common/FusedActivation.h"

#include <cmath>

namespace bundlefit {

using namespace kernel_util;

namespace resize_interp {

std::vector<DimMap> dimMaps(const Node &node, const Shape &xs, const Shape &ys,
                            const std::vector<double> &roi, const std::vector<double> &scaleValues,
                            bool useSizes) {
  const size_t rank = xs.size();
  const bool linear = node.attrs.getString("mode", "nearest") == "linear";
  const std::string nearestMode = node.attrs.getString("nearest_mode", "round_prefer_floor");
  const std::string ctm = node.attrs.getString("coordinate_transformation_mode", "half_pixel");
  std::vector<DimMap> maps(rank);
  for (size_t d = 0; d < rank; ++d) {
    int64_t inLen = xs[d], outLen = ys[d];
    double scale = useSizes ? double(outLen) / double(inLen) : scaleValues[d];
    // As in the ONNX reference: the resized length is scale * input length.
    double resizedLen = useSizes ? double(outLen) : scale * double(inLen);
    DimMap &m = maps[d];
    m.i0.resize(outLen);
    m.i1.resize(outLen);
    m.w1.resize(outLen);
    m.outside.assign(outLen, false);
    for (int64_t o = 0; o < outLen; ++o) {
      const bool crop = ctm == "tf_crop_and_resize";
      const double x = resizeSourceCoordinate<double>(
          ctm, o, inLen, scale, resizedLen, crop ? roi[d] : 0.0, crop ? roi[d + rank] : 1.0);
      if (crop)
        m.outside[o] = x < 0 || x > double(inLen - 1);
      double fl = std::floor(x), ratio = x - fl;
      int64_t base = int64_t(fl);
      double w1;
      if (linear) {
        w1 = ratio;
      } else if (nearestMode == "round_prefer_ceil") {
        w1 = ratio >= 0.5 ? 1 : 0;
      } else if (nearestMode == "floor") {
        w1 = 0;
      } else if (nearestMode == "ceil") {
        w1 = ratio > 0 ? 1 : 0;
      } else { // round_prefer_floor
        w1 = ratio > 0.5 ? 1 : 0;
      }
      auto clampIdx = [&](int64_t i) {
        return std::min<int64_t>(std::max<int64_t>(i, 0), inLen - 1);
      };
      m.i0[o] = clampIdx(base);
      m.i1[o] = clampIdx(base + 1);
      m.w1[o] = w1;
    }
  }
  return maps;
}

void resizeKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                  std::vector<Tensor> &outputs) {
  const Tensor &xt = in(node, inputs, 0);
  const Tensor *roiT = optionalIn(inputs, 1);
  const Tensor *scalesT = optionalIn(inputs, 2);
  const Tensor *sizesT = optionalIn(inputs, 3);
  Tensor &yt = outputs[0];
  const Shape &xs = xt.type.shape, &ys = yt.type.shape;
  size_t rank = xs.size();
  double extrapolation = node.attrs.getFloat("extrapolation_value", 0.0f);
  std::vector<double> roi = roiT ? toDoubles(*roiT) : std::vector<double>();
  std::vector<double> scaleValues =
      (scalesT && scalesT->type.rank() > 0) ? toDoubles(*scalesT) : std::vector<double>();
  bool useSizes = sizesT && sizesT->type.rank() > 0;

  std::vector<DimMap> maps = dimMaps(node, xs, ys, roi, scaleValues, useSizes);

  std::vector<int64_t> inStrides = stridesOf(xs);
  std::vector<double> x = toDoubles(xt);
  int64_t total = numElements(ys);
  std::vector<int64_t> o(rank);
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat;
    for (size_t d = rank; d-- > 0;) {
      o[d] = rest % ys[d];
      rest /= ys[d];
    }
    bool outside = false;
    for (size_t d = 0; d < rank; ++d)
      outside = outside || maps[d].outside[o[d]];
    if (outside) {
      store(yt, flat, extrapolation);
      continue;
    }
    double acc = 0;
    for (uint64_t corner = 0; corner < (uint64_t(1) << rank); ++corner) {
      double weight = 1;
      int64_t offset = 0;
      for (size_t d = 0; d < rank && weight != 0; ++d) {
        const DimMap &m = maps[d];
        bool upper = (corner >> d) & 1;
        weight *= upper ? m.w1[o[d]] : 1 - m.w1[o[d]];
        offset += (upper ? m.i1[o[d]] : m.i0[o[d]]) * inStrides[d];
      }
      if (weight != 0)
        acc += weight * x[offset];
    }
    store(yt, flat, acc);
  }
}

} // namespace resize_interp

} // namespace bundlefit
