//===- ExactSearch.h - Does everything fit under a capacity? ----*- C++ -*-===//
//
// The decision half of the exact planner: given a capacity, search canonical
// placements depth-first until one fits, the space is exhausted (a proof
// that nothing fits) or the budget runs out.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_SRC_EXACTSEARCH_H
#define BUNDLEFIT_PLANNER_SRC_EXACTSEARCH_H

#include "Items.h"
#include "bundlefit/planner/Exact.h"

#include <chrono>
#include <cstdint>
#include <vector>

namespace bundlefit::planner::detail {

enum class Outcome { Found, Infeasible, OutOfBudget };

/// Shared by all attempts of one planExact call.
struct SearchBudget {
  uint64_t nodesLeft = 0; ///< Counts down; deterministic.
  std::chrono::steady_clock::time_point deadline;
  bool timedOut = false;
  uint64_t nodesUsed = 0;
};

/// Tries each static preorder in turn under a growing node limit (MiniMalloc's
/// round robin), so one unlucky order cannot eat the whole budget. On Found,
/// itemOffsets holds a placement with every item end <= capacity.
Outcome searchCapacity(const Items &items, uint64_t capacity,
                       SearchBudget &budget, std::vector<uint64_t> &itemOffsets);

/// planExact's body with the incumbent given (so planMemory does not run the
/// greedy family twice). greedySeconds: how long the incumbent took, the
/// pace at which a greedy pass over a section is expected to run.
Plan improveByExactSearch(const Problem &problem, const ExactOptions &options,
                          Plan incumbent, double greedySeconds);

/// planBestGreedy, timed.
Plan timedBestGreedy(const Problem &problem, double &seconds);

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_EXACTSEARCH_H
