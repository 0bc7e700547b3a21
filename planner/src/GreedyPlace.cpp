//===- GreedyPlace.cpp - Put each item into a free address range ----------===//
#include "GreedyInternal.h"
#include "PlacedIndex.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace bundlefit::planner::detail {

namespace {
// Scans the occupied ranges (sorted by offset) bottom-up. FirstFit takes the
// first hole that is large enough; BestFit the tightest one, else the top.
uint64_t chooseOffset(std::vector<Range> &occupied, uint64_t size,
                      uint64_t alignment, GreedyFit fit) {
  std::sort(occupied.begin(), occupied.end(),
            [](const Range &a, const Range &b) { return a.first < b.first; });
  uint64_t candidate = 0;
  uint64_t bestOffset = 0, bestHole = std::numeric_limits<uint64_t>::max();
  bool found = false;
  for (const Range &r : occupied) {
    if (r.first >= candidate + size) {
      uint64_t hole = r.first - candidate;
      if (fit == GreedyFit::FirstFit)
        return candidate;
      if (hole < bestHole) {
        bestHole = hole;
        bestOffset = candidate;
        found = true;
      }
    }
    candidate = std::max(candidate, alignUp(r.second, alignment));
  }
  return found ? bestOffset : candidate;
}
} // namespace

std::vector<uint64_t> placeItems(const Items &items,
                                 const std::vector<int> &sequence, GreedyFit fit) {
  std::vector<uint64_t> offsets(items.items.size(), 0);
  PlacedIndex placed(items);
  std::vector<Range> occupied;
  for (int i : sequence) {
    const Item &item = items.items[i];
    if (item.size == 0)
      continue; // Empty items take no bytes and stay at offset 0.
    occupied.clear();
    placed.forEachOverlapping(item.cfirst, item.clast,
                              [&](const Range &r) { occupied.push_back(r); });
    offsets[i] = chooseOffset(occupied, item.size, item.alignment, fit);
    placed.insert({offsets[i], offsets[i] + item.size}, item.cfirst, item.clast);
  }
  return offsets;
}

} // namespace bundlefit::planner::detail
