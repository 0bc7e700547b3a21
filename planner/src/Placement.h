//===- Placement.h - Greedy passes and the first placement ------*- C++ -*-===//
#ifndef BUNDLEFIT_PLANNER_SRC_PLACEMENT_H
#define BUNDLEFIT_PLANNER_SRC_PLACEMENT_H

#include "Budget.h"
#include "Items.h"
#include "bundlefit/planner/Greedy.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace bundlefit::planner::detail {

/// The greedy passes the planner runs (all first fit), in the order it runs them.
const std::vector<GreedyOrder> &greedyOrders();

/// "greedy:<order>/first-fit": Plan::algorithm and PlanOptions::skip's name.
std::string greedyName(GreedyOrder order);

/// The order in which a greedy pass places the items (every item once).
std::vector<int> orderItems(const Items &items, GreedyOrder order);

/// What orderItems costs in work units: a sort, or for Glow's dynamic
/// orders (O(n log^2 n), two trees) about twenty.
uint64_t orderUnits(const Items &items, GreedyOrder order);

/// The units a greedy pass of any order would spend placing the items: the
/// ranges it gathers are the pairs of items that meet in time, whatever
/// the order, each also sorted with the others an item meets.
uint64_t passUnits(const Items &items);

/// First fit: the lowest offset, a multiple of `alignment`, where `size`
/// bytes overlap none of the ranges in [begin, end), which are sorted by
/// start; rangeOf(*it) gives a range's {start, end}.
template <typename It, typename RangeOf>
uint64_t lowestFit(It begin, It end, uint64_t size, uint64_t alignment, RangeOf rangeOf) {
  uint64_t at = 0;
  for (It r = begin; r != end && rangeOf(*r).first < at + size; ++r)
    at = std::max(at, alignUp(rangeOf(*r).second, alignment));
  return at;
}

/// Places the items in the given order, each at its lowest free range
/// (first fit) among the placed items it meets in time.
/// Spends one unit per item and per placed range it looks at: false
/// (offsets incomplete) when the budget ran out. With `alreadyPlaced` (per
/// item), the items marked there keep the offsets `offsets` holds on entry
/// and the others go around them.
bool placeItems(const Items &items, const std::vector<int> &sequence,
                std::vector<uint64_t> &offsets, Budget &budget,
                const std::vector<char> *alreadyPlaced = nullptr);

/// One greedy pass: spends orderUnits, then placeItems in that order.
bool greedyPass(const Items &items, GreedyOrder order, std::vector<uint64_t> &offsets,
                Budget &budget, const std::vector<char> *alreadyPlaced = nullptr);

/// Bottom-left placement (BottomLeft.cpp): O(n log n) whatever the
/// lifetimes, so it is the placement every plan starts from.
std::vector<uint64_t> placeBottomLeft(const Items &items);

/// The same, spending `units` from `budget` as the items are placed. When
/// the budget runs out part way, the items not yet placed go on shelves
/// above the others, one per size class and overlap (O(n log n): the plan
/// is valid, far from tight), and it returns false.
bool placeBottomLeft(const Items &items, std::vector<uint64_t> &offsets, Budget *budget,
                     uint64_t units);

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_PLACEMENT_H
