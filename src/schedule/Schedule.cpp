//===- Schedule.cpp - Choose the execution order ----------------------------===//
//
// The graph is handed to the planner's ordering search as plain numbers: one
// tensor per activation buffer owner (views share their source's tensor),
// one op per node. Placeholders and constants are not in the arena, so they
// do not count; but a graph output that a later node reads is a dependency
// all the same: it is a tensor of no bytes, so the order search never runs
// that reader before its producer.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/schedule/Schedule.h"

#include "bundlefit/planner/OpOrder.h"
#include "bundlefit/schedule/MemoryPlan.h"
#include "bundlefit/support/Error.h"

#include <map>
#include <set>

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

/// A graph output (a placeholder) that some node of `nodes` reads.
std::set<const Value *> readGraphOutputs(const std::vector<const Node *> &nodes) {
  std::set<const Value *> read;
  for (const Node *node : nodes)
    for (const Value *input : node->inputs) {
      const Value *owner = input ? ownerOf(input) : nullptr;
      if (owner && owner->kind == ValueKind::Intermediate && owner->isGraphOutput)
        read.insert(owner);
    }
  return read;
}

/// The graph as the planner's OpGraph, with nodes in graph order and each
/// activation's size rounded up to `alignment`.
planner::OpGraph toOpGraph(const std::vector<const Node *> &nodes, uint64_t alignment) {
  planner::OpGraph opGraph;
  std::map<const Value *, int> tensorOf;
  const std::set<const Value *> readOutputs = readGraphOutputs(nodes);
  auto tensorIndex = [&](const Value *value) -> int {
    const Value *owner = ownerOf(value);
    const bool dependencyOnly = readOutputs.count(owner) != 0;
    if (!isActivation(owner) && !dependencyOnly)
      return -1;
    auto [it, inserted] = tensorOf.emplace(owner, int(opGraph.tensorSizes.size()));
    if (inserted) {
      const uint64_t a = alignment;
      opGraph.tensorSizes.push_back(dependencyOnly ? 0 : (owner->type.bytes() + a - 1) / a * a);
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

uint64_t peakLiveBytes(const Graph &graph, const std::vector<const Node *> &order,
                       uint64_t alignment) {
  (void)graph;
  return planner::computePeak(toOpGraph(order, alignment), identityOrder(order.size()));
}

std::vector<const Node *> chooseSchedule(const Graph &graph, bool reorderForMemory,
                                         std::string *method, uint64_t workBudget,
                                         uint64_t alignment) {
  std::vector<const Node *> nodes;
  for (const Node *node : graph.nodes())
    nodes.push_back(node);
  if (method)
    *method = "model order";
  if (!reorderForMemory)
    return nodes;
  planner::OrderOptions orderOptions;
  orderOptions.maxWork = workBudget;
  planner::OrderResult result = planner::optimiseOrder(toOpGraph(nodes, alignment),
                                                       identityOrder(nodes.size()), orderOptions);
  if (method)
    *method = result.method == "given"                         ? "model order"
              : result.method == "given: too large to reorder" ? "model order: too large to reorder"
                                                               : result.method;
  std::vector<const Node *> order;
  std::set<const Node *> done;
  for (int index : result.order) {
    // Each node after the producers of the bytes it reads (a view's
    // source's): a reordering that breaks that would compute from bytes not
    // yet written. Views themselves run no code, so their order is free.
    for (const Value *input : nodes[index]->inputs) {
      const Value *owner = input ? ownerOf(input) : nullptr;
      if (owner && owner->producer && !done.count(owner->producer))
        fatalInternal("schedule runs " + nodes[index]->describe() + " before " +
                      owner->producer->describe() + ", the producer of its input '" + owner->name +
                      "'");
    }
    done.insert(nodes[index]);
    order.push_back(nodes[index]);
  }
  return order;
}

} // namespace bundlefit
