//===- Greedy.cpp - One greedy pass, and the best of the family -----------===//
#include "bundlefit/planner/Greedy.h"
#include "bundlefit/planner/LowerBound.h"
#include "bundlefit/planner/Planner.h"

#include "Placement.h"

#include <iterator>

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

std::string toString(GreedyFit) { return "first-fit"; }

namespace {
using detail::GreedyStrategy;

// TFLM's planner, so that a plan is never worse than it, and Glow's "max
// live" order: of the twelve orders and fits, the only ones the ablation
// benchmark (bench_planner --ablation) finds paying on some family
// (network-like problems of 10^5 buffers, heavy-tailed perfect packings),
// beside the bottom-left placement.
const GreedyStrategy kStrategies[] = {
    {GreedyOrder::BySize, GreedyFit::FirstFit},
    {GreedyOrder::MaxLiveBySize, GreedyFit::FirstFit},
};
} // namespace

const std::vector<GreedyStrategy> &detail::greedyStrategies() {
  static const std::vector<GreedyStrategy> all(std::begin(kStrategies), std::end(kStrategies));
  return all;
}

Plan planGreedy(const Problem &problem, GreedyOrder order, GreedyFit fit) {
  detail::Items items = detail::buildItems(problem);
  detail::Budget unlimited(1e7);
  std::vector<uint64_t> offsets;
  detail::placeItems(items, detail::orderItems(items, order), fit, offsets, unlimited);
  return detail::makePlan(problem, items, offsets,
                          "greedy:" + toString(order) + "/" + toString(fit),
                          computeLowerBound(problem));
}

Plan planBestGreedy(const Problem &problem) {
  PlanOptions options;
  options.useExact = false;
  options.exact.timeBudgetSeconds = 1e7;
  return planMemory(problem, options);
}

} // namespace bundlefit::planner
