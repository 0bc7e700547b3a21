//===- PerfectPacking.h - Problems whose optimum is known -------*- C++ -*-===//
//
// A strip `height` bytes high and some steps long is cut into buffers with
// no gap left, so every step has exactly `height` bytes live: the live-peak
// bound is the optimum, and a plan's distance from it is its distance from
// the best possible. The strip is cut from the bottom up: the lowest stretch
// of the cut's top edge (its leftmost, on ties) is split into pieces whose
// lengths and heights come from the family's distributions (a height is cut
// down to what is left of the strip). Any packing without a gap can be
// taken apart that way, so no shape of packing is left out.
//
// Deterministic from the seed on every platform (its own generator, no
// std:: distributions). Alignment 1, so the CSV a peer reads is the same
// problem.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_FORMATS_PERFECTPACKING_H
#define BUNDLEFIT_PLANNER_FORMATS_PERFECTPACKING_H

#include "bundlefit/planner/Problem.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit::planner::formats {

enum class PackingFamily {
  Uniform,     ///< Lifetimes 1-16 steps, sizes uniform from 1/256 to 1/8 of the strip.
  HeavyTailed, ///< Pareto sizes (alpha 1.1, 1/256 to 1/2 of the strip), lifetimes 1-256
               ///< log-uniform.
  PowerOfTwo,  ///< Sizes 2^14..2^22 (a 2^24 strip), lifetimes 1-32 steps.
  LongLived, ///< 95% live 1-8 steps, 5% 64-2048 steps; sizes log-uniform 1/1024..1/8 of the strip.
};

/// Every family, in a fixed order (for benches that run them all).
const std::vector<PackingFamily> &allPackingFamilies();
std::string toString(PackingFamily family);
/// The family named by toString, or false.
bool packingFamilyFromString(const std::string &name, PackingFamily &family);

/// About n buffers (within a few percent: the strip is cut whole) whose
/// optimum arena is `height` = computeLowerBound(problem) = 2^24.
Problem perfectPackingProblem(int n, PackingFamily family, uint64_t seed);

} // namespace bundlefit::planner::formats

#endif // BUNDLEFIT_PLANNER_FORMATS_PERFECTPACKING_H
