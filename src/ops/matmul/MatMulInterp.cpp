//===- MatMulInterp.cpp - Reference Gemm and MatMul ------------------------===//
#include "matmul/MatMul.h"

#include "bundlefit/ops/OpRegistry.h"

#include "common/FusedActivation.h"

namespace bundlefit {

using namespace kernel_util;

namespace matmul_interp {

void gemmKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs) {
  const Tensor &at = in(node, inputs, 0), &bt = in(node, inputs, 1);
  const Tensor *ct = optionalIn(inputs, 2);
  bool ta = node.attrs.getInt("transA", 0) != 0, tb = node.attrs.getInt("transB", 0) != 0;
  double alpha = node.attrs.getFloat("alpha", 1.0f), beta = node.attrs.getFloat("beta", 1.0f);
  int64_t M = outputs[0].type.shape[0], N = outputs[0].type.shape[1];
  int64_t K = ta ? at.type.shape[0] : at.type.shape[1];
  std::vector<double> a = toDoubles(at), b = toDoubles(bt);
  std::vector<double> c = ct ? toDoubles(*ct) : std::vector<double>();
  // C broadcast: strides of 0 along dims of size 1 (or missing).
  int64_t cRows = 1, cCols = 1;
  if (ct) {
    const Shape &cs = ct->type.shape;
    cCols = cs.empty() ? 1 : cs.back();
    cRows = cs.size() == 2 ? cs[0] : 1;
  }
  FusedActivation act(node);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k) {
        double av = ta ? a[k * M + i] : a[i * K + k];
        double bv = tb ? b[j * K + k] : b[k * N + j];
        acc += av * bv;
      }
      double result = alpha * acc;
      if (ct)
        result += beta * c[(cRows == 1 ? 0 : i) * cCols + (cCols == 1 ? 0 : j)];
      store(outputs[0], i * N + j, act.apply(result));
    }
}

void matMulKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                  std::vector<Tensor> &outputs) {
  const Tensor &at = in(node, inputs, 0), &bt = in(node, inputs, 1);
  Shape as = at.type.shape, bs = bt.type.shape;
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  size_t batchRank = std::max(as.size(), bs.size()) - 2;
  // Left-pad both batch shapes with 1s to batchRank.
  Shape ab(batchRank, 1), bb(batchRank, 1), ob(batchRank, 1);
  for (size_t i = 0; i < as.size() - 2; ++i)
    ab[batchRank - (as.size() - 2) + i] = as[i];
  for (size_t i = 0; i < bs.size() - 2; ++i)
    bb[batchRank - (bs.size() - 2) + i] = bs[i];
  for (size_t i = 0; i < batchRank; ++i)
    ob[i] = std::max(ab[i], bb[i]);
  std::vector<int64_t> aStr = stridesOf(ab), bStr = stridesOf(bb);
  int64_t batches = numElements(ob);
  std::vector<double> a = toDoubles(at), b = toDoubles(bt);
  FusedActivation act(node);
  std::vector<int64_t> idx(batchRank);
  for (int64_t batch = 0; batch < batches; ++batch) {
    int64_t rest = batch, aOff = 0, bOff = 0;
    for (size_t d = batchRank; d-- > 0;) {
      idx[d] = rest % ob[d];
      rest /= ob[d];
      aOff += (ab[d] == 1 ? 0 : idx[d]) * aStr[d];
      bOff += (bb[d] == 1 ? 0 : idx[d]) * bStr[d];
    }
    aOff *= M * K;
    bOff *= K * N;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += a[aOff + i * K + k] * b[bOff + k * N + j];
        store(outputs[0], (batch * M + i) * N + j, act.apply(acc));
      }
  }
}

} // namespace matmul_interp

} // namespace bundlefit
