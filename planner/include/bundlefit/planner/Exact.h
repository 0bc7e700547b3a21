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
  /// Wall-clock limit for the whole call, greedy passes included (only the
  /// first pass, which gives the plan to return, runs whatever the clock
  /// says; a pass in progress stops within about a thousand items). Wherever the search finishes
  /// inside it (a fit, a proof, the optimum), the result does not depend on
  /// it, so an idle and a loaded machine give the same plan.
  double timeBudgetSeconds = 5.0;
  /// 0: minimise the arena. Otherwise first find a plan with arenaSize <=
  /// capacity (Plan::provedInfeasible when the search proves there is none),
  /// then spend the time left going lower.
  uint64_t capacity = 0;
  /// With a capacity: stop as soon as the plan fits (MiniMalloc's question).
  bool stopAtCapacity = false;
  /// Search nodes over all attempts; 0 (the default) means no limit, so only
  /// timeBudgetSeconds stops the search. A limit makes an unfinished search
  /// reproducible too (about 10^5 nodes per second on hard instances).
  uint64_t nodeLimit = 0;
};

/// Never worse than planBestGreedy(problem): the greedy plan is the incumbent.
///
/// The items are split into sections where no buffer crosses (independent
/// problems; the arena is the largest section's), each solved on its own:
/// sections already under the target keep their greedy placement, the
/// others are searched, and a section the search cannot finish keeps its
/// best greedy placement. Any number of buffers.
Plan planExact(const Problem &problem, const ExactOptions &options = {});

/// How much a plan is worth, for reports: "proven optimal", "proven to fit"
/// (arena within the capacity), "proven not to fit" (the search showed that
/// nothing fits the capacity), or "best effort" (the time or node limit
/// ended the search first). capacity 0: no capacity was asked.
const char *proofOf(const Plan &plan, uint64_t capacity);

} // namespace bundlefit::planner

#endif // BUNDLEFIT_PLANNER_EXACT_H
