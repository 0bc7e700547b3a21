//===- Ablation.h - What each step of the planner is worth -------*- C++ -*-===//
#ifndef BUNDLEFIT_BENCH_PLANNER_ABLATION_H
#define BUNDLEFIT_BENCH_PLANNER_ABLATION_H

#include <filesystem>
#include <string>

namespace bench_planner {

/// Plans every family with each step of the planner left out in turn;
/// prints a table and returns the JSON object. ok turns false on an invalid
/// plan. `data`: the Glow traces and MiniMalloc instances.
std::string benchAblation(const std::filesystem::path &data, bool &ok);

} // namespace bench_planner

#endif // BUNDLEFIT_BENCH_PLANNER_ABLATION_H
