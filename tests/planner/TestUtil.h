//===- TestUtil.h - Helpers shared by the planner tests ---------*- C++ -*-===//
#ifndef BUNDLEFIT_TESTS_PLANNER_TESTUTIL_H
#define BUNDLEFIT_TESTS_PLANNER_TESTUTIL_H

#include "bundlefit/planner/Planner.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <random>
#include <string>

namespace bundlefit::planner::test {

/// Fails the current test with the checker's message if the plan is unsafe.
inline void requireValid(const Problem &problem, const Plan &plan) {
  std::optional<std::string> error = checkPlan(problem, plan);
  INFO(plan.algorithm);
  REQUIRE_MESSAGE(!error, (error ? *error : std::string()));
  CHECK(plan.arenaSize >= plan.lowerBound);
}

/// Random problem: n buffers over `steps` steps, mixed alignments.
inline Problem randomProblem(int n, int steps, uint32_t seed,
                             bool mixedAlignment = true) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> start(0, steps - 1), life(0, std::max(1, steps / 4));
  std::uniform_int_distribution<uint64_t> size(1, 4096);
  std::uniform_int_distribution<int> alignPick(0, 3);
  const uint64_t aligns[] = {1, 4, 16, 64};
  Problem p;
  for (int i = 0; i < n; ++i) {
    int first = start(rng);
    int last = std::min(steps - 1, first + life(rng));
    uint64_t a = mixedAlignment ? aligns[alignPick(rng)] : 1;
    p.buffers.push_back({i, size(rng), a, first, last});
  }
  return p;
}

inline std::filesystem::path dataDir() { return BUNDLEFIT_PLANNER_DATA; }

} // namespace bundlefit::planner::test

#endif // BUNDLEFIT_TESTS_PLANNER_TESTUTIL_H
