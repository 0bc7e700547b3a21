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

#include <set>
#include <string>

namespace bundlefit::planner {

struct PlanOptions {
  /// Search (and repair) when the greedy plans miss the lower bound.
  bool useExact = true;
  ExactOptions exact;
  /// Steps left out, for the ablation benchmark: "bottom-left",
  /// "greedy:<order>/<fit>" (as toString names them), "critical-first",
  /// "ejection", "search".
  std::set<std::string> skip;
};

/// The bottom-left placement, then greedy passes; if they miss the lower
/// bound, search and repair within the time limit: to fit
/// options.exact.capacity first when one is given, then as low as it can
/// go. Never worse than the greedy plans. Deterministic where the work
/// count, not the clock, ends it (Plan::stoppedBy). Debug builds assert
/// checkPlan on the result. Strategy.cpp lists the steps in order.
Plan planMemory(const Problem &problem, const PlanOptions &options = {});

} // namespace bundlefit::planner

#endif // BUNDLEFIT_PLANNER_PLANNER_H
