//===- Greedy.h - Fast one-pass placement strategies ------------*- C++ -*-===//
//
// A greedy plan takes buffers one at a time in some order and puts each at a
// free address range among the already placed buffers it overlaps in time.
// The order matters most; several are offered and planBestGreedy keeps the
// best. Each pass costs O(n log^2 n) plus O(k log k) per item for its k
// placed items that overlap it in time: 31 on average on 10^6
// network-like buffers (1% of them live up to 4,096 steps), so a pass over
// 10^6 buffers takes about a second of CPU.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_GREEDY_H
#define BUNDLEFIT_PLANNER_GREEDY_H

#include "bundlefit/planner/Problem.h"

#include <string>

namespace bundlefit::planner {

enum class GreedyOrder {
  BySize,        ///< Largest footprint first (TFLM's greedy planner).
  ByArea,        ///< Largest footprint x lifetime first.
  ByLifetime,    ///< Longest lifetime first, then largest.
  ByFirstUse,    ///< Program order (Glow's "SameOrder").
  MaxLiveBySize, ///< Glow: at the step with most unplaced bytes, largest buffer.
  MaxLiveByTime, ///< Glow: at the step with most unplaced bytes, longest buffer.
};

enum class GreedyFit {
  FirstFit, ///< Lowest free address range that is large enough.
  BestFit,  ///< Tightest free range between placed buffers, else on top.
};

std::string toString(GreedyOrder order);
std::string toString(GreedyFit fit);

/// One greedy pass. Honours every valid in-place hint. Deterministic.
Plan planGreedy(const Problem &problem, GreedyOrder order, GreedyFit fit = GreedyFit::FirstFit);

/// Runs the order x fit combinations, most successful first, stopping once a
/// plan meets the lower bound, and keeps the smallest arena (ties go to the
/// earlier strategy). Above 20,000 buffers only two run (by size, then Glow's
/// max-live by size), so 100k buffers plan in well under a second.
Plan planBestGreedy(const Problem &problem);

} // namespace bundlefit::planner

#endif // BUNDLEFIT_PLANNER_GREEDY_H
