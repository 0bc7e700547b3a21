//===- CriticalFirst.h - Place the items of the peaks first -----*- C++ -*-===//
//
// On network-like problems the arena is decided on the few steps whose live
// bytes come close to the bound. The items live on one of them ("critical":
// on a step within 5% of the most bytes live) are a few hundred even among
// 10^5 buffers, and placed first, as a problem of their own, they reach the
// bound at once (a greedy pass or a short search). The other items then go
// around them by one greedy pass: a start that is often worse than the
// greedy plan (a few percent over the bound on 10^5 network-like buffers)
// but whose peaks are already packed, so that ejection (EjectionRepair.h)
// with the critical items held brings the rest down; from the greedy plan
// it often does not.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_SRC_CRITICALFIRST_H
#define BUNDLEFIT_PLANNER_SRC_CRITICALFIRST_H

#include "Budget.h"
#include "Items.h"

#include <cstdint>
#include <vector>

namespace bundlefit::planner::detail {

/// A placement of every item (per item) whose critical items end at or
/// below `target`; critical[i] is non-zero for those. False when the
/// critical items could not be brought under the target (by the greedy
/// strategies, then, when `search` and for up to kMostSearchItems critical
/// items, by a search of at most 64 nodes per item) or the budget ran out:
/// offsets and critical are then unspecified.
bool placeCriticalFirst(const Items &items, uint64_t target, Budget &budget,
                        std::vector<uint64_t> &offsets, std::vector<char> &critical,
                        bool search = true);

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_CRITICALFIRST_H
