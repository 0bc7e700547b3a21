//===- Sections.h - Independent parts of an allocation problem --*- C++ -*-===//
//
// Where no item is live on both sides of a moment in time, the items before
// and after it can be placed independently: the arena is the largest part's.
// A section is a maximal stretch of time with no such moment inside.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_SRC_SECTIONS_H
#define BUNDLEFIT_PLANNER_SRC_SECTIONS_H

#include "Items.h"

#include <cstdint>
#include <vector>

namespace bundlefit::planner::detail {

struct Section {
  Items items;             ///< Its items; compressed steps count from its start.
  std::vector<int> global; ///< Local item index -> index in the whole problem.
  uint64_t lowerBound = 0; ///< Most bytes live on one of its steps.
};

/// The sections of the items that take bytes (size-0 items belong to none),
/// in time order.
std::vector<Section> splitIntoSections(const Items &items);

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_SECTIONS_H
