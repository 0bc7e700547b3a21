//===- NormInterp.cpp - Reference Batch/Layer/InstanceNorm, (Log)Softmax ---===//
#include "norm/Norm.h"

#include "bundlefit/ops/OpRegistry.h"

#include "common/FusedActivation.h"

#include "bundlefit/ops/Softmax.h"

#include <cmath>

namespace bundlefit {

using namespace kernel_util;

namespace norm_interp {

void batchNormKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                     std::vector<Tensor> &outputs) {
  const Tensor &xt = in(node, inputs, 0);
  std::vector<double> x = toDoubles(xt);
  std::vector<double> scale = toDoubles(in(node, inputs, 1)), bias = toDoubles(in(node, inputs, 2));
  std::vector<double> mean = toDoubles(in(node, inputs, 3)), var = toDoubles(in(node, inputs, 4));
  double eps = node.attrs.getFloat("epsilon", 1e-5f);
  const Shape &xs = xt.type.shape;
  int64_t N = xs[0], C = xs[1], inner = numElements(Shape(xs.begin() + 2, xs.end()));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      double invStd = 1.0 / std::sqrt(var[c] + eps);
      for (int64_t i = 0; i < inner; ++i) {
        int64_t idx = (n * C + c) * inner + i;
        store(outputs[0], idx, scale[c] * (x[idx] - mean[c]) * invStd + bias[c]);
      }
    }
}

void softmaxKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                   std::vector<Tensor> &outputs) {
  const Tensor &xt = in(node, inputs, 0);
  bool isLog = node.opType == "LogSoftmax";
  // View X as [outer, len, inner] and normalise along len.
  const SoftmaxExtents extents = softmaxExtents(node, xt.type.shape);
  const int64_t outer = extents.outer, len = extents.len, inner = extents.inner;
  std::vector<double> x = toDoubles(xt);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t l) { return (o * len + l) * inner + i; };
      double maxv = -INFINITY;
      for (int64_t l = 0; l < len; ++l)
        maxv = std::max(maxv, x[at(l)]);
      double sum = 0;
      for (int64_t l = 0; l < len; ++l)
        sum += std::exp(x[at(l)] - maxv);
      for (int64_t l = 0; l < len; ++l) {
        double shifted = x[at(l)] - maxv;
        store(outputs[0], at(l), isLog ? shifted - std::log(sum) : std::exp(shifted) / sum);
      }
    }
}

/// LayerNormalization over the dims [axis, rank): Y, Mean, InvStdDev.
void layerNormKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                     std::vector<Tensor> &outputs) {
  const Tensor &xt = in(node, inputs, 0);
  const Shape &xs = xt.type.shape;
  const int64_t rank = int64_t(xs.size());
  int64_t axis = node.attrs.getInt("axis", -1);
  if (axis < 0)
    axis += rank;
  const int64_t inner = numElements(Shape(xs.begin() + axis, xs.end()));
  const int64_t outer = inner == 0 ? 0 : xt.numElements() / inner;
  const double eps = node.attrs.getFloat("epsilon", 1e-5f);
  std::vector<double> x = toDoubles(xt), scale = toDoubles(in(node, inputs, 1));
  std::vector<double> bias(size_t(inner), 0.0);
  if (inputs.size() > 2 && inputs[2])
    bias = toDoubles(*inputs[2]);
  for (int64_t o = 0; o < outer; ++o) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; ++i)
      mean += x[o * inner + i];
    mean /= double(inner);
    for (int64_t i = 0; i < inner; ++i)
      var += (x[o * inner + i] - mean) * (x[o * inner + i] - mean);
    const double invStd = 1.0 / std::sqrt(var / double(inner) + eps);
    for (int64_t i = 0; i < inner; ++i)
      store(outputs[0], o * inner + i, (x[o * inner + i] - mean) * invStd * scale[i] + bias[i]);
    if (outputs.size() > 1)
      store(outputs[1], o, mean);
    if (outputs.size() > 2)
      store(outputs[2], o, invStd);
  }
}

/// InstanceNormalization: per (n, c) plane, normalised then scaled.
void instanceNormKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                        std::vector<Tensor> &outputs) {
  const Tensor &xt = in(node, inputs, 0);
  const Shape &xs = xt.type.shape;
  const int64_t N = xs[0], C = xs[1], plane = numElements(Shape(xs.begin() + 2, xs.end()));
  const double eps = node.attrs.getFloat("epsilon", 1e-5f);
  std::vector<double> x = toDoubles(xt);
  std::vector<double> scale = toDoubles(in(node, inputs, 1)), bias = toDoubles(in(node, inputs, 2));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      const int64_t base = (n * C + c) * plane;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < plane; ++i)
        mean += x[base + i];
      mean /= double(plane);
      for (int64_t i = 0; i < plane; ++i)
        var += (x[base + i] - mean) * (x[base + i] - mean);
      const double invStd = 1.0 / std::sqrt(var / double(plane) + eps);
      for (int64_t i = 0; i < plane; ++i)
        store(outputs[0], base + i, (x[base + i] - mean) * invStd * scale[c] + bias[c]);
    }
}

} // namespace norm_interp

} // namespace bundlefit
