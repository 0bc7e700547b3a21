//===- NetworkLike.h - Random allocation problems shaped like networks -*- C++ -*-===//
//
// The scale benchmark's problems (bench_planner, the planner tests): one
// buffer born per step; most die within 8 steps, 5% are skip connections
// living up to 256 steps and 1% live up to 4096 steps; log-uniform sizes from
// 64 B to 1 MiB, 64-byte aligned. The long-lived buffers cross every moment,
// so the whole problem is one section.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_FORMATS_NETWORKLIKE_H
#define BUNDLEFIT_PLANNER_FORMATS_NETWORKLIKE_H

#include "bundlefit/planner/Problem.h"

#include <cstdint>

namespace bundlefit::planner::formats {

/// n buffers from the seed (std::mt19937, so the same on every platform).
Problem networkLikeProblem(int n, uint32_t seed);

} // namespace bundlefit::planner::formats

#endif // BUNDLEFIT_PLANNER_FORMATS_NETWORKLIKE_H
