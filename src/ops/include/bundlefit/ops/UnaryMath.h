//===- UnaryMath.h - Float math ops sharing one kernel per engine ----------===//
//
// Elementwise float32 functions y = f(x; a, b) (Neg, Log, Sin, Erf, Selu,
// Softplus, Mish...) are one table row each: the row registers the op
// (same-shape type inference, kOpElementwise), the reference interpreter
// evaluates `code` in double precision, and code generation calls the one
// bundle kernel bf_unary_f32 with `code` as a constant argument (LLVM folds
// its switch). Attributes `attrA`/`attrB` (with defaults) become a and b.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

struct UnaryMathOp {
  const char *opType;
  int32_t code; ///< enum bf_unary_op (src/kernels/bundlefit_kernels.h)
  const char *attrA = nullptr;
  float a = 0;
  const char *attrB = nullptr;
  float b = 0;
};

/// Every table row, in registration order.
const std::vector<UnaryMathOp> &unaryMathOps();
/// The row of `opType`, or nullptr.
const UnaryMathOp *findUnaryMathOp(const std::string &opType);
/// The parameters a, b of `node` (its attributes, else the row's defaults).
void unaryMathParams(const UnaryMathOp &op, const Node &node, float &a, float &b);

} // namespace bundlefit
