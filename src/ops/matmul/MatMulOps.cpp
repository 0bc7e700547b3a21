//===- MatMulOps.cpp - Gemm and MatMul -------------------------------------===//
//
// Gemm    A[M,K] (or [K,M] with transA), B[K,N] (or [N,K] with transB),
//         C optional, unidirectionally broadcastable to [M,N] -> Y[M,N].
// MatMul  numpy matmul: batch dims broadcast; a 1-D A gets a 1 prepended and
//         a 1-D B a 1 appended, both removed from the result.
// MACs: Gemm = M*N*K; MatMul = |Y| * K. Both may carry a fused activation.
//
//===----------------------------------------------------------------------===//
#include "matmul/MatMul.h"
#include "quant/Quant.h"

#include "bundlefit/ops/OpRegistry.h"

#include "bundlefit/ops/ShapeHelpers.h"

namespace bundlefit {

using namespace shape_helpers;

namespace {

struct GemmDims {
  int64_t m, n, k;
};

GemmDims gemmDims(const Node &node) {
  const Value &a = requireInput(node, 0, "A");
  const Value &b = requireInput(node, 1, "B");
  if (a.type.rank() != 2)
    unsupported(node, "input A " + a.type.str() + " must have rank 2");
  if (b.type.rank() != 2)
    unsupported(node, "input B " + b.type.str() + " must have rank 2");
  bool ta = node.attrs.getInt("transA", 0) != 0, tb = node.attrs.getInt("transB", 0) != 0;
  int64_t m = ta ? a.type.shape[1] : a.type.shape[0];
  int64_t ka = ta ? a.type.shape[0] : a.type.shape[1];
  int64_t kb = tb ? b.type.shape[1] : b.type.shape[0];
  int64_t n = tb ? b.type.shape[0] : b.type.shape[1];
  if (ka != kb)
    unsupported(node, "inner dimensions differ: A " + a.type.str() +
                          " (attribute 'transA'=" + std::to_string(ta) + ") and B " + b.type.str() +
                          " (attribute 'transB'=" + std::to_string(tb) + ")");
  return {m, n, ka};
}

void inferGemm(Node &node) {
  GemmDims d = gemmDims(node);
  const Value *c = node.input(2);
  if (c && c->type.numElements() > 0) {
    const Shape &cs = c->type.shape;
    Shape target{d.m, d.n};
    bool ok = cs.size() <= 2;
    for (size_t i = 0; ok && i < cs.size(); ++i) {
      int64_t dim = cs[cs.size() - 1 - i], want = target[1 - i];
      ok = dim == 1 || dim == want;
    }
    if (!ok)
      unsupported(node, "input C " + c->type.str() + " does not broadcast to [" +
                            std::to_string(d.m) + "," + std::to_string(d.n) + "]");
  }
  checkFusedActivation(node);
  setDTypeAndShape(*node.output(0), node.input(0)->type.dtype, Shape{d.m, d.n});
}

uint64_t gemmMacs(const Node &node) {
  const Value *a = node.input(0), *y = node.output(0);
  if (!a || !y || a->type.rank() != 2 || y->type.rank() != 2)
    return 0;
  int64_t k = node.attrs.getInt("transA", 0) != 0 ? a->type.shape[0] : a->type.shape[1];
  return macProduct(node, {uint64_t(y->type.numElements()), uint64_t(k)}); // M * N * K
}

/// numpy.matmul's output shape for operands `a` and `b` of `node`.
Shape matMulShape(const Node &node, const Value &a, const Value &b) {
  if (a.type.rank() < 1 || b.type.rank() < 1)
    unsupported(node, "operands " + a.type.str() + " and " + b.type.str() + " must have rank >= 1");
  Shape as = a.type.shape, bs = b.type.shape;
  bool aVec = as.size() == 1, bVec = bs.size() == 1;
  if (aVec)
    as.insert(as.begin(), 1);
  if (bVec)
    bs.push_back(1);
  if (as.back() != bs[bs.size() - 2])
    unsupported(node, "inner dimensions differ: A " + a.type.str() + " and B " + b.type.str());
  size_t batchRank = std::max(as.size(), bs.size()) - 2;
  Shape out(batchRank);
  for (size_t i = 0; i < batchRank; ++i) {
    // Align from the right over the batch dims.
    int64_t ai = int64_t(as.size()) - 3 - int64_t(i), bi = int64_t(bs.size()) - 3 - int64_t(i);
    int64_t da = ai >= 0 ? as[ai] : 1, db = bi >= 0 ? bs[bi] : 1;
    if (da != db && da != 1 && db != 1)
      unsupported(node, "batch dimensions of A " + a.type.str() + " and B " + b.type.str() +
                            " do not broadcast");
    out[batchRank - 1 - i] = da == 1 ? db : da;
  }
  if (!aVec)
    out.push_back(as[as.size() - 2]);
  if (!bVec)
    out.push_back(bs.back());
  return out;
}

void inferMatMul(Node &node) {
  const Value &a = requireInput(node, 0, "A");
  Shape out = matMulShape(node, a, requireInput(node, 1, "B"));
  checkFusedActivation(node);
  setDTypeAndShape(*node.output(0), a.type.dtype, out);
}

void requireInt8OrUInt8(const Node &node, const Value &value) {
  if (value.type.dtype != DType::Int8 && value.type.dtype != DType::UInt8)
    unsupported(node,
                "operand '" + value.name + "' is " + value.type.str() + "; expected int8 or uint8");
}

/// MatMulInteger(A, B, [a_zero_point], [b_zero_point]) -> int32.
void inferMatMulInteger(Node &node) {
  const Value &a = requireInput(node, 0, "A"), &b = requireInput(node, 1, "B");
  requireInt8OrUInt8(node, a);
  requireInt8OrUInt8(node, b);
  setDTypeAndShape(*node.output(0), DType::Int32, matMulShape(node, a, b));
}

/// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) -> y_zp's type.
void inferQLinearMatMul(Node &node) {
  const Value &a = requireInput(node, 0, "a"), &b = requireInput(node, 3, "b");
  const Value &yZp = requireInput(node, 7, "y_zero_point");
  requireInt8OrUInt8(node, a);
  requireInt8OrUInt8(node, b);
  requireInt8OrUInt8(node, yZp);
  setDTypeAndShape(*node.output(0), yZp.type.dtype, matMulShape(node, a, b));
}

uint64_t matMulMacs(const Node &node) {
  const Value *a = node.input(0), *y = node.output(0);
  if (!a || !y || a->type.rank() == 0)
    return 0;
  return macProduct(node, {uint64_t(y->type.numElements()), uint64_t(a->type.shape.back())});
}

} // namespace

void registerMatMulOps(OpRegistry &registry) {
  OpDef &gemm = registry.add({"Gemm", inferGemm, gemmMacs}).runs(matmul_interp::gemmKernel);
  gemm.device.costClass = gemm_int8::costClass;
  gemm.biasOperand = 2;
  gemm.glowNames = {"fullyconnected"};
  registry.add({"MatMul", inferMatMul, matMulMacs})
      .runs(matmul_interp::matMulKernel)
      .device.costClass = gemm_int8::costClass;
  // Reference interpreter only (conformance); the driver rewrites
  // QLinearMatMul into Q/DQ pairs first (quant/FoldQdq.h).
  registry.add({"MatMulInteger", inferMatMulInteger, matMulMacs})
      .runs(linear_quant_interp::matMulIntegerKernel);
  registry.add({"QLinearMatMul", inferQLinearMatMul, matMulMacs})
      .with(kOpQOperator)
      .runs(linear_quant_interp::qlinearMatMulKernel);
  registerMatMulLowering(registry);
}

} // namespace bundlefit
