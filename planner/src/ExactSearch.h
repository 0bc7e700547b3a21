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

/// Unsolved: a heuristic part (a window, WindowRepair.h) gave up at its own
/// node limit; nothing is proved and the budget is not spent.
enum class Outcome { Found, Infeasible, OutOfBudget, Unsolved };

/// Shared by all attempts of one planExact call.
struct SearchBudget {
  uint64_t nodesLeft = 0; ///< Counts down; deterministic.
  std::chrono::steady_clock::time_point deadline;
  bool timedOut = false;
  uint64_t nodesUsed = 0;
};

/// fixed[i] for an item that must stay where it is (an obstacle).
inline constexpr uint64_t kNotFixed = ~uint64_t(0);

/// Tries each static preorder in turn under a growing node limit (MiniMalloc's
/// round robin), so one unlucky order cannot eat the whole budget. On Found,
/// itemOffsets holds a placement with every item end <= capacity.
///
/// With `fixed` (one entry per item, kNotFixed for the free ones) the other
/// items are obstacles at the offsets given, which must not overlap each
/// other: the search is exact for the free items around them. A settled
/// placement (no free item can move down) lists, by offset, every item on
/// the highest end of the earlier ones it meets, so obstacles just join the
/// canonical order at their own offsets.
Outcome searchCapacity(const Items &items, uint64_t capacity, SearchBudget &budget,
                       std::vector<uint64_t> &itemOffsets,
                       const std::vector<uint64_t> *fixed = nullptr);

/// The time limit as a point on the clock, from now. Taken once, when the
/// caller starts, so that the greedy family and the search share it.
std::chrono::steady_clock::time_point deadlineAfter(double seconds);

/// planExact's body with the incumbent given (so planMemory does not run the
/// greedy family twice). greedySeconds: how long the incumbent took, the
/// pace at which a greedy pass over a section is expected to run. The
/// search ends by `deadline` (options.timeBudgetSeconds is already in it).
Plan improveByExactSearch(const Problem &problem, const ExactOptions &options, Plan incumbent,
                          double greedySeconds, std::chrono::steady_clock::time_point deadline);

/// planBestGreedy, timed, with no pass after the first ending past deadline.
Plan timedBestGreedy(const Problem &problem, std::chrono::steady_clock::time_point deadline,
                     double &seconds);

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_EXACTSEARCH_H
