//===- Schedule.cpp - Choose the execution order ----------------------------===//
//
// The graph is handed to the planner's ordering search as plain numbers: one
// tensor per activation buffer owner (views share their source's tensor),
// one op per node. Placeholders and constants are not in the arena, so they
// do not count.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/schedule/Schedule.h"

#include "bundlefit/planner/OpOrder.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <map>

namespace bundlefit {

namespace {

const Value *ownerOf(const Value *value) {
  while (value->producer && isViewNode(*value->producer))
    value = value->producer->inputs[0];
  return value;
}

bool isActivation(const Value *value) {
  return value->kind == ValueKind::Intermediate && !value->isGraphOutput;
}

/// The graph as the planner's OpGraph, with nodes in graph order.
planner::OpGraph toOpGraph(const std::vector<const Node *> &nodes) {
  planner::OpGraph opGraph;
  std::map<const Value *, int> tensorOf;
  auto tensorIndex = [&](const Value *value) -> int {
    const Value *owner = ownerOf(value);
    if (!isActivation(owner))
      return -1;
    auto [it, inserted] = tensorOf.emplace(owner, int(opGraph.tensorSizes.size()));
    if (inserted) {
      uint64_t a = MemoryPlan::kAlignment;
      opGraph.tensorSizes.push_back((owner->type.bytes() + a - 1) / a * a);
    }
    return it->second;
  };
  for (const Node *node : nodes) {
    planner::OpNode op;
    for (const Value *input : node->inputs)
      if (input && tensorIndex(input) >= 0)
        op.inputs.push_back(tensorIndex(input));
    for (const Value *output : node->outputs)
      if (ownerOf(output) == output && tensorIndex(output) >= 0)
        op.outputs.push_back(tensorIndex(output));
    opGraph.ops.push_back(op);
  }
  return opGraph;
}

std::vector<int> identityOrder(size_t count) {
  std::vector<int> order(count);
  for (size_t i = 0; i < count; ++i)
    order[i] = int(i);
  return order;
}

} // namespace

uint64_t peakLiveBytes(const Graph &graph, const std::vector<const Node *> &order) {
  (void)graph;
  return planner::computePeak(toOpGraph(order), identityOrder(order.size()));
}

std::vector<const Node *> chooseSchedule(const Graph &graph, bool reorderForMemory,
                                         std::string *method, uint64_t workBudget) {
  std::vector<const Node *> nodes;
  for (const Node *node : graph.nodes())
    nodes.push_back(node);
  if (method)
    *method = "model order";
  if (!reorderForMemory)
    return nodes;
  planner::OrderOptions orderOptions;
  orderOptions.maxWork = workBudget;
  planner::OrderResult result =
      planner::optimiseOrder(toOpGraph(nodes), identityOrder(nodes.size()), orderOptions);
  if (method)
    *method = result.method == "given"                         ? "model order"
              : result.method == "given: too large to reorder" ? "model order: too large to reorder"
                                                               : result.method;
  std::vector<const Node *> order;
  for (int index : result.order)
    order.push_back(nodes[index]);
  return order;
}

} // namespace bundlefit
