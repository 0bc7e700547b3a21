//===- UnaryMathInterp.cpp - Reference float math functions ----------------===//
//
// The rows of ops/UnaryMath.h, evaluated in double precision with <cmath>
// (written apart from the bundle kernel math.c, so each checks the other
// against the ONNX test data).
//
//===----------------------------------------------------------------------===//
#include "math/Math.h"

#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/UnaryMath.h"

#include "bundlefit/kernels/abi.h" // enum bf_unary_op

#include "bundlefit/support/Error.h"

#include <algorithm>
#include <cmath>

namespace bundlefit {
namespace math_interp {

double softplus(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }

double evaluate(double x, int32_t code, double a, double b) {
  switch (code) {
  case BF_UNARY_NEG:
    return -x;
  case BF_UNARY_ABS:
    return std::fabs(x);
  case BF_UNARY_SIGN:
    return x > 0 ? 1.0 : x < 0 ? -1.0 : x;
  case BF_UNARY_RECIPROCAL:
    return 1.0 / x;
  case BF_UNARY_LOG:
    return std::log(x);
  case BF_UNARY_SIN:
    return std::sin(x);
  case BF_UNARY_COS:
    return std::cos(x);
  case BF_UNARY_TAN:
    return std::tan(x);
  case BF_UNARY_ASIN:
    return std::asin(x);
  case BF_UNARY_ACOS:
    return std::acos(x);
  case BF_UNARY_ATAN:
    return std::atan(x);
  case BF_UNARY_SINH:
    return std::sinh(x);
  case BF_UNARY_COSH:
    return std::cosh(x);
  case BF_UNARY_ASINH:
    return std::asinh(x);
  case BF_UNARY_ACOSH:
    return std::acosh(x);
  case BF_UNARY_ATANH:
    return std::atanh(x);
  case BF_UNARY_ERF:
    return std::erf(x);
  case BF_UNARY_ROUND:
    return std::nearbyint(x); // half to even (default rounding mode)
  case BF_UNARY_CEIL:
    return std::ceil(x);
  case BF_UNARY_FLOOR:
    return std::floor(x);
  case BF_UNARY_ELU:
    return x >= 0 ? x : a * (std::exp(x) - 1);
  case BF_UNARY_SELU:
    return x > 0 ? b * x : b * (a * std::exp(x) - a);
  case BF_UNARY_CELU:
    return std::max(0.0, x) + std::min(0.0, a * (std::exp(x / a) - 1));
  case BF_UNARY_SOFTPLUS:
    return softplus(x);
  case BF_UNARY_SOFTSIGN:
    return x / (1 + std::fabs(x));
  case BF_UNARY_MISH:
    return x * std::tanh(softplus(x));
  case BF_UNARY_THRESHOLDED_RELU:
    return x > a ? x : 0.0;
  case BF_UNARY_SHRINK:
    return x < -a ? x + b : x > a ? x - b : 0.0;
  case BF_UNARY_SILU:
    return x / (1 + std::exp(-x));
  case BF_UNARY_GELU:
    if (a != 0)
      return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  }
  fatalInternal("unary math code " + std::to_string(code) + " has no reference");
}

void unaryMathKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                     std::vector<Tensor> &outputs) {
  const UnaryMathOp *op = findUnaryMathOp(node.opType);
  if (!op)
    fatalInternal(node.describe() + ": not a unary math op");
  float a, b;
  unaryMathParams(*op, node, a, b);
  const float *x = inputs[0]->data<float>();
  float *y = outputs[0].data<float>();
  for (int64_t i = 0; i < outputs[0].numElements(); ++i)
    y[i] = float(evaluate(double(x[i]), op->code, double(a), double(b)));
}

} // namespace math_interp

} // namespace bundlefit
