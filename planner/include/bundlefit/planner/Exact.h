//===- Exact.h - Branch and bound placement (MiniMalloc-style) --*- C++ -*-===//
//
// A depth-first search over "canonical" placements: buffers are placed in
// non-decreasing offset order, each at the lowest address the already placed
// buffers allow. Pruning uses per-section floors plus the bytes still to be
// placed in each section, a dominance rule that forbids leaving a gap some
// unplaced buffer could fill, and temporal decomposition once no unplaced
// buffer crosses a section boundary. The ideas follow MiniMalloc (Moffitt,
// ASPLOS'23); the code is ours.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_EXACT_H
#define BUNDLEFIT_PLANNER_EXACT_H

#include "bundlefit/planner/Problem.h"

#include <cstddef>
#include <cstdint>

namespace bundlefit::planner {

struct ExactOptions {
  /// Wall-clock safety net. The result only depends on it when it runs out.
  double timeBudgetSeconds = 5.0;
  /// 0: minimise the arena. Otherwise: find any plan with arenaSize <= capacity.
  uint64_t capacity = 0;
  /// Search nodes over all attempts; the budget that keeps results
  /// reproducible (0 = unlimited). Roughly 50k-200k nodes per second on
  /// MiniMalloc's hard instances, so the default usually ends first.
  uint64_t nodeBudget = 1'000'000;
  /// Larger problems skip the search and return the best greedy plan.
  size_t maxBuffers = 4'096;
};

/// Never worse than planBestGreedy(problem): the greedy plan is the incumbent.
/// With a capacity, Plan::arenaSize <= capacity tells whether one was found.
/// provedOptimal is set when the arena meets the lower bound or the search
/// proved that nothing smaller exists.
Plan planExact(const Problem &problem, const ExactOptions &options = {});

} // namespace bundlefit::planner

#endif // BUNDLEFIT_PLANNER_EXACT_H
