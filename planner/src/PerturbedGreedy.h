//===- PerturbedGreedy.h - Re-place the top window in random orders --*- C++ -*-===//
//
// Window repair (WindowRepair.h) is exact inside a window, but on some
// 10^5-buffer network-like problems (seeds 1 and 43 of the generator) no
// window it can search in seconds reaches even 2% over the bound: two peaks
// are coupled through long-lived items, and a depth-first search that goes
// wrong near its root never comes back there. Greedy passes, on the other
// hand, are cheap and their results spread widely with the order (one
// window re-placed in 400 orders ranged from +0.6% to +19% over the bound).
// So this is the anytime fallback: take the window around the item that ends
// highest, re-place the items inside it by a greedy pass in a random order
// around the items crossing its edges (which stay), and keep the result when
// the window's top went down. Best effort: it proves nothing.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_SRC_PERTURBEDGREEDY_H
#define BUNDLEFIT_PLANNER_SRC_PERTURBEDGREEDY_H

#include "Items.h"

#include <chrono>
#include <cstdint>
#include <vector>

namespace bundlefit::planner::detail {

struct PerturbLimits {
  std::chrono::steady_clock::time_point until; ///< No try starts after this.
  uint64_t maxTries = 0;                       ///< 0: until `until` (tests set it).
};

/// Lowers the arena of `offsets` (per item, a valid placement, updated in
/// place) towards `floor` by re-placing windows; stops at the floor, at
/// `limits`, or when no item takes bytes. The tries are a fixed
/// pseudo-random sequence, so the same number of tries gives the same plan.
/// Returns the number of tries that lowered a window's top.
uint64_t perturbWindows(const Items &items, std::vector<uint64_t> &offsets, uint64_t floor,
                        const PerturbLimits &limits);

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_PERTURBEDGREEDY_H
