//===- Items.h - The planner's internal view of a Problem -------*- C++ -*-===//
//
// Strategies do not see buffers and hints; they see "items": an honoured
// in-place chain collapses into one item spanning the union of its members'
// lifetimes, with the largest member's footprint. Time is compressed to the
// points where the live set changes, so an item lives on the compressed
// steps [cfirst, clast].
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_SRC_ITEMS_H
#define BUNDLEFIT_PLANNER_SRC_ITEMS_H

#include "bundlefit/planner/Problem.h"

#include <string>
#include <vector>

namespace bundlefit::planner::detail {

struct Item {
  uint64_t size = 0; ///< Footprint, a multiple of alignment.
  uint64_t alignment = 1;
  int first = 0, last = 0;   ///< Original steps, inclusive.
  int cfirst = 0, clast = 0; ///< Compressed steps, inclusive.
  uint64_t length() const { return uint64_t(int64_t(last) - first) + 1; }
};

struct Items {
  std::vector<Item> items;
  std::vector<int> itemOfBuffer; ///< Buffer index -> item index.
  /// Buffer index -> its offset from its item's start (non-zero only in a
  /// chain with shifted hints).
  std::vector<uint64_t> offsetInItem;
  int numSteps = 0; ///< Compressed steps are [0, numSteps).
};

/// True when hint h is well formed: distinct in-range buffers and input
/// dies on output's first step.
bool isValidHint(const Problem &problem, const InPlaceHint &h);

/// Which hints the planner honours: valid ones, in order, skipping any that
/// would give an input two in-place outputs or an output two inputs.
std::vector<bool> selectHints(const Problem &problem);

Items buildItems(const Problem &problem);

/// computeLowerBound(problem) from its items, built once by the caller.
uint64_t lowerBoundOf(const Problem &problem, const Items &items);

/// max over items of offset + size (0 when nothing takes bytes).
uint64_t arenaOf(const Items &items, const std::vector<uint64_t> &itemOffsets);

/// Expands per-item offsets to a Plan over the original buffers.
Plan makePlan(const Problem &problem, const Items &items, const std::vector<uint64_t> &itemOffsets,
              std::string algorithm, uint64_t lowerBound);

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_ITEMS_H
