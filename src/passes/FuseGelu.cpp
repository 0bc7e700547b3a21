//===- FuseGelu.cpp - PyTorch's exported GELU chains back to one Gelu -------===//
//
// Exporters before opset 20 (and hand-written models) spell GELU as
//   x * 0.5 * (1 + Erf(x / sqrt 2))                      (torch F.gelu)
//   0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 x^3)))  (approximate="tanh")
// with the products in any order and association (Mul(Mul(x, g), 0.5),
// Mul(Mul(x, 0.5), g)...), x / sqrt 2 as Div or as Mul by 1/sqrt 2, and x^3
// as Pow(x, 3) or x * x * x. As 6-9 nodes it costs a buffer per step and,
// in int8, a Quantize/Dequantize pair around float Erf; as one Gelu it is one
// table (src/ops/lut/). Matching is algebraic: a product of single-reader Mul
// nodes is flattened into its factors, which must be exactly {x, 0.5, 1 + f}.
//
//===----------------------------------------------------------------------===//
#include "PassUtils.h"

#include "bundlefit/passes/Passes.h"

#include <cmath>
#include <map>
#include <vector>

namespace bundlefit {
namespace {

using ReadCounts = std::map<const Value *, size_t>;

/// The value of a scalar float32 constant (any shape of one element).
bool scalarConstant(const Value *value, double &out) {
  if (!pass_utils::isFloatConstant(value) || value->type.numElements() != 1)
    return false;
  out = value->elementAsDouble(0);
  return true;
}

/// Exporters write these constants rounded to float; 1e-5 relative covers
/// float32 rounding of any spelling (sqrt(2), 1.4142135, 0.70710677...).
bool near(double value, double expected) {
  return std::fabs(value - expected) <= 1e-5 * std::fabs(expected);
}

/// Whether `value` is an intermediate read only by `reader` (a node the
/// rewrite may swallow).
bool swallowable(const ReadCounts &reads, const Value *value, const Node *reader) {
  return pass_utils::hasSingleReader(reads, value, reader) && value->type.dtype == DType::Float32;
}

/// The node of `nodes` that reads `value` (nullptr if none).
const Node *readerOf(const std::vector<Node *> &nodes, const Value *value) {
  for (const Node *node : nodes)
    for (const Value *operand : node->inputs)
      if (operand == value)
        return node;
  return nullptr;
}

/// GELU's products have at most 4 Mul nodes (0.044715 * (1 * x * x) * x);
/// the cap keeps a long chain of Muls linear (each root expands at most
/// this many) and the recursion shallow.
constexpr size_t kMaxProductNodes = 4;

/// The factors of the product `node` computes: Mul operands, recursing into
/// Mul producers that only this product reads. `inner` collects the nodes
/// expanded (root first).
void flattenProduct(const ReadCounts &reads, Node *node, std::vector<Value *> &factors,
                    std::vector<Node *> &inner) {
  inner.push_back(node);
  for (Value *operand : node->inputs) {
    Node *producer = operand ? operand->producer : nullptr;
    if (producer && producer->is(Op::Mul) && producer->inputs.size() == 2 &&
        inner.size() < kMaxProductNodes && swallowable(reads, operand, node))
      flattenProduct(reads, producer, factors, inner);
    else
      factors.push_back(operand);
  }
}

/// Splits `factors` into scalar constants (multiplied together) and the
/// other values.
void splitFactors(const std::vector<Value *> &factors, double &constant,
                  std::vector<Value *> &values) {
  constant = 1.0;
  for (Value *factor : factors) {
    double c;
    if (scalarConstant(factor, c))
      constant *= c;
    else
      values.push_back(factor);
  }
}

/// Whether `value` (read only by `reader`) is k * x, computed as Mul(x, k)
/// or Div(x, 1/k).
bool isScaled(const ReadCounts &reads, const Value *value, const Node *reader, const Value *x,
              double k) {
  Node *node = value ? value->producer : nullptr;
  if (!node || !swallowable(reads, value, reader) || node->inputs.size() != 2)
    return false;
  double c;
  if (node->is(Op::Div))
    return node->input(0) == x && scalarConstant(node->input(1), c) && near(1.0 / c, k);
  if (node->is(Op::Mul))
    for (size_t side = 0; side < 2; ++side)
      if (node->input(side) == x && scalarConstant(node->input(1 - side), c) && near(c, k))
        return true;
  return false;
}

/// Whether `value` (read only by `reader`) is x^3: Pow(x, 3) or a product
/// x * x * x.
bool isCube(const ReadCounts &reads, Value *value, const Node *reader, const Value *x) {
  Node *node = value ? value->producer : nullptr;
  if (!node || !swallowable(reads, value, reader))
    return false;
  double c;
  if (node->is(Op::Pow))
    return node->input(0) == x && scalarConstant(node->input(1), c) && c == 3.0;
  if (!node->is(Op::Mul) || node->inputs.size() != 2)
    return false;
  std::vector<Value *> factors;
  std::vector<Node *> inner;
  flattenProduct(reads, node, factors, inner);
  return factors.size() == 3 && factors[0] == x && factors[1] == x && factors[2] == x;
}

/// Whether `value` (read only by `reader`) is sqrt(2/pi) * (x + 0.044715 x^3).
bool isTanhArgument(const ReadCounts &reads, Value *value, const Node *reader, const Value *x) {
  Node *mul = value ? value->producer : nullptr;
  if (!mul || !mul->is(Op::Mul) || mul->inputs.size() != 2 || !swallowable(reads, value, reader))
    return false;
  std::vector<Value *> factors, values;
  std::vector<Node *> inner;
  flattenProduct(reads, mul, factors, inner);
  double beta;
  splitFactors(factors, beta, values);
  if (values.size() != 1 || !near(beta, std::sqrt(2.0 / M_PI)))
    return false;
  Node *add = values[0]->producer;
  if (!add || !add->is(Op::Add) || add->inputs.size() != 2 ||
      !swallowable(reads, values[0], readerOf(inner, values[0])))
    return false;
  for (size_t side = 0; side < 2; ++side) {
    Value *term = add->input(1 - side);
    Node *scaled = term ? term->producer : nullptr;
    if (add->input(side) != x || !scaled || !scaled->is(Op::Mul) || scaled->inputs.size() != 2 ||
        !swallowable(reads, term, add))
      continue;
    // 0.044715 * cube, the cube as Pow or folded into the same product.
    std::vector<Value *> termFactors, termValues;
    std::vector<Node *> termInner;
    flattenProduct(reads, scaled, termFactors, termInner);
    double kappa;
    splitFactors(termFactors, kappa, termValues);
    if (!near(kappa, 0.044715))
      continue;
    if (termValues.size() == 3 && termValues[0] == x && termValues[1] == x && termValues[2] == x)
      return true;
    if (termValues.size() == 1 &&
        isCube(reads, termValues[0], readerOf(termInner, termValues[0]), x))
      return true;
  }
  return false;
}

/// "none" or "tanh" when `value` (read only by `reader`) is 1 + Erf(x / sqrt 2)
/// or 1 + Tanh(sqrt(2/pi) (x + 0.044715 x^3)); else "".
const char *gateKind(const ReadCounts &reads, Value *value, const Node *reader, const Value *x) {
  Node *add = value ? value->producer : nullptr;
  if (!add || !add->is(Op::Add) || add->inputs.size() != 2 || !swallowable(reads, value, reader))
    return "";
  for (size_t side = 0; side < 2; ++side) {
    double one;
    Value *f = add->input(1 - side);
    Node *fn = f ? f->producer : nullptr;
    if (!scalarConstant(add->input(side), one) || one != 1.0 || !fn || fn->inputs.size() != 1 ||
        !swallowable(reads, f, add))
      continue;
    if (fn->is(Op::Erf) && isScaled(reads, fn->input(0), fn, x, 1.0 / std::sqrt(2.0)))
      return "none";
    if (fn->is(Op::Tanh) && isTanhArgument(reads, fn->input(0), fn, x))
      return "tanh";
  }
  return "";
}

/// Rewrites the product rooted at `mul` into Gelu(x) when it is one.
bool tryFuseGelu(const ReadCounts &reads, Node &mul) {
  if (!mul.is(Op::Mul) || mul.inputs.size() != 2 || mul.outputs.size() != 1)
    return false;
  const Value *y = mul.output();
  if (!y || y->type.dtype != DType::Float32)
    return false;
  std::vector<Value *> factors, values;
  std::vector<Node *> inner;
  flattenProduct(reads, &mul, factors, inner);
  double half;
  splitFactors(factors, half, values);
  if (values.size() != 2 || !near(half, 0.5))
    return false;
  for (size_t side = 0; side < 2; ++side) {
    Value *x = values[side], *gate = values[1 - side];
    if (!x || !gate || x->type.dtype != DType::Float32 || !x->type.sameShapeAndType(y->type))
      continue;
    const char *kind = gateKind(reads, gate, readerOf(inner, gate), x);
    if (!*kind)
      continue;
    // Mul keeps its name and output; the chain it read becomes dead code
    // for eliminateDeadNodes.
    mul.setOp(Op::Gelu);
    mul.inputs = {x};
    mul.attrs = Attributes();
    mul.attrs.setString("approximate", kind);
    return true;
  }
  return false;
}

} // namespace

size_t fuseGelu(Graph &graph) {
  ReadCounts reads = pass_utils::countReads(graph);
  size_t fused = 0;
  // Outermost products first (reverse order): an inner Mul of a chain must
  // not match as a smaller chain before its root does.
  const std::vector<Node *> nodes = graph.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    Node *node = *it;
    if (!node->is(Op::Mul))
      continue;
    std::vector<Value *> before = node->inputs;
    if (!tryFuseGelu(reads, *node))
      continue;
    for (const Value *input : before)
      if (input)
        --reads[input];
    ++reads[node->input(0)];
    ++fused;
  }
  return fused;
}

} // namespace bundlefit
