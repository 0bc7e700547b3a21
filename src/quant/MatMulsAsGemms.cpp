//===- MatMulsAsGemms.cpp - QDQ MatMul by a constant as the int8 Gemm -------===//
//
// A QDQ MatMul of a 2-D activation by a dequantized constant 2-D weight is
// the fully connected layer the int8 kernels have, written without a bias:
// Gemm(A, B) with transB = 0 computes the same product. QLinearMatMul gets
// there in ExpandQOperators.cpp; this gives the QDQ form the same int8
// kernel instead of float between a Dequantize and a Quantize. It runs after
// the default passes, when every operand's rank is known.
//
// A batched activation [..., M, K] by a 2-D weight (a Linear on [batch,
// tokens, features], attention's projections) is the same product on its
// rows: Reshape to [rows, K] -> Gemm -> Reshape to [..., M, N]. The Reshapes
// are views (no copy) and take the parameters of the values they view, so
// the Gemm's integers are those of onnxruntime's QLinearMatMul. A MatMul of
// two activations (attention's scores) is left alone: it has an int8 kernel
// of its own (ops/matmul/MatMulInt8.cpp).
//
// A profiled float graph's MatMuls by constants (an unrolled LSTM's
// per-step products, a Linear on [batch, tokens, features]) take the same
// way, their bias Add folded into the Gemm: int8 sums with an int32 bias at
// the accumulator's scale, not a float MatMul between Quantize and
// Dequantize. A batched one's row views take the ranges of the values they
// view (the `alias` callback: the profile knows only the model's names).
//
//===----------------------------------------------------------------------===//
#include "bundlefit/quant/FoldQdq.h"

#include <algorithm>
#include <cstring>
#include <map>

namespace bundlefit {
namespace {

Value *shapeConstant(Graph &graph, const std::string &base, const Shape &shape) {
  TensorType type;
  type.dtype = DType::Int64;
  type.shape = {int64_t(shape.size())};
  std::vector<uint8_t> bytes(shape.size() * sizeof(int64_t));
  std::memcpy(bytes.data(), shape.data(), bytes.size());
  return graph.addConstant(graph.uniqueValueName(base), type, std::move(bytes));
}

TensorType floatType(const Shape &shape) {
  TensorType type;
  type.dtype = DType::Float32;
  type.shape = shape;
  return type;
}

/// Makes the batched MatMul `node` (a: [..., M, K], b: [K, N], output y)
/// Reshape -> Gemm (the node, keeping its name) -> Reshape; `alias(view,
/// of)` gives each new [rows, .] value the parameters of the value it views.
void rowsAsGemm(Graph &graph, Node *node, Node *next,
                const std::function<void(const std::string &, const std::string &)> &alias) {
  Value *a = node->input(0), *y = node->output();
  const int64_t k = a->type.shape.back(), n = node->input(1)->type.shape.back();
  const int64_t rows = a->type.numElements() / k;
  Node *in = graph.insertNodeBefore(node, Op::Reshape, node->name + "_rows",
                                    {a, shapeConstant(graph, a->name + "_rows_shape", {rows, k})},
                                    {a->name + "_rows"});
  Value *aRows = in->output();
  aRows->type = floatType({rows, k});
  aRows->typeKnown = true;
  // The output Reshape reads the Gemm's [rows, N] and computes y, which keeps
  // its name and readers.
  Node *out =
      next ? graph.insertNodeBefore(next, Op::Reshape, node->name + "_unrows",
                                    {y, shapeConstant(graph, y->name + "_shape", y->type.shape)},
                                    {y->name + "_rows"})
           : graph.addNode(Op::Reshape, node->name + "_unrows",
                           {y, shapeConstant(graph, y->name + "_shape", y->type.shape)},
                           {y->name + "_rows"});
  Value *yRows = out->output();
  yRows->type = floatType({rows, n});
  yRows->typeKnown = true;
  node->outputs[0] = yRows;
  yRows->producer = node;
  out->outputs[0] = y;
  y->producer = out;
  out->inputs[0] = yRows;
  node->inputs[0] = aRows;
  alias(aRows->name, a->name);
  alias(yRows->name, y->name);
}

/// The node after `node` in execution order, or nullptr.
Node *nodeAfter(Graph &graph, const Node *node) {
  const std::vector<Node *> order = graph.nodes();
  auto at = std::find(order.begin(), order.end(), node);
  return at == order.end() || at + 1 == order.end() ? nullptr : *(at + 1);
}

} // namespace

size_t matMulsAsGemms(Graph &graph, PresetQuantParams &preset) {
  size_t count = 0;
  const std::vector<Node *> nodes = graph.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node *node = nodes[i];
    if (!node->is(Op::MatMul) || node->inputs.size() != 2 || node->outputs.size() != 1)
      continue;
    const Value *a = node->input(0), *b = node->input(1), *y = node->output();
    if (!a || !b || !y || !a->typeKnown || a->type.rank() < 2 || !b->isConstant() ||
        b->type.rank() != 2 || !preset.weights.count(b->name) || !preset.activations.count(a->name))
      continue;
    if (a->type.rank() > 2) {
      // Batched: only with the output's parameters (the Reshape back views
      // them) and a non-empty product.
      if (!y->typeKnown || !preset.activations.count(y->name) || a->type.shape.back() <= 0 ||
          a->type.numElements() <= 0)
        continue;
      rowsAsGemm(graph, node, i + 1 < nodes.size() ? nodes[i + 1] : nullptr,
                 [&](const std::string &view, const std::string &of) {
                   preset.activations[view] = preset.activations.at(of);
                 });
    }
    node->setOp(Op::Gemm); // alpha = beta = 1, transA = transB = 0: Gemm's defaults
    ++count;
  }
  return count;
}

namespace {

/// The constant per-column bias `add` adds to `product` [..., M, N], or
/// nullptr: [N], or [1, N] when the product is 2-D.
Value *columnBias(const Node &add, const Value *product) {
  if (!add.is(Op::Add) || add.inputs.size() != 2 || !add.output() || !add.output()->typeKnown ||
      add.output()->type.shape != product->type.shape)
    return nullptr;
  Value *bias = add.input(0) == product ? add.input(1) : add.input(0);
  if (!bias || bias == product || !bias->isConstant() || bias->type.dtype != DType::Float32)
    return nullptr;
  const Shape &s = bias->type.shape;
  const int64_t n = product->type.shape.back();
  return (s == Shape{n} || (product->type.rank() == 2 && s == Shape{1, n})) ? bias : nullptr;
}

} // namespace

size_t matMulsByConstantAsGemms(
    Graph &graph, const std::function<bool(const std::string &)> &hasRange,
    const std::function<void(const std::string &, const std::string &)> &alias) {
  std::map<const Value *, std::vector<Node *>> readers; // one walk, not users() per node
  for (Node *node : graph.nodes())
    for (const Value *input : node->inputs)
      if (input)
        readers[input].push_back(node);
  size_t count = 0;
  const std::vector<Node *> order = graph.nodes();
  for (Node *node : order) {
    if (!node->is(Op::MatMul) || node->inputs.size() != 2 || !node->output())
      continue;
    const Value *a = node->input(0), *b = node->input(1);
    Value *product = node->output();
    if (!a || !b || !a->typeKnown || a->type.rank() < 2 || a->isConstant() ||
        a->type.dtype != DType::Float32 || !b->isConstant() || b->type.dtype != DType::Float32 ||
        b->type.rank() != 2 || !product->typeKnown || product->type.rank() != a->type.rank() ||
        !hasRange(a->name) || a->type.shape.back() <= 0 || a->type.numElements() <= 0)
      continue;
    const std::vector<Node *> &users = readers[product];
    Value *bias =
        users.size() == 1 && !product->isGraphOutput ? columnBias(*users[0], product) : nullptr;
    Node *gemm = node;
    if (bias && hasRange(users[0]->output()->name)) {
      // The Add computes the Gemm (keeping its output's name, which the
      // profile knows, and its attributes); the MatMul goes.
      gemm = users[0];
      gemm->inputs = {node->inputs[0], node->inputs[1], bias};
      graph.eraseNode(node);
    }
    if (a->type.rank() > 2) {
      // The rows of a batched product, with its output's range.
      if (!hasRange(gemm->output()->name))
        continue;
      rowsAsGemm(graph, gemm, nodeAfter(graph, gemm), alias);
    }
    gemm->setOp(Op::Gemm); // alpha = beta = 1, transA = transB = 0: Gemm's defaults
    ++count;
  }
  return count;
}

} // namespace bundlefit
