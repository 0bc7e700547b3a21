//===- Planner.h - The memory planner's front door --------------*- C++ -*-===//
//
// Include this one header to use the planner:
//   Problem p;  p.buffers = {{/*id*/0, /*size*/1024, /*align*/64, 0, 2}, ...};
//   Plan plan = planMemory(p);
//   // plan.offsets[i], plan.arenaSize, plan.lowerBound
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_PLANNER_H
#define BUNDLEFIT_PLANNER_PLANNER_H

#include "bundlefit/planner/Exact.h"
#include "bundlefit/planner/Greedy.h"
#include "bundlefit/planner/LowerBound.h"
#include "bundlefit/planner/PlanChecker.h"
#include "bundlefit/planner/Problem.h"

namespace bundlefit::planner {

struct PlanOptions {
  /// Run the exact search when the best greedy plan misses the lower bound.
  bool useExact = true;
  ExactOptions exact;
};

/// Best greedy plan; if it misses the lower bound, the exact search within
/// the time limit: to fit options.exact.capacity first when one is given,
/// then as low as it can go. Never worse than the best greedy plan; deterministic unless the
/// wall-clock safety net fires. Debug builds assert checkPlan on the result.
Plan planMemory(const Problem &problem, const PlanOptions &options = {});

} // namespace bundlefit::planner

#endif // BUNDLEFIT_PLANNER_PLANNER_H
