//===- GreedyPlace.cpp - Put each item into a free address range ----------===//
//
// Each item's offset is chosen among the k placed items that overlap it in
// time (PlacedIndex gathers them in O(log T + k)), sorted by offset. A heap
// that stops at the first hole was tried for first fit: on network-like
// problems most items land near the top, so it pops nearly all k and cost
// 15% more than the sort. A pass is O(n log n + sum of k log k): near
// O(n log n) when few items live long, up to O(n^2 log n) when all do,
// which is why it spends units for what it gathers and sorts.
//
//===----------------------------------------------------------------------===//
#include "PlacedIndex.h"
#include "Placement.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace bundlefit::planner::detail {

bool placeItems(const Items &items, const std::vector<int> &sequence,
                std::vector<uint64_t> &offsets, Budget &budget,
                const std::vector<char> *alreadyPlaced) {
  PlacedIndex placed(items);
  if (alreadyPlaced) {
    for (size_t i = 0; i < items.items.size(); ++i) {
      const Item &item = items.items[i];
      if ((*alreadyPlaced)[i] && item.size != 0)
        placed.insert({offsets[i], offsets[i] + item.size}, item.cfirst, item.clast);
    }
  } else {
    offsets.assign(items.items.size(), 0);
  }
  std::vector<Range> occupied;
  for (int i : sequence) {
    const Item &item = items.items[i];
    if ((alreadyPlaced && (*alreadyPlaced)[size_t(i)]) || item.size == 0)
      continue; // Empty items take no bytes and stay at offset 0.
    occupied.clear();
    placed.forEachOverlapping(item.cfirst, item.clast,
                              [&](const Range &r) { occupied.push_back(r); });
    if (!budget.spend(kGatherUnits * (1 + occupied.size() + sortUnits(occupied.size()))))
      return false;
    std::sort(occupied.begin(), occupied.end());
    offsets[i] = lowestFit(occupied.begin(), occupied.end(), item.size, item.alignment,
                           [](const Range &r) { return r; });
    placed.insert({offsets[i], offsets[i] + item.size}, item.cfirst, item.clast);
  }
  return true;
}

bool greedyPass(const Items &items, GreedyOrder order, std::vector<uint64_t> &offsets,
                Budget &budget, const std::vector<char> *alreadyPlaced) {
  return budget.spend(orderUnits(items, order)) &&
         placeItems(items, orderItems(items, order), offsets, budget, alreadyPlaced);
}

} // namespace bundlefit::planner::detail
