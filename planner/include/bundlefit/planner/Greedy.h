//===- Greedy.h - Fast one-pass placement strategies ------------*- C++ -*-===//
//
// A greedy plan takes buffers one at a time in some order and puts each at a
// free address range among the already placed buffers it overlaps in time.
// The order matters most; several are offered. A pass costs O(n log n) plus
// O(k log k) per buffer for its k placed buffers that overlap it in time:
// near O(n log n) on networks, where few buffers live long, and up to
// O(n^2 log n) when all do.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_GREEDY_H
#define BUNDLEFIT_PLANNER_GREEDY_H

#include "bundlefit/planner/Problem.h"

#include <string>

namespace bundlefit::planner {

enum class GreedyOrder {
  BySize,        ///< Largest footprint first, ties by the later buffer (TFLM's planner).
  MaxLiveBySize, ///< Glow: at the step with most unplaced bytes, largest buffer.
  MaxLiveByTime, ///< Glow: at the step with most unplaced bytes, longest buffer.
};

std::string toString(GreedyOrder order);

/// One greedy pass, each buffer at the lowest free address range large
/// enough for it (first fit; best fit never won on any family in
/// bench_planner --ablation and was deleted). Honours every valid in-place
/// hint. Deterministic.
Plan planGreedy(const Problem &problem, GreedyOrder order);

/// The bottom-left placement and every greedy pass planMemory runs, with no
/// limit, stopping once a plan meets the lower bound; the smallest arena
/// (ties go to the earlier). No search.
Plan planBestGreedy(const Problem &problem);

} // namespace bundlefit::planner

#endif // BUNDLEFIT_PLANNER_GREEDY_H
