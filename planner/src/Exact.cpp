//===- Exact.cpp - Minimise (or meet) a capacity by search ----------------===//
//
// The best greedy plan is the incumbent, so the answer is never worse. To
// minimise, we first ask the search for the lower bound itself (usually the
// answer on real networks), then bisect between what is proven impossible
// and the smallest arena found so far.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/planner/Exact.h"
#include "bundlefit/planner/Greedy.h"
#include "bundlefit/planner/LowerBound.h"

#include "ExactSearch.h"

#include <algorithm>
#include <chrono>

namespace bundlefit::planner {

namespace {
using detail::Outcome;

class Minimiser {
public:
  Minimiser(const Problem &problem, const ExactOptions &options)
      : problem(problem), items(detail::buildItems(problem)) {
    budget.nodesLeft = options.nodeBudget ? options.nodeBudget : UINT64_MAX;
    // Clamped so that "practically forever" cannot overflow the clock.
    auto seconds = std::chrono::duration<double>(
        std::min(std::max(options.timeBudgetSeconds, 0.0), 1e7));
    budget.deadline = std::chrono::steady_clock::now() +
                      std::chrono::duration_cast<std::chrono::steady_clock::duration>(seconds);
  }

  /// Looks for a plan no larger than capacity; on Found, best is updated.
  Outcome attempt(uint64_t capacity, Plan &best) {
    std::vector<uint64_t> offsets;
    Outcome result = detail::searchCapacity(items, capacity, budget, offsets);
    if (result != Outcome::Found)
      return result;
    Plan plan = detail::makePlan(problem, items, offsets, "exact", best.lowerBound);
    if (plan.arenaSize < best.arenaSize)
      best = std::move(plan);
    return result;
  }

  const detail::SearchBudget &spent() const { return budget; }

private:
  const Problem &problem;
  detail::Items items;
  detail::SearchBudget budget;
};

void finish(Plan &plan, const detail::SearchBudget &budget) {
  plan.searchNodes = budget.nodesUsed;
  plan.budgetExhausted = budget.timedOut || budget.nodesLeft == 0;
}
} // namespace

Plan planExact(const Problem &problem, const ExactOptions &options) {
  return detail::improveByExactSearch(problem, options, planBestGreedy(problem));
}

Plan detail::improveByExactSearch(const Problem &problem,
                                  const ExactOptions &options, Plan best) {
  if (problem.buffers.size() > options.maxBuffers)
    return best;
  if (options.capacity != 0) {
    if (best.arenaSize <= options.capacity)
      return best;
    Minimiser m(problem, options);
    m.attempt(options.capacity, best);
    finish(best, m.spent());
    best.provedOptimal = best.arenaSize == best.lowerBound;
    return best;
  }
  if (best.arenaSize <= best.lowerBound)
    return best;

  Minimiser m(problem, options);
  // lo: everything below is proven impossible (when `proven`).
  uint64_t lo = best.lowerBound;
  bool proven = true;
  while (lo < best.arenaSize) {
    // The bound first: on most instances it is the answer.
    uint64_t target = lo == best.lowerBound ? lo : lo + (best.arenaSize - 1 - lo) / 2;
    Outcome result = m.attempt(target, best);
    if (result == Outcome::OutOfBudget) {
      proven = false;
      break;
    }
    if (result == Outcome::Infeasible)
      lo = target + 1;
  }
  finish(best, m.spent());
  best.provedOptimal = proven && lo >= best.arenaSize;
  return best;
}

} // namespace bundlefit::planner
