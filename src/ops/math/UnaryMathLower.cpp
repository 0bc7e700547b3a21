//===- UnaryMathLower.cpp - Bundle kernel calls of the float math ops ------===//
//
// bf_unary_f32 with the op's code and attributes; Neg, Abs, Elu and
// Reciprocal keep their own kernels (simpler loops than the switch).
//
//===----------------------------------------------------------------------===//
#include "math/Math.h"

#include "bundlefit/ops/LowerHelpers.h"
#include "bundlefit/ops/UnaryMath.h"

namespace bundlefit {
namespace {

using namespace lowering;

struct OwnKernel {
  const char *opType;
  const char *kernel;
};
const OwnKernel kOwnKernels[] = {{"Neg", "bf_neg_f32"},
                                 {"Abs", "bf_abs_f32"},
                                 {"Elu", "bf_elu_f32"},
                                 {"Reciprocal", "bf_reciprocal_f32"}};

std::vector<KernelCall> lowerUnaryMath(const Node &node, const PlanView &) {
  const UnaryMathOp *op = findUnaryMathOp(node.opType);
  if (!op)
    unsupported(node, "no bundle kernel for this operator");
  // The row's attributes and defaults, for the own kernels too (Elu's alpha).
  float a, b;
  unaryMathParams(*op, node, a, b);
  for (const OwnKernel &own : kOwnKernels)
    if (node.opType == own.opType)
      return {unaryCall(node, own.kernel, a, b)};
  const Value *x = input(node, 0), *y = node.output(0);
  requireFloat(node, x), requireFloat(node, y);
  return {call("bf_unary_f32",
               {KernelArg::address(x), KernelArg::address(y), KernelArg::i32(y->type.numElements()),
                KernelArg::i32(op->code), KernelArg::f32(a), KernelArg::f32(b)})};
}

} // namespace

void registerUnaryMathLowering(OpRegistry &registry) {
  for (const UnaryMathOp &op : unaryMathOps())
    registry.at(op.opType).lower = lowerUnaryMath;
}

} // namespace bundlefit
