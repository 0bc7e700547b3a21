//===- MatMulLower.cpp - Gemm and MatMul's float kernel calls --------------===//
//
// Float Gemm (bf_gemm_f32, bf_gemm_params) and MatMul (bf_matmul_f32,
// bf_matmul_params) as kernel calls: one per MatMul when its batch
// dimensions broadcast to a linear sequence of operands, else one per batch.
// Code generation emitted these itself once, matching the op names.
//
//===----------------------------------------------------------------------===//
#include "matmul/MatMul.h"

#include "bundlefit/ops/KernelParams.h"
#include "bundlefit/ops/LowerHelpers.h"
#include "bundlefit/ops/OpRegistry.h"

#include <algorithm>
#include <vector>

namespace bundlefit {
namespace {

using namespace lowering;

std::vector<KernelCall> lowerGemm(const Node &node, const PlanView &) {
  const Value *a = input(node, 0), *b = input(node, 1), *c = node.input(2), *y = node.output(0);
  requireFloat(node, a), requireFloat(node, b), requireFloat(node, y);
  const int64_t transA = node.attrs.getInt("transA", 0), transB = node.attrs.getInt("transB", 0);
  const Shape &as = a->type.shape, &ys = y->type.shape;
  if (as.size() != 2 || b->type.rank() != 2 || ys.size() != 2)
    unsupported(node, "Gemm operands must be 2-D");
  const int64_t M = ys[0], N = ys[1], K = transA ? as[0] : as[1];
  int64_t cStrideM = 0, cStrideN = 0;
  if (c) {
    requireFloat(node, c);
    Shape cs = c->type.shape;
    while (cs.size() < 2)
      cs.insert(cs.begin(), 1);
    if (cs.size() != 2 || (cs[0] != 1 && cs[0] != M) || (cs[1] != 1 && cs[1] != N))
      unsupported(node, "C of shape " + shapeToString(c->type.shape) + " does not broadcast to " +
                            shapeToString(ys));
    cStrideM = cs[0] == 1 ? 0 : cs[1];
    cStrideN = cs[1] == 1 ? 0 : 1;
  }
  bf_gemm_params gemm = unsetKernelParams<bf_gemm_params>();
  gemm.m = paramI32(node, M), gemm.n = paramI32(node, N), gemm.k = paramI32(node, K);
  gemm.trans_a = transA != 0, gemm.trans_b = transB != 0;
  gemm.c_stride_m = paramI32(node, cStrideM), gemm.c_stride_n = paramI32(node, cStrideN);
  return {call("bf_gemm_f32",
               {KernelArg::address(a), KernelArg::address(b), KernelArg::address(c),
                KernelArg::address(y), kernelParams(node, gemm),
                KernelArg::f32(node.attrs.getFloat("alpha", 1.0f)),
                KernelArg::f32(node.attrs.getFloat("beta", 1.0f)), KernelArg::activation(node)})};
}

std::vector<KernelCall> lowerMatMul(const Node &node, const PlanView &) {
  const Value *a = input(node, 0), *b = input(node, 1), *y = node.output(0);
  requireFloat(node, a), requireFloat(node, b), requireFloat(node, y);
  Shape as = a->type.shape, bs = b->type.shape;
  if (as.empty() || bs.empty())
    unsupported(node, "scalar operand");
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (bs[bs.size() - 2] != K)
    unsupported(node, "inner dimensions differ");
  // Broadcast the batch dimensions.
  Shape aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
  const size_t rank = std::max(aBatch.size(), bBatch.size());
  aBatch.insert(aBatch.begin(), rank - aBatch.size(), 1);
  bBatch.insert(bBatch.begin(), rank - bBatch.size(), 1);
  Shape batch(rank);
  for (size_t d = 0; d < rank; ++d)
    batch[d] = std::max(aBatch[d], bBatch[d]);
  const int64_t count = product(batch, 0, rank);
  const Ints aStride = denseStrides(aBatch), bStride = denseStrides(bBatch);
  std::vector<int64_t> aOff(count), bOff(count);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, ao = 0, bo = 0;
    for (int d = int(rank) - 1; d >= 0; --d) {
      const int64_t idx = rest % batch[d];
      rest /= batch[d];
      ao += (aBatch[d] == 1 ? 0 : idx) * aStride[d];
      bo += (bBatch[d] == 1 ? 0 : idx) * bStride[d];
    }
    aOff[i] = ao * M * K;
    bOff[i] = bo * K * N;
  }
  bool linear = true;
  for (int64_t i = 0; i < count && linear; ++i)
    linear = aOff[i] == i * (count > 1 ? aOff[1] : 0) && bOff[i] == i * (count > 1 ? bOff[1] : 0);
  bf_matmul_params mm = unsetKernelParams<bf_matmul_params>();
  mm.m = paramI32(node, M), mm.k = paramI32(node, K), mm.n = paramI32(node, N);
  if (linear) {
    mm.batch = paramI32(node, count);
    mm.a_batch_stride = paramI32(node, count > 1 ? aOff[1] : 0);
    mm.b_batch_stride = paramI32(node, count > 1 ? bOff[1] : 0);
    return {
        call("bf_matmul_f32", {KernelArg::address(a), KernelArg::address(b), KernelArg::address(y),
                               kernelParams(node, mm), KernelArg::activation(node)})};
  }
  mm.batch = 1, mm.a_batch_stride = 0, mm.b_batch_stride = 0;
  std::vector<KernelCall> calls;
  for (int64_t i = 0; i < count; ++i)
    calls.push_back(call("bf_matmul_f32",
                         {KernelArg::address(a, aOff[i] * 4), KernelArg::address(b, bOff[i] * 4),
                          KernelArg::address(y, i * M * N * 4), kernelParams(node, mm),
                          KernelArg::activation(node)}));
  return calls;
}

} // namespace

void registerMatMulLowering(OpRegistry &registry) {
  registry.at("Gemm").lower = lowerGemm;
  registry.at("MatMul").lower = lowerMatMul;
}

} // namespace bundlefit
