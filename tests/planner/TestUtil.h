//===- TestUtil.h - Helpers shared by the planner tests ---------*- C++ -*-===//
#ifndef BUNDLEFIT_TESTS_PLANNER_TESTUTIL_H
#define BUNDLEFIT_TESTS_PLANNER_TESTUTIL_H

#include "Budget.h"
#include "Items.h"
#include "bundlefit/planner/Planner.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace bundlefit::planner::test {

/// Fails the current test with the checker's message if the plan is unsafe.
inline void requireValid(const Problem &problem, const Plan &plan) {
  std::optional<std::string> error = checkPlan(problem, plan);
  INFO(plan.algorithm);
  REQUIRE_MESSAGE(!error, (error ? *error : std::string()));
  CHECK(plan.arenaSize >= plan.lowerBound);
}

/// Random problem: n buffers over `steps` steps, mixed alignments.
inline Problem randomProblem(int n, int steps, uint32_t seed, bool mixedAlignment = true) {
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

/// The true optimum by brute force: placing buffers in order of their
/// offsets in an optimal plan, each at the lowest free aligned address,
/// never ends higher; so the best first-fit over all orders is optimal.
/// fixed[i], when given, pins buffer i at that offset (an obstacle placed
/// before the others); the free buffers then go around it.
inline uint64_t bruteForceOptimum(const Problem &p,
                                  const std::vector<std::optional<uint64_t>> &fixed = {}) {
  std::vector<int> order, pinned;
  for (int i = 0; i < int(p.buffers.size()); ++i)
    (i < int(fixed.size()) && fixed[i] ? pinned : order).push_back(i);
  uint64_t best = UINT64_MAX;
  do {
    std::vector<uint64_t> offset(p.buffers.size());
    std::vector<int> placed;
    uint64_t top = 0;
    for (int i : pinned) {
      offset[i] = *fixed[i];
      placed.push_back(i);
      top = std::max(top, offset[i] + footprint(p.buffers[i]));
    }
    for (int i : order) {
      const Buffer &b = p.buffers[i];
      uint64_t at = 0;
      for (bool moved = true; moved;) {
        moved = false;
        for (int j : placed) {
          const Buffer &o = p.buffers[j];
          bool together = o.first <= b.last && b.first <= o.last;
          uint64_t oEnd = offset[j] + footprint(o);
          if (together && offset[j] < at + footprint(b) && at < oEnd) {
            at = alignUp(oEnd, b.alignment);
            moved = true;
          }
        }
      }
      offset[i] = at;
      placed.push_back(i);
      top = std::max(top, at + footprint(b));
    }
    best = std::min(best, top);
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

inline std::filesystem::path dataDir() { return BUNDLEFIT_PLANNER_DATA; }

/// A budget no test reaches: the limits under test are moves, tries or
/// nodes, so the result does not depend on the machine.
inline detail::Budget unlimited() { return detail::Budget(3600); }

/// The best greedy plan's offsets per item (the start the repairs get).
inline std::vector<uint64_t> greedyOffsets(const Problem &p, const detail::Items &items) {
  Plan greedy = planBestGreedy(p);
  std::vector<uint64_t> offsets(items.items.size(), 0);
  for (size_t b = 0; b < p.buffers.size(); ++b)
    offsets[items.itemOfBuffer[b]] = greedy.offsets[b] - items.offsetInItem[b];
  return offsets;
}

} // namespace bundlefit::planner::test

#endif // BUNDLEFIT_TESTS_PLANNER_TESTUTIL_H
