//===- WindowRepair.h - Bring a large section under a target ----*- C++ -*-===//
//
// A search over a whole section of 10^5 items is out of reach (a node costs
// O(items)), but its arena is usually decided on a few steps: where the most
// bytes are live. So the items that end above the target are repaired one
// time window at a time: the items living inside the window are placed
// afresh by the exact search, around the items that cross its edges, which
// stay where they are (obstacles), or, when those are in the way, are put
// back around the window's new placement. A window that cannot be solved grows to
// the lifetimes of everything live in it, up to the whole section.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_SRC_WINDOWREPAIR_H
#define BUNDLEFIT_PLANNER_SRC_WINDOWREPAIR_H

#include "ExactSearch.h"
#include "Items.h"

#include <cstdint>
#include <vector>

namespace bundlefit::planner::detail {

/// Sections with more items than this are repaired by windows; smaller ones
/// are searched whole (which can also prove that a target is out of reach).
/// A node of the whole search costs O(items), yet at 10^4 network-like items
/// it reaches the bound 2-4x sooner than windows do (seeds 1-3: 0.4 s of CPU
/// against 1.4 s; a window there grows to most of the section anyway).
inline constexpr size_t kWholeSearchItems = 16384;

/// Moves items of `items` (offsets per item, updated in place) until every
/// one ends at or below `target`. Found: done; Unsolved: some window could
/// not be solved within its node limit (nothing is proved);
/// OutOfBudget: the budget ran out. Offsets stay a valid placement
/// throughout, so a partial repair keeps whatever it fixed.
Outcome repairByWindows(const Items &items, std::vector<uint64_t> &offsets, uint64_t target,
                        SearchBudget &budget);

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_WINDOWREPAIR_H
