//===- FoldConstants.cpp - Type inference and constant folding, one sweep --===//
//
// Why: exporters (PyTorch above all) compute shapes at run time --
// Shape -> Gather -> Unsqueeze -> Concat -> Reshape, ConstantOfShape, Range,
// Cast of constants. Bundlefit compiles static shapes, so all of that is known
// at compile time. Type inference and folding must be interleaved in a single
// forward sweep: a Reshape's output type can only be inferred once the chain
// computing its shape operand has been folded into a constant.
//
// Folding uses the reference interpreter (evaluateNode), so a folded value is
// by construction what the interpreter would have computed at run time.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/passes/Passes.h"

#include "PassUtils.h"
#include "ResizeAxes.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/MemoryBudget.h"

#include <algorithm>
#include <cstring>

namespace bundlefit {
namespace {

/// `Shape` only depends on the static type of its input: int64[end-start].
Tensor evaluateShape(const Node &node) {
  const Shape &dims = node.input(0)->type.shape;
  int64_t rank = int64_t(dims.size());
  auto clampAxis = [&](int64_t axis) {
    if (axis < 0)
      axis += rank;
    return std::clamp<int64_t>(axis, 0, rank);
  };
  int64_t start = clampAxis(node.attrs.getInt("start", 0));
  int64_t end = clampAxis(node.attrs.getInt("end", rank));
  std::vector<int64_t> values;
  for (int64_t i = start; i < end; ++i)
    values.push_back(dims[size_t(i)]);
  return Tensor::fromInts({int64_t(values.size())}, values);
}

bool isFoldable(const Node &node) {
  if (node.outputs.empty())
    return false;
  for (const Value *output : node.outputs)
    if (!output)
      return false;
  if (hasOpTrait(node.opType, kOpReadsShapeOnly)) // Shape, Size, EyeLike
    return node.input(0) != nullptr;
  // Already the form a folded graph output takes (keepGraphOutputComputed).
  if (node.is(Op::Identity) && node.outputs[0]->isGraphOutput)
    return false;
  return std::all_of(node.inputs.begin(), node.inputs.end(),
                     [](const Value *v) { return !v || v->isConstant(); });
}

std::vector<Tensor> evaluateConstantNode(const Node &node) {
  if (node.is(Op::Shape))
    return {evaluateShape(node)};
  // A shape-only op reads no values: zeros of the input's type stand in.
  const bool shapeOnly = hasOpTrait(node.opType, kOpReadsShapeOnly);
  std::vector<Tensor> storage;
  storage.reserve(node.inputs.size());
  std::vector<const Tensor *> args;
  for (const Value *input : node.inputs) {
    if (!input) {
      args.push_back(nullptr);
      continue;
    }
    if (shapeOnly)
      storage.emplace_back(input->type);
    else
      storage.emplace_back(input->type, input->data);
    args.push_back(&storage.back());
  }
  return evaluateNode(node, args);
}

/// A folded graph output must still be written by the bundle: a new constant
/// `<name>_const` takes over the value's readers and an Identity, inserted
/// where `node` was, computes the graph output from it.
void keepGraphOutputComputed(Graph &graph, Node &node, Value *output, Tensor result) {
  Value *constant = graph.addConstant(graph.uniqueValueName(output->name + "_const"), result.type,
                                      std::move(result.bytes));
  pass_utils::replaceReads(graph, output, constant);
  Node *identity = graph.insertNodeBefore(&node, Op::Identity, node.name + "_folded_output",
                                          {constant}, {output->name + "_tmp"});
  pass_utils::takeOverOutput(identity, 0, output);
  output->type = constant->type;
  output->typeKnown = true;
}

} // namespace

size_t foldConstantsAndInferTypes(Graph &graph) {
  return foldConstantsAndInferTypes(graph, [](const Node &) { return false; });
}

size_t foldConstantsAndInferTypes(Graph &graph, const std::function<bool(const Node &)> &keep) {
  size_t folded = 0;
  // The graph's constants, the folded ones included, must stay within the
  // memory budget: ConstantOfShape [2^28] + Add was folded at over 4 GB.
  uint64_t constantBytes = 0;
  for (const Value *constant : graph.constants())
    constantBytes += constant->data.size();
  for (Node *node : graph.nodes()) {
    if (node->is(Op::Resize) && node->attrs.has("axes"))
      expandResizeAxes(graph, *node);
    inferNodeTypes(*node);
    if (!isFoldable(*node) || keep(*node))
      continue;
    uint64_t inputBytes = 0; // evaluateConstantNode copies them
    for (const Value *input : node->inputs)
      inputBytes += input ? input->type.bytes() : 0;
    checkMemoryBudget(constantBytes + inputBytes + outputBytes(*node),
                      node->describe() + ": folding it into a constant (with the model's other "
                                         "constants)");
    constantBytes += outputBytes(*node);
    std::vector<Tensor> results = evaluateConstantNode(*node);
    // Plain values first: makeConstant walks the producer's outputs, which
    // keepGraphOutputComputed detaches.
    std::vector<Value *> outputs = node->outputs;
    for (size_t i = 0; i < outputs.size(); ++i)
      if (!outputs[i]->isGraphOutput)
        graph.makeConstant(outputs[i], results[i].type, std::move(results[i].bytes));
    for (size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i]->isGraphOutput)
        keepGraphOutputComputed(graph, *node, outputs[i], std::move(results[i]));
    graph.eraseNode(node);
    ++folded;
  }
  graph.removeUnusedValues();
  return folded;
}

} // namespace bundlefit
