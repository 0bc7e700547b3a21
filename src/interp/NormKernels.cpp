//===- NormKernels.cpp - Reference BatchNormalization and (Log)Softmax -----===//
#include "bundlefit/interp/Interpreter.h"

#include "FusedActivation.h"

#include <cmath>

namespace bundlefit {

using namespace kernel_util;

namespace {

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
  const Shape &xs = xt.type.shape;
  int64_t rank = int64_t(xs.size());
  bool coerce = node.attrs.getInt("coerce_to_2d", 0) != 0;
  int64_t axis = node.attrs.getInt("axis", coerce ? 1 : -1);
  if (axis < 0)
    axis += rank;
  bool isLog = node.opType == "LogSoftmax";
  // View X as [outer, len, inner] and normalise along len.
  int64_t outer = 1, len = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis)
      outer *= xs[d];
    else if (d == axis || coerce)
      len *= xs[d];
    else
      inner *= xs[d];
  }
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

} // namespace

void registerNormKernels(KernelTable &table) {
  table.add("BatchNormalization", batchNormKernel);
  table.add("Softmax", softmaxKernel);
  table.add("LogSoftmax", softmaxKernel);
}

} // namespace bundlefit
