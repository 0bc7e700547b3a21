//===- LowerBound.h - The live-peak bound no plan can beat ------*- C++ -*-===//
#ifndef BUNDLEFIT_PLANNER_LOWERBOUND_H
#define BUNDLEFIT_PLANNER_LOWERBOUND_H

#include "bundlefit/planner/Problem.h"

namespace bundlefit::planner {

/// Max over steps of the footprints live on that step. A valid in-place pair
/// is counted once (the larger footprint) on the step the two share, since an
/// honoured hint puts both at one offset. Every plan the planner returns has
/// arenaSize >= this value.
uint64_t computeLowerBound(const Problem &problem);

} // namespace bundlefit::planner

#endif // BUNDLEFIT_PLANNER_LOWERBOUND_H
