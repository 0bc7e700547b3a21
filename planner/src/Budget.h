//===- Budget.h - How much work the planner may do, and the one clock ----*- C++ -*-===//
//
// The planner's decisions are made on counts, not seconds: the time limit
// becomes a number of work units (kWorkUnitsPerSecond per second), every loop
// that does work spends units for it, and a step is tried or skipped by
// what is left. So on a machine that is not overloaded the work runs out
// before the clock and the plan is the same whatever the load. The clock
// is the safety net for a machine that is: this file is the only place in
// the planner that reads it, once per kUnitsPerClockRead units spent.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_SRC_BUDGET_H
#define BUNDLEFIT_PLANNER_SRC_BUDGET_H

#include "bundlefit/planner/Exact.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace bundlefit::planner::detail {

// A unit is about a few nanoseconds of work: a range a greedy pass
// gathers, two candidates a search node looks at, a third of an item an
// ejection move reads. On the shared 2-core machine the benchmarks run on,
// 10^8 units take 0.3-0.5 s of CPU: the work ends at under half the limit
// in CPU time, so the plan is the one the work count gives unless the
// machine is loaded more than about twice over.

/// Why the work stopped before the planner had nothing left to try.
enum class Limit { None, Work, Time, Nodes };

/// Units to charge for sorting k things: about the comparisons.
inline uint64_t sortUnits(uint64_t k) {
  uint64_t levels = 1;
  while ((uint64_t(1) << levels) < k)
    ++levels;
  return k * levels;
}

class Budget {
public:
  /// `work`: units to allow, 0 for the ones `seconds` gives.
  explicit Budget(double seconds, uint64_t work = 0) {
    // NaN and negative limits are refused by the callers; clamp anyway so
    // that "practically forever" cannot overflow the clock.
    double limit = seconds >= 0 ? std::min(seconds, 1e7) : 0;
    deadline = std::chrono::steady_clock::now() +
               std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                   std::chrono::duration<double>(limit));
    units = work ? work : uint64_t(limit * double(kWorkUnitsPerSecond));
    if (units == 0)
      stopped = Limit::Work;
  }

  /// Spends `n` units; false once the work or the time is used up.
  bool spend(uint64_t n) {
    if (stopped != Limit::None)
      return false;
    if (n >= units) {
      units = 0;
      stopped = Limit::Work;
      return false;
    }
    units -= n;
    used += n;
    sinceClock += n;
    if (sinceClock >= kUnitsPerClockRead) {
      sinceClock = 0;
      if (std::chrono::steady_clock::now() >= deadline) {
        stopped = Limit::Time;
        return false;
      }
    }
    return true;
  }

  bool exhausted() const { return stopped != Limit::None; }
  Limit limit() const { return stopped; }
  uint64_t left() const { return units; }
  uint64_t spent() const { return used; }

  /// Gives a step at most `share` units: the rest waits until end(). A
  /// step that stops at its share has not exhausted the budget.
  uint64_t begin(uint64_t share) {
    uint64_t held = units - std::min(units, share);
    units -= held;
    return held;
  }
  void end(uint64_t held) {
    if (stopped == Limit::Work && held > 0)
      stopped = Limit::None;
    units += held;
  }

  /// The search's own cap (--node-limit) ran out.
  void stopForNodes() { stopped = Limit::Nodes; }

private:
  static constexpr uint64_t kUnitsPerClockRead = uint64_t(1) << 16;
  std::chrono::steady_clock::time_point deadline;
  uint64_t units = 0, used = 0, sinceClock = 0;
  Limit stopped = Limit::None;
};

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_BUDGET_H
