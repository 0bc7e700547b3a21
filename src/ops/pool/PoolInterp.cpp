//===- PoolInterp.cpp - Reference pooling kernels --------------------------===//
//
// MaxPool / AveragePool over any spatial rank with the geometry of
// ShapeHelpers.h. AveragePool divides by the window positions inside the
// input (count_include_pad=0) or inside the padded input (=1).
//
//===----------------------------------------------------------------------===//
#include "pool/Pool.h"

#include "bundlefit/ops/OpRegistry.h"

#include "bundlefit/ops/ShapeHelpers.h"
#include "common/FusedActivation.h"

#include <limits>

namespace bundlefit {

using namespace kernel_util;

namespace pool_interp {

void unravel(int64_t flat, const std::vector<int64_t> &dims, std::vector<int64_t> &index) {
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = flat % dims[d];
    flat /= dims[d];
  }
}

void poolKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs) {
  const Tensor &xt = in(node, inputs, 0);
  Tensor &yt = outputs[0];
  const Shape &xs = xt.type.shape, &ys = yt.type.shape;
  size_t sr = xs.size() - 2;
  std::vector<int64_t> inSp(xs.begin() + 2, xs.end()), outSp(ys.begin() + 2, ys.end());
  std::vector<int64_t> kernel = node.attrs.getInts("kernel_shape");
  shape_helpers::Window w =
      shape_helpers::resolveWindow(node, inSp, kernel, node.attrs.getInt("ceil_mode", 0) != 0);
  bool isMax = node.opType == "MaxPool";
  bool countPad = node.attrs.getInt("count_include_pad", 0) != 0;
  int64_t planes = xs[0] * xs[1];
  int64_t inVol = numElements(inSp), kVol = numElements(kernel), outVol = numElements(outSp);
  std::vector<double> x = toDoubles(xt);
  std::vector<int64_t> inStrides = stridesOf(inSp);
  std::vector<std::vector<int64_t>> kIdx(kVol, std::vector<int64_t>(sr));
  for (int64_t k = 0; k < kVol; ++k)
    unravel(k, kernel, kIdx[k]);

  std::vector<int64_t> o(sr);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t op = 0; op < outVol; ++op) {
      unravel(op, outSp, o);
      double best = -std::numeric_limits<double>::infinity();
      double sum = 0;
      int64_t count = 0;
      for (int64_t k = 0; k < kVol; ++k) {
        int64_t offset = 0;
        bool inside = true, insidePadded = true;
        for (size_t d = 0; d < sr; ++d) {
          int64_t ip = o[d] * w.strides[d] - w.padsBegin[d] + kIdx[k][d] * w.dilations[d];
          inside = inside && ip >= 0 && ip < inSp[d];
          insidePadded = insidePadded && ip >= -w.padsBegin[d] && ip < inSp[d] + w.padsEnd[d];
          offset += ip * inStrides[d];
        }
        if (inside) {
          double v = x[p * inVol + offset];
          best = std::max(best, v);
          sum += v;
        }
        if (countPad ? insidePadded : inside)
          ++count;
      }
      double result = isMax ? best : (count ? sum / double(count) : 0.0);
      store(yt, p * outVol + op, result);
    }
}

void globalPoolKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                      std::vector<Tensor> &outputs) {
  const Tensor &xt = in(node, inputs, 0);
  const Shape &xs = xt.type.shape;
  int64_t planes = xs[0] * xs[1];
  int64_t vol = numElements(Shape(xs.begin() + 2, xs.end()));
  bool isMax = node.opType == "GlobalMaxPool";
  std::vector<double> x = toDoubles(xt);
  for (int64_t p = 0; p < planes; ++p) {
    double best = -std::numeric_limits<double>::infinity(), sum = 0;
    for (int64_t i = 0; i < vol; ++i) {
      best = std::max(best, x[p * vol + i]);
      sum += x[p * vol + i];
    }
    store(outputs[0], p, isMax ? best : sum / double(vol));
  }
}

} // namespace pool_interp

} // namespace bundlefit
