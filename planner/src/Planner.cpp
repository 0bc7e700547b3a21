//===- Planner.cpp - Best greedy, then search if the bound is missed ------===//
#include "bundlefit/planner/Planner.h"

#include "ExactSearch.h"

#include <cassert>

namespace bundlefit::planner {

Plan planMemory(const Problem &problem, const PlanOptions &options) {
  assert(!checkProblem(problem) && "planMemory needs a well-formed problem");
  // One limit for the whole call: greedy passes and search share it.
  std::chrono::steady_clock::time_point deadline =
      detail::deadlineAfter(options.exact.timeBudgetSeconds);
  double greedySeconds = 0;
  Plan plan = detail::timedBestGreedy(problem, deadline, greedySeconds);
  if (options.useExact && plan.arenaSize > plan.lowerBound)
    plan = detail::improveByExactSearch(problem, options.exact, std::move(plan), greedySeconds,
                                        deadline);
#ifndef NDEBUG
  std::optional<std::string> error = checkPlan(problem, plan);
  assert(!error && "planMemory produced an invalid plan");
#endif
  return plan;
}

} // namespace bundlefit::planner
