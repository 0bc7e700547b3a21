//===- EliminateIdentities.cpp - Drop Identity and inference Dropout -------===//
//
// Why: exporters leave Identity nodes (renamed outputs, folded branches) and
// Dropout, which is the identity at inference. Each would otherwise cost a
// copy kernel and a second buffer in the arena. Readers are rewired to the
// input. A graph output's name is part of the bundle's interface, so when the
// removed node computes a graph output, the *input's producer* is made to
// compute that output value instead (possible only when nobody else reads the
// input); otherwise the node stays as the copy that writes the output.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/passes/Passes.h"

#include "PassUtils.h"

namespace bundlefit {
namespace {

bool isIdentityLike(const pass_utils::Readers &readers, const Node &node) {
  if (node.is(Op::Identity))
    return node.inputs.size() == 1 && node.input(0) && node.outputs.size() == 1;
  if (!node.is(Op::Dropout) || !node.input(0) || !node.output(0))
    return false;
  // Dropout's optional mask output has no identity equivalent.
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (node.outputs[i] &&
        (node.outputs[i]->isGraphOutput || pass_utils::isRead(readers.counts(), node.outputs[i])))
      return false;
  return true;
}

/// Removes one identity-like node if possible; returns whether it did.
bool eliminate(pass_utils::Readers &readers, Node &node) {
  Value *input = node.input(0);
  Value *output = node.output(0);
  if (!output->isGraphOutput) {
    readers.replaceReads(output, input);
    return true;
  }
  if (!pass_utils::hasSingleReader(readers.counts(), input, &node))
    return false;
  Node *producer = input->producer;
  pass_utils::takeOverOutput(producer, pass_utils::outputIndex(*producer, input), output);
  return true;
}

} // namespace

size_t eliminateIdentities(Graph &graph) {
  size_t removed = 0;
  // Readers indexed once: asking the graph per node made the pass quadratic.
  pass_utils::Readers readers(graph);
  for (Node *node : graph.nodes()) {
    if (!isIdentityLike(readers, *node) || !eliminate(readers, *node))
      continue;
    readers.erase(*node);
    graph.eraseNode(node);
    ++removed;
  }
  graph.removeUnusedValues();
  return removed;
}

} // namespace bundlefit
