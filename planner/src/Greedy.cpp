//===- Greedy.cpp - One greedy pass, and the best of the family -----------===//
#include "bundlefit/planner/Greedy.h"
#include "bundlefit/planner/LowerBound.h"

#include "GreedyInternal.h"

namespace bundlefit::planner {

std::string toString(GreedyOrder order) {
  switch (order) {
  case GreedyOrder::BySize:
    return "by-size";
  case GreedyOrder::ByArea:
    return "by-area";
  case GreedyOrder::ByLifetime:
    return "by-lifetime";
  case GreedyOrder::ByFirstUse:
    return "by-first-use";
  case GreedyOrder::MaxLiveBySize:
    return "max-live-by-size";
  case GreedyOrder::MaxLiveByTime:
    return "max-live-by-time";
  }
  return "unknown";
}

std::string toString(GreedyFit fit) {
  return fit == GreedyFit::FirstFit ? "first-fit" : "best-fit";
}

namespace {
Plan runGreedy(const Problem &problem, const detail::Items &items,
               uint64_t lowerBound, GreedyOrder order, GreedyFit fit) {
  std::vector<int> sequence = detail::orderItems(items, order);
  std::vector<uint64_t> offsets = detail::placeItems(items, sequence, fit);
  return detail::makePlan(problem, items, offsets,
                          "greedy:" + toString(order) + "/" + toString(fit),
                          lowerBound);
}
} // namespace

Plan planGreedy(const Problem &problem, GreedyOrder order, GreedyFit fit) {
  detail::Items items = detail::buildItems(problem);
  return runGreedy(problem, items, computeLowerBound(problem), order, fit);
}

Plan planBestGreedy(const Problem &problem) {
  // Most likely winners first: Glow's orders reach the bound on most
  // real networks, so the loop usually stops after one pass.
  static const GreedyOrder orders[] = {
      GreedyOrder::MaxLiveBySize, GreedyOrder::MaxLiveByTime,
      GreedyOrder::BySize,        GreedyOrder::ByArea,
      GreedyOrder::ByLifetime,    GreedyOrder::ByFirstUse};
  static const GreedyFit fits[] = {GreedyFit::FirstFit, GreedyFit::BestFit};

  detail::Items items = detail::buildItems(problem);
  uint64_t lowerBound = computeLowerBound(problem);
  Plan best;
  bool haveBest = false;
  for (GreedyFit fit : fits) {
    for (GreedyOrder order : orders) {
      Plan plan = runGreedy(problem, items, lowerBound, order, fit);
      if (!haveBest || plan.arenaSize < best.arenaSize) {
        best = std::move(plan);
        haveBest = true;
      }
      if (best.arenaSize <= lowerBound)
        return best;
    }
  }
  return best;
}

} // namespace bundlefit::planner
