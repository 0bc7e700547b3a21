//===- Schedule.h - The order in which a bundle runs its nodes -------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

/// Execution order for code generation. With `reorderForMemory`, a
/// topological order that lowers the peak of live activation bytes (the
/// planner's ordering search), never worse than the graph's own order.
/// `method` (when given) receives how the order was found: "model order",
/// or the search's planner::OrderResult::method.
/// `workBudget` bounds the search's work (planner::OrderOptions::maxWork);
/// `alignment` is the activation buffers' (PlanOptions::bufferAlignment).
std::vector<const Node *> chooseSchedule(const Graph &graph, bool reorderForMemory,
                                         std::string *method = nullptr,
                                         uint64_t workBudget = 30'000'000,
                                         uint64_t alignment = MemoryPlan::kAlignment);

/// Peak live activation bytes (each buffer rounded up to `alignment`) of
/// running `graph` in `order`: the layer-by-layer figure the allocator's
/// lower bound is computed from.
uint64_t peakLiveBytes(const Graph &graph, const std::vector<const Node *> &order,
                       uint64_t alignment = MemoryPlan::kAlignment);

} // namespace bundlefit
