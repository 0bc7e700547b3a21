//===- GemmReference.cpp - The int8 reference Gemm --------------------------===//
//
// TFLite's int8 fully connected layer (reference_integer_ops::FullyConnected,
// per channel too), as the definition (common/Int8Reference.h):
//
//   acc[b, n] = bias[n] + sum_k (a[b, k] - aZeroPoint) * (B[k, n] - bZeroPoint[n])
//   y = clamp(requantize(acc, aScale * bScale[n] / yScale) + yZeroPoint)
//
// B is [K, N], or [N, K] with transB = 1; alpha = beta = 1 (the int8 rule).
//
//===----------------------------------------------------------------------===//
#include "matmul/MatMul.h"

#include "bundlefit/ops/ShapeHelpers.h"
#include "common/Int8Reference.h"

namespace bundlefit::matmul_reference {

using namespace int8_ref;

void gemm(const Node &node, const std::vector<const Tensor *> &inputs,
          std::vector<Tensor> &outputs) {
  if (node.attrs.getInt("transA", 0) != 0 || node.attrs.getFloat("alpha", 1.0f) != 1.0f ||
      node.attrs.getFloat("beta", 1.0f) != 1.0f)
    shape_helpers::unsupported(node, "int8 Gemm needs transA = 0 and alpha = beta = 1");
  const bool transB = node.attrs.getInt("transB", 0) != 0;
  const Shape &as = node.input(0)->type.shape;
  const int64_t B = as.at(0), K = as.at(1), N = node.output(0)->type.shape.at(1);
  const WeightedOutput stage(node, inputs, N);
  const int32_t aZero = stage.input().zeroPoint;
  const int8_t *ad = inputs[0]->data<int8_t>(), *wd = inputs[1]->data<int8_t>();
  int8_t *yd = outputs[0].data<int8_t>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t row = 0; row < B; ++row) {
      int64_t acc = stage.bias(n);
      for (int64_t k = 0; k < K; ++k) {
        const int64_t wv = wd[transB ? n * K + k : k * N + n];
        acc += (int64_t(ad[row * K + k]) - aZero) * (wv - stage.weightZeroPoint(n));
      }
      yd[row * N + n] = stage.finish(acc, n);
    }
}

} // namespace bundlefit::matmul_reference

namespace bundlefit {

void registerGemmInt8Reference(OpRegistry &registry) {
  registry.at("Gemm").int8Runs(matmul_reference::gemm);
}

} // namespace bundlefit
