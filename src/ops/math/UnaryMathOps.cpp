//===- UnaryMathOps.cpp - The float math ops of UnaryMath.h ----------------===//
//
// One row per operator: its bf_unary_op code and the attributes that become
// the kernel's a and b. Adding a function here, a case in math.c
// (bf_unary) and one in the interpreter (UnaryMathKernels.cpp) is all an
// elementwise float op needs.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/UnaryMath.h"
#include "math/Math.h"

#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Error.h"

#include "bundlefit/kernels/abi.h" // enum bf_unary_op

namespace bundlefit {
namespace {

void inferUnaryMath(Node &node) {
  const Value *x = node.input(0);
  Value *y = node.output(0);
  if (!x || !y)
    throw Error(ExitCode::Unsupported, node.describe() + ": needs input 'X' and output 'Y'");
  // int8: a quantized node whose definition has a table (src/ops/lut/: Elu).
  const bool int8Table = x->type.dtype == DType::Int8 && !x->type.quant.empty() &&
                         int8RuleOf(node.opType) != Int8Rule::None;
  if (x->type.dtype != DType::Float32 && !int8Table)
    throw Error(ExitCode::Unsupported, node.describe() + ": input '" + x->name + "' is " +
                                           x->type.str() + "; only float32 is supported");
  if (node.opType == "Gelu") {
    const std::string approximate = node.attrs.getString("approximate", "none");
    if (approximate != "none" && approximate != "tanh")
      throw Error(ExitCode::Unsupported, node.describe() + ": attribute approximate='" +
                                             approximate + "'; ONNX defines 'none' and 'tanh'");
  }
  y->type.dtype = x->type.dtype;
  y->type.shape = x->type.shape;
}

uint64_t outputElements(const Node &node) {
  const Value *out = node.output(0);
  return out ? uint64_t(out->type.numElements()) : 0;
}

} // namespace

const std::vector<UnaryMathOp> &unaryMathOps() {
  static const std::vector<UnaryMathOp> ops = {
      {"Neg", BF_UNARY_NEG},
      {"Abs", BF_UNARY_ABS},
      {"Sign", BF_UNARY_SIGN},
      {"Reciprocal", BF_UNARY_RECIPROCAL},
      {"Log", BF_UNARY_LOG},
      {"Sin", BF_UNARY_SIN},
      {"Cos", BF_UNARY_COS},
      {"Tan", BF_UNARY_TAN},
      {"Asin", BF_UNARY_ASIN},
      {"Acos", BF_UNARY_ACOS},
      {"Atan", BF_UNARY_ATAN},
      {"Sinh", BF_UNARY_SINH},
      {"Cosh", BF_UNARY_COSH},
      {"Asinh", BF_UNARY_ASINH},
      {"Acosh", BF_UNARY_ACOSH},
      {"Atanh", BF_UNARY_ATANH},
      {"Erf", BF_UNARY_ERF},
      {"Round", BF_UNARY_ROUND},
      {"Ceil", BF_UNARY_CEIL},
      {"Floor", BF_UNARY_FLOOR},
      {"Elu", BF_UNARY_ELU, "alpha", 1.0f},
      {"Selu", BF_UNARY_SELU, "alpha", 1.67326319217681884765625f, "gamma",
       1.05070102214813232421875f},
      {"Celu", BF_UNARY_CELU, "alpha", 1.0f},
      {"Softplus", BF_UNARY_SOFTPLUS},
      {"Softsign", BF_UNARY_SOFTSIGN},
      {"Mish", BF_UNARY_MISH},
      {"ThresholdedRelu", BF_UNARY_THRESHOLDED_RELU, "alpha", 1.0f},
      {"Shrink", BF_UNARY_SHRINK, "lambd", 0.5f, "bias", 0.0f},
      // Not ONNX: x * Sigmoid(x), which an int8 build splits off the layer
      // it was fused into (quant/UnfuseActivations.cpp) to run as one table.
      {"Silu", BF_UNARY_SILU},
      // Opset 20; its string attribute approximate becomes a (unaryMathParams).
      {"Gelu", BF_UNARY_GELU},
  };
  return ops;
}

const UnaryMathOp *findUnaryMathOp(const std::string &opType) {
  for (const UnaryMathOp &op : unaryMathOps())
    if (opType == op.opType)
      return &op;
  return nullptr;
}

void unaryMathParams(const UnaryMathOp &op, const Node &node, float &a, float &b) {
  a = op.attrA ? node.attrs.getFloat(op.attrA, op.a) : 0.0f;
  b = op.attrB ? node.attrs.getFloat(op.attrB, op.b) : 0.0f;
  if (op.code == BF_UNARY_GELU)
    a = node.attrs.getString("approximate", "none") == "tanh" ? 1.0f : 0.0f;
}

void registerUnaryMathOps(OpRegistry &registry) {
  for (const UnaryMathOp &op : unaryMathOps())
    registry.add({op.opType, inferUnaryMath, outputElements})
        .with(kOpElementwise)
        .runs(math_interp::unaryMathKernel);
  registerUnaryMathLowering(registry);
}

} // namespace bundlefit
