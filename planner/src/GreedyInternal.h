//===- GreedyInternal.h - The two halves of a greedy pass -------*- C++ -*-===//
#ifndef BUNDLEFIT_PLANNER_SRC_GREEDYINTERNAL_H
#define BUNDLEFIT_PLANNER_SRC_GREEDYINTERNAL_H

#include "Items.h"
#include "bundlefit/planner/Greedy.h"

#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

namespace bundlefit::planner::detail {

struct GreedyStrategy {
  GreedyOrder order;
  GreedyFit fit;
};

/// Every order x fit combination, most often best first.
const std::vector<GreedyStrategy> &greedyStrategies();

/// The order in which a greedy pass places the items (every item once).
std::vector<int> orderItems(const Items &items, GreedyOrder order);

/// What a placement pass did, for the tests that bound its work.
struct PlaceStats {
  uint64_t placed = 0;   ///< Items given an offset.
  uint64_t gathered = 0; ///< Placed items seen overlapping a new one in time.
  uint64_t ordered = 0;  ///< Comparisons spent ordering them by offset.
};

struct PlaceLimits {
  /// Give up (return false) once this passes; checked every few items.
  const std::chrono::steady_clock::time_point *deadline = nullptr;
  PlaceStats *stats = nullptr; ///< Added to when given.
};

/// The offset a greedy pass gives an item of `size` among the `occupied`
/// [offset, end) ranges of the placed items it meets (sorted here).
uint64_t chooseOffset(std::vector<std::pair<uint64_t, uint64_t>> &occupied, uint64_t size,
                      uint64_t alignment, GreedyFit fit, PlaceStats &stats);

/// Places the items in the given order; returns one offset per item.
std::vector<uint64_t> placeItems(const Items &items, const std::vector<int> &sequence,
                                 GreedyFit fit);

/// Same, within limits: false (offsets incomplete) when the deadline passed.
/// With `alreadyPlaced` (per item), the items marked there keep the offsets
/// `offsets` holds on entry and the others go around them (the sequence
/// need not list the marked ones: they are skipped).
bool placeItems(const Items &items, const std::vector<int> &sequence, GreedyFit fit,
                std::vector<uint64_t> &offsets, const PlaceLimits &limits,
                const std::vector<char> *alreadyPlaced = nullptr);

/// planBestGreedy on items already built. With a deadline, the first pass
/// always completes (a plan is needed) and no later pass ends past it; a pass
/// the deadline cut sets Plan::budgetExhausted.
Plan bestGreedy(const Problem &problem, const Items &items,
                const std::chrono::steady_clock::time_point *deadline);

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_GREEDYINTERNAL_H
