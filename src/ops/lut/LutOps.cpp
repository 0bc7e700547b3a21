//===- LutOps.cpp - The activations that run in int8 as a table -----------===//
//
// One row per activation: the float function its table samples, written as
// onnxruntime's CPU kernels compute it (float arithmetic; exp, tanh, erf
// evaluated in double and rounded once), so that a table entry equals what
// onnxruntime's DequantizeLinear -> op -> QuantizeLinear gives for that input.
//
//===----------------------------------------------------------------------===//
#include "lut/Lut.h"

#include "bundlefit/ops/ActivationDefaults.h"
#include "bundlefit/ops/UnaryMath.h"

#include <algorithm>
#include <cmath>

namespace bundlefit {
namespace lut {
namespace {

float clamp01(float v) { return std::max(0.0f, std::min(1.0f, v)); }

float sigmoid(float x, const Node &) { return float(1.0 / (1.0 + std::exp(-double(x)))); }
float tanhOf(float x, const Node &) { return float(std::tanh(double(x))); }
float hardSigmoid(float x, const Node &node) {
  return clamp01(node.attrs.getFloat("alpha", kHardSigmoidAlpha) * x +
                 node.attrs.getFloat("beta", kHardSigmoidBeta));
}
// ONNX's function body: Mul(X, HardSigmoid<alpha = 1/6, beta = 0.5>(X)).
float hardSwish(float x, const Node &) { return x * clamp01(kHardSwishAlpha * x + kHardSwishBeta); }
float leakyRelu(float x, const Node &node) {
  return x >= 0 ? x : node.attrs.getFloat("alpha", kLeakyReluAlpha) * x;
}
float elu(float x, const Node &node) {
  float alpha, unused;
  unaryMathParams(*findUnaryMathOp("Elu"), node, alpha, unused);
  return x >= 0 ? x : alpha * (float(std::exp(double(x))) - 1.0f);
}

// bundlefit's Silu (UnaryMathOps.cpp): x * Sigmoid(x) in one table.
float silu(float x, const Node &) { return float(double(x) / (1.0 + std::exp(-double(x)))); }

// ONNX Gelu (opset 20): 0.5 x (1 + erf(x / sqrt 2)), or with approximate =
// "tanh" 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
float gelu(float x, const Node &node) {
  const double v = x;
  if (node.attrs.getString("approximate", "none") == "tanh")
    return float(0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))));
  return float(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
}

// Sub with a scalar constant (GRU's 1 - z): c - x or x - c, in float as
// onnxruntime's Sub.
float scalarSub(float x, const Node &node) {
  const Value *a = node.input(0);
  if (a && a->isConstant())
    return float(a->elementAsDouble(0)) - x;
  return x - float(node.input(1)->elementAsDouble(0));
}

struct Row {
  const char *opType;
  Function f;
};

constexpr Row kRows[] = {
    {"Sigmoid", sigmoid},     {"Tanh", tanhOf},         {"HardSigmoid", hardSigmoid},
    {"HardSwish", hardSwish}, {"LeakyRelu", leakyRelu}, {"Elu", elu},
    {"Silu", silu},           {"Gelu", gelu},           {"Sub", scalarSub},
};

} // namespace

Function functionOf(const Node &node) {
  for (const Row &row : kRows)
    if (node.opType == row.opType)
      return row.f;
  return nullptr;
}

std::vector<const char *> tableOps() {
  std::vector<const char *> names;
  for (const Row &row : kRows)
    names.push_back(row.opType);
  return names;
}

} // namespace lut
} // namespace bundlefit
