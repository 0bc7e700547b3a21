//===- Planner.cpp - Best greedy, then search if the bound is missed ------===//
#include "bundlefit/planner/Planner.h"

#include "ExactSearch.h"

#include <cassert>

namespace bundlefit::planner {

Plan planMemory(const Problem &problem, const PlanOptions &options) {
  assert(!checkProblem(problem) && "planMemory needs a well-formed problem");
  Plan plan = planBestGreedy(problem);
  if (options.useExact && plan.arenaSize > plan.lowerBound) {
    ExactOptions exact = options.exact;
    exact.capacity = 0; // planMemory always minimises.
    plan = detail::improveByExactSearch(problem, exact, std::move(plan));
  }
#ifndef NDEBUG
  std::optional<std::string> error = checkPlan(problem, plan);
  assert(!error && "planMemory produced an invalid plan");
#endif
  return plan;
}

} // namespace bundlefit::planner
