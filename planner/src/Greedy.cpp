//===- Greedy.cpp - One greedy pass, and the best of the family -----------===//
#include "bundlefit/planner/Greedy.h"
#include "bundlefit/planner/LowerBound.h"

#include "GreedyInternal.h"

#include <chrono>
#include <iterator>

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
using Clock = std::chrono::steady_clock;

// One pass; false (plan untouched) when `deadline` passed first.
bool runGreedy(const Problem &problem, const detail::Items &items, uint64_t lowerBound,
               GreedyOrder order, GreedyFit fit, const Clock::time_point *deadline, Plan &plan) {
  if (deadline && Clock::now() > *deadline)
    return false;
  std::vector<uint64_t> offsets;
  if (!detail::placeItems(items, detail::orderItems(items, order), fit, offsets,
                          detail::PlaceLimits{deadline}))
    return false;
  plan = detail::makePlan(problem, items, offsets,
                          "greedy:" + toString(order) + "/" + toString(fit), lowerBound);
  return true;
}
} // namespace

Plan planGreedy(const Problem &problem, GreedyOrder order, GreedyFit fit) {
  detail::Items items = detail::buildItems(problem);
  Plan plan;
  runGreedy(problem, items, computeLowerBound(problem), order, fit, nullptr, plan);
  return plan;
}

namespace {
using detail::GreedyStrategy;

// Most frequent winners first: Glow's orders reach the bound on most real
// networks, so the loop usually stops after one pass.
const GreedyStrategy kStrategies[] = {
    {GreedyOrder::MaxLiveBySize, GreedyFit::FirstFit},
    {GreedyOrder::BySize, GreedyFit::FirstFit},
    {GreedyOrder::MaxLiveByTime, GreedyFit::FirstFit},
    {GreedyOrder::ByLifetime, GreedyFit::BestFit},
    {GreedyOrder::ByFirstUse, GreedyFit::FirstFit},
    {GreedyOrder::ByArea, GreedyFit::FirstFit},
    {GreedyOrder::ByLifetime, GreedyFit::FirstFit},
    {GreedyOrder::MaxLiveBySize, GreedyFit::BestFit},
    {GreedyOrder::MaxLiveByTime, GreedyFit::BestFit},
    {GreedyOrder::BySize, GreedyFit::BestFit},
    {GreedyOrder::ByFirstUse, GreedyFit::BestFit},
    {GreedyOrder::ByArea, GreedyFit::BestFit},
};

// Past this many items only the first few strategies run, so the greedy
// path stays well under a second at 100k buffers.
constexpr size_t kLargeProblem = 20'000;
constexpr size_t kStrategiesWhenLarge = 2;
} // namespace

const std::vector<GreedyStrategy> &detail::greedyStrategies() {
  static const std::vector<GreedyStrategy> all(std::begin(kStrategies), std::end(kStrategies));
  return all;
}

Plan detail::bestGreedy(const Problem &problem, const Items &items,
                        const std::chrono::steady_clock::time_point *deadline) {
  uint64_t lowerBound = computeLowerBound(problem);
  size_t count = std::size(kStrategies);
  if (items.items.size() > kLargeProblem)
    count = kStrategiesWhenLarge;
  Plan best;
  Clock::duration lastPass{};
  for (size_t k = 0; k < count; ++k) {
    // The first pass runs whatever the clock says: it is the plan to return.
    // A later one that would end past the deadline at the last one's pace is
    // not started: its setup (order, index) alone would overrun the limit.
    Clock::time_point begin = Clock::now();
    Plan plan;
    if ((k > 0 && deadline && begin + lastPass > *deadline) ||
        !runGreedy(problem, items, lowerBound, kStrategies[k].order, kStrategies[k].fit,
                   k == 0 ? nullptr : deadline, plan)) {
      best.budgetExhausted = true;
      break;
    }
    lastPass = Clock::now() - begin;
    if (k == 0 || plan.arenaSize < best.arenaSize)
      best = std::move(plan);
    if (best.arenaSize <= lowerBound)
      break;
  }
  return best;
}

Plan planBestGreedy(const Problem &problem) {
  return detail::bestGreedy(problem, detail::buildItems(problem), nullptr);
}

} // namespace bundlefit::planner
