//===- Budget.h - How much work the planner may do, and the one clock ----*- C++ -*-===//
//
// The planner's decisions are made on counts, not seconds: the time limit
// becomes a number of work units (kWorkUnitsPerSecond per second), every loop
// that does work spends units for it, and a step is tried or skipped by
// what is left. So on a machine that is not overloaded the work runs out
// before the clock and the plan is the same whatever the load. The clock
// is the safety net for a machine that is: this file is the only place in
// the planner that reads it, once per kUnitsPerClockRead units spent. It
// reads both CPU and wall time and stops at whichever passes the deadline
// first: the limit holds in both (issue 37), so load, which stretches wall
// time, ends the work sooner rather than letting the run overrun.
// Unless the caller wants the time used (ExactOptions::clockEnds): then
// the clock ends the work, and counted work that runs out first is given
// more at the rate the run measured.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_SRC_BUDGET_H
#define BUNDLEFIT_PLANNER_SRC_BUDGET_H

#include "bundlefit/planner/Exact.h"

#include <algorithm>
#include <cstdint>
#include <ctime>

namespace bundlefit::planner::detail {

// A unit is about 2.3 ns of CPU (kWorkUnitsPerSecond): two candidates a
// search node looks at, two sections a placement walks, one change it logs
// and undoes, a third of an item an ejection move reads; a range a greedy
// pass gathers is kGatherUnits.
// Calibrated on the shared 2-core machine the benchmarks run on (10^3 to
// 10^6 buffers, every family), so that the work a limit gives takes about
// that limit in CPU time: the median of the units per CPU second measured
// on perfect packings and network-like problems of 10^4-10^6 buffers
// (345-505 million; the same run varies by a fifth from one minute to the
// next on that machine). On a loaded machine the wall clock ends the work
// first, so the plan there is what the time allowed, not the quiet one.

/// Units per range a greedy pass gathers and sorts (about 4 ns).
inline constexpr uint64_t kGatherUnits = 2;

/// Why the work stopped before the planner had nothing left to try.
enum class Limit { None, Work, Time, Nodes };

/// Units to charge for sorting k things: about the comparisons.
inline uint64_t sortUnits(uint64_t k) {
  uint64_t levels = 1;
  while ((uint64_t(1) << levels) < k)
    ++levels;
  return k * levels;
}

/// The two clocks the limit holds on, in seconds from a fixed point each.
struct Clocks {
  double cpu = 0;  ///< The process's CPU time: work that ran slower than calibrated.
  double wall = 0; ///< Monotonic wall time: what the user waits for, stretched by load.
};

inline double secondsOn(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

inline Clocks readClocks() {
  return {secondsOn(CLOCK_PROCESS_CPUTIME_ID), secondsOn(CLOCK_MONOTONIC)};
}

/// Seconds from `start` to `now` on whichever clock has gone further.
inline double elapsed(const Clocks &start, const Clocks &now) {
  return std::max(now.cpu - start.cpu, now.wall - start.wall);
}

class Budget {
public:
  /// `work`: units to allow, 0 for the ones `seconds` gives. `read`:
  /// readClocks but in tests, which give the clocks they need.
  explicit Budget(double seconds, uint64_t work = 0, bool clockEnds = false,
                  Clocks (*read)() = readClocks)
      : clocks(read) {
    // NaN and negative limits are refused by the callers; clamp anyway so
    // that "practically forever" cannot overflow the clock.
    double limit = seconds >= 0 ? std::min(seconds, 1e7) : 0;
    // The work is calibrated to end at about the limit; the clock, a
    // twentieth later, only where it ran slower than that (ejection on
    // long-lived items at 10^5 takes up to 1.06x): what the caller does
    // after (the plan's check, its output) then still ends within 1.1x.
    // With clockEnds (ExactOptions) work that runs out before the deadline
    // is given more (refill()): the work of the slower families, which the
    // clock ends, stays what it was, and the faster ones use their time.
    // The clock ends that work, so no slack: with it plan-buffers ran to
    // 1.05x of --time-limit at 10^5 buffers (0.5, 1 and 5 s; 1.08x at 0.5 s
    // with the check), leaving little of the 10% the limit allows for noise.
    refills = clockEnds && work == 0;
    start = clocks();
    deadline = limit * (refills ? 1.0 : kClockSlack);
    units = work ? work : uint64_t(limit * double(kWorkUnitsPerSecond));
    if (units == 0)
      stopped = Limit::Work;
  }

  /// Past about 10^5 items the same work costs more (cache misses: at 10^6
  /// a greedy pass takes 1.9x the CPU per unit it takes at 10^5, ejection
  /// 1.7x): every unit counts 1 + items / kItemsPerExtraUnit.
  void scaleForItems(uint64_t items) {
    sixteenths = 16 + std::min<uint64_t>(items, UINT64_MAX / 32) * 16 / kItemsPerExtraUnit;
  }

  /// Spends `n` units; false once the work or the time is used up.
  bool spend(uint64_t n) {
    if (stopped != Limit::None)
      return false;
    n = scaled(n);
    if (n >= units && !refill(n)) {
      units = 0;
      stopped = Limit::Work;
      return false;
    }
    units -= n;
    used += n;
    sinceClock += n;
    if (sinceClock >= kUnitsPerClockRead) {
      sinceClock = 0;
      if (seconds() >= deadline) {
        stopped = Limit::Time;
        return false;
      }
    }
    return true;
  }

  /// Reads the clock now, not at the next kUnitsPerClockRead units: for a
  /// step whose setup alone (a sort of every item) may pass the deadline.
  /// `margin`: seconds the caller needs after it stops.
  bool timeLeft(double margin = 0) {
    if (stopped == Limit::None && seconds() + margin >= deadline)
      stopped = Limit::Time;
    return stopped == Limit::None;
  }

  /// Whether a step costing `n` units (as spend() would count them) can
  /// finish within 1/share of what is left. Where the clock ends the work
  /// (clockEnds) what is left is the time, at the rate this run has spent
  /// units so far (the units granted up front assume a nominal rate: at
  /// 10^6 items on a busy machine they promised twice the time there was),
  /// and no more than a step's share of units while one is held.
  bool covers(uint64_t n, uint64_t share = 1) {
    uint64_t left = units;
    if (refills && used != 0) {
      uint64_t byTime = unitsForTimeLeft();
      left = heldTotal != 0 ? std::min(units, byTime) : byTime;
    }
    return scaled(n) <= left / share;
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
    heldTotal += held;
    return held;
  }
  void end(uint64_t held) {
    if (stopped == Limit::Work && held > 0)
      stopped = Limit::None;
    units += held;
    heldTotal -= held;
  }

  /// The search's own cap (--node-limit) ran out.
  void stopForNodes() { stopped = Limit::Nodes; }

private:
  // ExactOptions::clockEnds: the whole work (no step's share: those end
  // where the caller gave them) ran out with time left, so what a unit
  // cost this run is measured (seconds so far per unit spent, on the clock
  // that has gone further: under load the wall clock, so that the units
  // given end by the wall deadline too) and the time left becomes units at
  // that rate. False when no time is left.
  bool refill(uint64_t n) {
    if (!refills || heldTotal != 0)
      return false;
    uint64_t more = unitsForTimeLeft(kLeastRefillSeconds);
    if (more == 0)
      return false;
    units += more;
    return n < units;
  }

  /// The time left before the deadline as units, at the rate this run has
  /// spent them so far; 0 with under `least` seconds left (or none spent).
  uint64_t unitsForTimeLeft(double least = 0) const {
    double now = seconds();
    if (deadline - now <= least || used == 0 || now <= 0)
      return 0;
    return uint64_t(std::min(double(used) / now * (deadline - now), 1e18));
  }

  /// `n` units as spend() counts them: past 10^5 items each is more.
  uint64_t scaled(uint64_t n) const {
    return n > UINT64_MAX / sixteenths ? UINT64_MAX : n * sixteenths / 16;
  }

  /// Seconds since the budget began, on the clock that has gone further.
  double seconds() const { return elapsed(start, clocks()); }

  static constexpr double kLeastRefillSeconds = 0.001;
  bool refills = false;
  Clocks (*clocks)();
  Clocks start;
  uint64_t heldTotal = 0;
  static constexpr uint64_t kUnitsPerClockRead = uint64_t(1) << 18;
  static constexpr uint64_t kItemsPerExtraUnit = 1'250'000;
  uint64_t sixteenths = 16;
  static constexpr double kClockSlack = 1.05;
  double deadline; ///< Seconds after start.
  uint64_t units = 0, used = 0, sinceClock = 0;
  Limit stopped = Limit::None;
};

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_BUDGET_H
