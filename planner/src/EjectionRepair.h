//===- EjectionRepair.h - Bring items under a target by evicting others -*- C++ -*-===//
//
// Window repair (WindowRepair.h) searches exactly inside a stretch of time,
// with the items crossing its edges standing where they are. On some 10^5
// network-like problems (seeds 1 and 43 of the generator) that is what
// fails: long-lived items, placed for one peak, fragment another one
// thousands of steps away, and no window that frees them can be searched in
// seconds. Moving single items does not care how long they live.
//
// So this is a min-conflicts local search over the whole section. The items
// ending above the target are taken out. Each one taken out (largest first)
// goes back at its lowest free fit under the target when there is one, else
// at the offset under the target where the items it overlaps weigh least;
// those are taken out in turn. An item's weight is its size, times its
// lifetime to a power (how much it costs to find it a new place), times one
// more than the times it was already evicted, so the search does not cycle
// among a few items. From the greedy plan of seed 43 (+5.19% over the
// bound) it reaches +0.50% in 2,641 moves. Best effort: it proves nothing.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_SRC_EJECTIONREPAIR_H
#define BUNDLEFIT_PLANNER_SRC_EJECTIONREPAIR_H

#include "ExactSearch.h"
#include "Items.h"

#include <chrono>
#include <cstdint>
#include <vector>

namespace bundlefit::planner::detail {

struct EjectionLimits {
  uint64_t maxMoves = 0; ///< Items put back; the search gives up after this many.
  std::chrono::steady_clock::time_point deadline;
  /// An item's weight is size x lifetime^lengthExponent x (1 + evictions):
  /// 1 keeps long-lived items where they are (cheap moves), 0 moves them
  /// as readily as short-lived ones (what a peak held by them needs).
  double lengthExponent = 1;
  /// Items (per item, non-zero) that must stay where they are.
  const std::vector<char> *held = nullptr;
};

/// Brings every item of `offsets` (a valid placement, per item) to end at
/// or below `target`. Found: offsets updated. Unsolved (maxMoves) or
/// OutOfBudget (deadline): offsets unchanged. The moves are deterministic,
/// so the same limits give the same placement on any machine.
Outcome repairByEjection(const Items &items, std::vector<uint64_t> &offsets, uint64_t target,
                         const EjectionLimits &limits, uint64_t *movesUsed = nullptr);

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_EJECTIONREPAIR_H
