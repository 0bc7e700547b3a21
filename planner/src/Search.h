//===- Search.h - Does everything fit under a capacity? ---------*- C++ -*-===//
//
// The decision half of the exact planner, after MiniMalloc (Moffitt,
// ASPLOS'23; the code is ours): given a capacity, search canonical
// placements depth-first until one fits, the space is exhausted (a proof
// that nothing fits) or a limit ends it.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_SRC_SEARCH_H
#define BUNDLEFIT_PLANNER_SRC_SEARCH_H

#include "Budget.h"
#include "Items.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace bundlefit::planner::detail {

/// Unsolved: a limit of the caller's own (nodes, moves) ended the attempt;
/// nothing is proved. OutOfBudget: the planner's budget ran out.
enum class Outcome { Found, Infeasible, OutOfBudget, Unsolved };

/// The search runs on problems of up to this many items, wherever it is
/// called from: it proves optimality there (Glow's traces, MiniMalloc's
/// instances). On larger sections of every family it proved nothing, and
/// ejection alone ended the same or lower (every perfect-packing family at
/// 10^4, network-like at 10^4) with the search's share of the work. Its
/// recursion (one level per placed item) fits a default stack at this size.
inline constexpr size_t kMostSearchItems = 1000;

/// Tries three static preorders in turn under a doubling node limit
/// (MiniMalloc's round robin). `nodes`: at most this many on entry, the
/// number spent on return. On Found, itemOffsets holds a placement with
/// every item end <= capacity.
Outcome searchCapacity(const Items &items, uint64_t capacity, Budget &budget, uint64_t &nodes,
                       std::vector<uint64_t> &itemOffsets);

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_SEARCH_H
