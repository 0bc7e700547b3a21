//===- GreedyInternal.h - The two halves of a greedy pass -------*- C++ -*-===//
#ifndef BUNDLEFIT_PLANNER_SRC_GREEDYINTERNAL_H
#define BUNDLEFIT_PLANNER_SRC_GREEDYINTERNAL_H

#include "Items.h"
#include "bundlefit/planner/Greedy.h"

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

/// Places the items in the given order; returns one offset per item.
std::vector<uint64_t> placeItems(const Items &items,
                                 const std::vector<int> &sequence, GreedyFit fit);

} // namespace bundlefit::planner::detail

#endif // BUNDLEFIT_PLANNER_SRC_GREEDYINTERNAL_H
