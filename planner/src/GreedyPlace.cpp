//===- GreedyPlace.cpp - Put each item into a free address range ----------===//
//
// Each item's offset is chosen among the k placed items that overlap it in
// time (PlacedIndex gathers them in O(log T + k)), sorted by offset. A heap
// that stops at the first hole was tried for first fit: on network-like
// problems most items land near the top, so it pops nearly all k and cost
// 15% more than the sort.
//
//===----------------------------------------------------------------------===//
#include "GreedyInternal.h"
#include "PlacedIndex.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace bundlefit::planner::detail {

namespace {
// Counts comparisons into stats->ordered (for the complexity tests).
struct ByOffset {
  PlaceStats *stats;
  bool operator()(const Range &a, const Range &b) const {
    ++stats->ordered;
    return a.first < b.first;
  }
};

} // namespace

// Scans the occupied ranges bottom-up, in offset order. FirstFit takes the
// first hole that is large enough; BestFit the tightest one, else the top.
uint64_t chooseOffset(std::vector<Range> &occupied, uint64_t size, uint64_t alignment,
                      GreedyFit fit, PlaceStats &stats) {
  std::sort(occupied.begin(), occupied.end(), ByOffset{&stats});
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

namespace {
// How many items are placed between two looks at the clock: a look costs
// about as much as placing a short-lived item.
constexpr size_t kItemsPerClockCheck = 1024;
} // namespace

bool placeItems(const Items &items, const std::vector<int> &sequence, GreedyFit fit,
                std::vector<uint64_t> &offsets, const PlaceLimits &limits,
                const std::vector<char> *alreadyPlaced) {
  PlaceStats unused;
  PlaceStats &stats = limits.stats ? *limits.stats : unused;
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
  size_t count = 0;
  for (int i : sequence) {
    if (alreadyPlaced && (*alreadyPlaced)[size_t(i)])
      continue;
    if (limits.deadline && ++count % kItemsPerClockCheck == 0 &&
        std::chrono::steady_clock::now() > *limits.deadline)
      return false;
    const Item &item = items.items[i];
    if (item.size == 0)
      continue; // Empty items take no bytes and stay at offset 0.
    occupied.clear();
    placed.forEachOverlapping(item.cfirst, item.clast,
                              [&](const Range &r) { occupied.push_back(r); });
    stats.gathered += occupied.size();
    offsets[i] = chooseOffset(occupied, item.size, item.alignment, fit, stats);
    placed.insert({offsets[i], offsets[i] + item.size}, item.cfirst, item.clast);
    ++stats.placed;
  }
  return true;
}

std::vector<uint64_t> placeItems(const Items &items, const std::vector<int> &sequence,
                                 GreedyFit fit) {
  std::vector<uint64_t> offsets;
  placeItems(items, sequence, fit, offsets, PlaceLimits{});
  return offsets;
}

} // namespace bundlefit::planner::detail
