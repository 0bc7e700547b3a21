//===- EjectionRepair.h - Bring items under a target by evicting others -*- C++ -*-===//
//
// A min-conflicts local search over a whole section: it moves single items,
// whatever their lifetimes, so a long-lived item placed for one peak can
// leave room for another peak thousands of steps away (what no search over
// a stretch of time can do in seconds on 10^5 items).
//
// The items ending above the target are taken out. Each one taken out (largest first)
// goes back at its lowest free fit under the target when there is one, else
// at the offset under the target where the items it overlaps weigh least;
// those are taken out in turn. An item's weight is its size, times its
// lifetime or not (how much it costs to find it a new place), times one
// more than the times it was already evicted, so the search does not cycle
// among a few items. Best effort: it proves nothing.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_SRC_EJECTIONREPAIR_H
#define BUNDLEFIT_PLANNER_SRC_EJECTIONREPAIR_H

#include "Items.h"
#include "ItemsByTime.h"
#include "Search.h"

#include <cstdint>
#include <vector>

namespace bundlefit::planner::detail {

struct EjectionLimits {
  uint64_t maxMoves = 0; ///< Items put back; the search gives up after this many.
  /// An item's weight is size x (1 + evictions), times its lifetime when
  /// true: that keeps long-lived items where they are (cheap moves); false
  /// moves them as readily as short-lived ones (what a peak held by them
  /// needs).
  bool weighLifetime = true;
  /// Items (per item, non-zero) that must stay where they are.
  const std::vector<char> *held = nullptr;
  /// The items' time index, when the caller keeps one (else built here, at
  /// the cost of a sort).
  const ItemsByTime *index = nullptr;
};

/// Brings every item of `offsets` (a valid placement, per item) to end at
/// or below `target`. Found: offsets updated. Unsolved (maxMoves) or
/// OutOfBudget: offsets unchanged. The moves are deterministic, so the same
/// limits give the same placement on any machine.
/// `sameUpTo` (optional): the target enters the moves only through ends
/// compared with it, so every target from `target` to this one, one under
/// the least end that was found above it, makes the same moves and ends
/// the same way (on packings of power-of-two sizes often thousands of
/// bytes: a descent that failed there need not try again in between).
Outcome repairByEjection(const Items &items, std::vector<uint64_t> &offsets, uint64_t target,
                         const EjectionLimits &limits, Budget &budget,
                         uint64_t *sameUpTo = nullptr);

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_EJECTIONREPAIR_H
