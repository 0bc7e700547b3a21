//===- Greedy.cpp - One greedy pass, and the best of the family -----------===//
#include "bundlefit/planner/Greedy.h"
#include "bundlefit/planner/LowerBound.h"
#include "bundlefit/planner/Planner.h"

#include "Placement.h"

namespace bundlefit::planner {

std::string toString(GreedyOrder order) {
  switch (order) {
  case GreedyOrder::BySize:
    return "by-size";
  case GreedyOrder::MaxLiveBySize:
    return "max-live-by-size";
  case GreedyOrder::MaxLiveByTime:
    return "max-live-by-time";
  }
  return "unknown";
}

// TFLM's planner, so that a plan is never worse than it, and Glow's "max
// live" order: of the twelve orders and fits, the only ones the ablation
// benchmark (bench_planner --ablation) finds paying on some family
// (network-like problems of 10^5 buffers, heavy-tailed perfect packings),
// beside the bottom-left placement.
const std::vector<GreedyOrder> &detail::greedyOrders() {
  static const std::vector<GreedyOrder> all = {GreedyOrder::BySize, GreedyOrder::MaxLiveBySize};
  return all;
}

std::string detail::greedyName(GreedyOrder order) {
  return "greedy:" + toString(order) + "/first-fit";
}

Plan planGreedy(const Problem &problem, GreedyOrder order) {
  detail::Items items = detail::buildItems(problem);
  detail::Budget unlimited(1e7);
  std::vector<uint64_t> offsets;
  detail::greedyPass(items, order, offsets, unlimited);
  return detail::makePlan(problem, items, offsets, detail::greedyName(order),
                          computeLowerBound(problem));
}

Plan planBestGreedy(const Problem &problem) {
  PlanOptions options;
  options.useExact = false;
  options.exact.timeBudgetSeconds = 1e7;
  return planMemory(problem, options);
}

} // namespace bundlefit::planner
