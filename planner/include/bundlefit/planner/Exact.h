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

/// Work units per second of a time limit (Budget.h says what a unit is and
/// how the rate was measured).
inline constexpr uint64_t kWorkUnitsPerSecond = 440'000'000;

struct ExactOptions {
  /// The limit for the whole call, in seconds of CPU and of wall time. It
  /// becomes a number of work units (kWorkUnitsPerSecond per second: items
  /// visited by passes, searches and moves, calibrated to take about the
  /// limit in CPU time), so the plan does not depend on the machine where
  /// the work ends first; the clock (CPU or wall time, whichever passes a
  /// twentieth after the limit first) stops work that ran slower than that,
  /// which on a loaded machine is most work. A limit
  /// that does not cover the first placement (O(n log n)) stops it part way
  /// and the items it had not placed go on shelves above the rest (valid).
  double timeBudgetSeconds = 5.0;
  /// 0: minimise the arena. Otherwise first find a plan with arenaSize <=
  /// capacity (Plan::provedInfeasible when that is proved impossible: at
  /// once for a capacity under the lower bound), then go lower with what is
  /// left.
  uint64_t capacity = 0;
  /// With a capacity: stop as soon as the plan fits (MiniMalloc's question).
  bool stopAtCapacity = false;
  /// Search nodes over all attempts; 0 (the default) means no limit.
  uint64_t nodeLimit = 0;
  /// Work units instead of the ones the time limit gives (0: from it), for
  /// tests and benchmarks that want the work, never the clock, to decide:
  /// with a generous timeBudgetSeconds the plan is then the same on any
  /// machine.
  uint64_t workLimit = 0;
  /// The clock, not the count, ends the work (when workLimit is 0): what a
  /// work unit costs varies by family and size (1.6-2.6 ns of CPU measured
  /// where 2 is assumed), so counted work alone ends at 0.8-1.05x the
  /// limit. With this, work that runs out before the limit is given more,
  /// at the rate this run measured, until the clock (at the limit itself)
  /// ends it: the steps share
  /// the counted work as usual, the last one gets the rest of the time, and
  /// the plan depends on the time the work took (CPU or wall, whichever is
  /// longer: so on load too). For a run that must use its time, not repeat a
  /// plan.
  bool clockEnds = false;
};

/// planMemory with every step (Strategy.cpp). Never worse than the greedy
/// plans: the problem is split into sections where no buffer crosses, and
/// each section is searched or repaired only towards a lower arena.
Plan planExact(const Problem &problem, const ExactOptions &options = {});

/// How much a plan is worth, for reports: "proven optimal", "proven to fit"
/// (arena within the capacity), "proven not to fit" (the search showed that
/// nothing fits the capacity), or "best effort" (nothing proved either way). capacity 0: no
/// capacity was asked.
const char *proofOf(const Plan &plan, uint64_t capacity);

} // namespace bundlefit::planner

#endif // BUNDLEFIT_PLANNER_EXACT_H
