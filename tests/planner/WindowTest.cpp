//===- WindowTest.cpp - Search around obstacles; large sections by windows ===//
#include "TestUtil.h"

#include "ExactSearch.h"
#include "Items.h"
#include "WindowRepair.h"
#include "bundlefit/planner/formats/NetworkLike.h"

#include <chrono>
#include <optional>

using namespace bundlefit::planner;
using bundlefit::planner::test::bruteForceOptimum;
using bundlefit::planner::test::farDeadline;
using bundlefit::planner::test::randomProblem;
using bundlefit::planner::test::requireValid;

namespace {
detail::Outcome searchAround(const Problem &p, const std::vector<std::optional<uint64_t>> &pinned,
                             uint64_t capacity, Plan &plan) {
  detail::Items items = detail::buildItems(p);
  std::vector<uint64_t> fixed(items.items.size(), detail::kNotFixed);
  for (size_t b = 0; b < p.buffers.size(); ++b)
    if (pinned[b])
      fixed[items.itemOfBuffer[b]] = *pinned[b];
  detail::SearchBudget budget;
  budget.nodesLeft = UINT64_MAX;
  budget.deadline = farDeadline();
  std::vector<uint64_t> offsets;
  detail::Outcome result = detail::searchCapacity(items, capacity, budget, offsets, &fixed);
  if (result == detail::Outcome::Found)
    plan = detail::makePlan(p, items, offsets, "exact around obstacles", 0);
  return result;
}
} // namespace

TEST_CASE("the search around obstacles reaches the true optimum and proves it") {
  int checked = 0;
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    Problem p = randomProblem(8, 6, seed, seed % 2 == 0);
    // Every third buffer stays where the greedy plan put it.
    Plan greedy = planBestGreedy(p);
    std::vector<std::optional<uint64_t>> pinned(p.buffers.size());
    for (size_t b = 0; b < p.buffers.size(); b += 3)
      pinned[b] = greedy.offsets[b];
    uint64_t optimum = bruteForceOptimum(p, pinned);
    CAPTURE(seed);
    Plan plan;
    REQUIRE(searchAround(p, pinned, optimum, plan) == detail::Outcome::Found);
    requireValid(p, plan);
    CHECK(plan.arenaSize <= optimum);
    for (size_t b = 0; b < p.buffers.size(); ++b)
      if (pinned[b])
        CHECK(plan.offsets[b] == *pinned[b]);
    CHECK(searchAround(p, pinned, optimum - 1, plan) == detail::Outcome::Infeasible);
    ++checked;
  }
  CHECK(checked == 30);
}

namespace {
// planMemory with all the time it needs (it finishes far sooner; the result
// does not depend on it): one section, at its lower bound and proved so.
Plan requireOptimalAtBound(const Problem &p) {
  PlanOptions options;
  options.exact.timeBudgetSeconds = 600;
  Plan plan = planMemory(p, options);
  requireValid(p, plan);
  CHECK(plan.sections == 1);
  CHECK(plan.arenaSize == plan.lowerBound);
  CHECK(plan.provedOptimal);
  return plan;
}
} // namespace

TEST_CASE("a section of 20,000 buffers is brought to its lower bound window by window") {
  Problem p = formats::networkLikeProblem(20000, 1);
  Plan greedy = planBestGreedy(p);
  requireValid(p, greedy);
  // The case is only worth running while the greedy plan misses the bound.
  REQUIRE(double(greedy.arenaSize) > 1.005 * double(greedy.lowerBound));
  requireOptimalAtBound(p);
}

TEST_CASE("a section of 10,000 buffers is searched whole, reaching and proving its bound") {
  // Up to kWholeSearchItems a section is searched whole, not by windows:
  // on this seed the greedy family misses the bound and the search reaches
  // it (windows took 3x the nodes, 29,598 against 10,000).
  Problem p = formats::networkLikeProblem(10000, 1);
  Plan greedy = planBestGreedy(p);
  REQUIRE(greedy.arenaSize > greedy.lowerBound);
  detail::Items items = detail::buildItems(p);
  detail::SearchBudget budget;
  budget.nodesLeft = 1000000;
  budget.deadline = farDeadline();
  std::vector<uint64_t> offsets;
  REQUIRE(detail::searchCapacity(items, greedy.lowerBound, budget, offsets) ==
          detail::Outcome::Found);
  requireValid(p, detail::makePlan(p, items, offsets, "exact", greedy.lowerBound));
  MESSAGE("whole search: " << budget.nodesUsed << " nodes");
  // Through planMemory the critical items placed first (CriticalFirst.h)
  // get there before any search.
  CHECK(requireOptimalAtBound(p).algorithm.find("perturbed-greedy") == std::string::npos);
}

TEST_CASE("a window whose obstacle is in the way is solved without it, the obstacle put back") {
  // Step 1 holds 4 bytes: O (1 byte, steps 0-1, left where a greedy pass
  // put it, at 1) splits it, so A (3 bytes, steps 1-2) ends at 5. Around O
  // as an obstacle, A's window [1, 2] has no place under 4; placed alone A
  // goes to 0, and O, put back at its lowest fit, to 3.
  detail::Items items;
  items.numSteps = 3;
  detail::Item o, a;
  o.size = 1;
  o.first = o.cfirst = 0;
  o.last = o.clast = 1;
  a.size = 3;
  a.first = a.cfirst = 1;
  a.last = a.clast = 2;
  items.items = {o, a};
  std::vector<uint64_t> offsets = {1, 2};
  detail::SearchBudget budget;
  budget.nodesLeft = 1000;
  budget.deadline = farDeadline();
  REQUIRE(detail::repairByWindows(items, offsets, 4, budget) == detail::Outcome::Found);
  CHECK(offsets == std::vector<uint64_t>{3, 0});
}
