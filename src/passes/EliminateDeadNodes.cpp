//===- EliminateDeadNodes.cpp - Remove nodes whose results nobody needs ----===//
//
// Why: folding and fusion leave producers behind (a Shape whose result became
// a constant, a branch only a folded node read), and some exporters emit
// unused side computations. A dead node would still cost flash for its kernel
// and weights and time at every inference. Walking back to front with read
// counts removes whole dead chains in one sweep.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/passes/Passes.h"

#include "PassUtils.h"

namespace bundlefit {

size_t eliminateDeadNodes(Graph &graph) {
  std::map<const Value *, size_t> reads = pass_utils::countReads(graph);
  std::vector<Node *> nodes = graph.nodes();
  size_t removed = 0;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    Node *node = *it;
    bool live = false;
    for (const Value *output : node->outputs)
      if (output && (output->isGraphOutput || reads[output] > 0))
        live = true;
    if (live)
      continue;
    for (const Value *input : node->inputs)
      if (input)
        --reads[input];
    graph.eraseNode(node);
    ++removed;
  }
  graph.removeUnusedValues();
  return removed;
}

} // namespace bundlefit
