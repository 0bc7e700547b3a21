//===- GreedyTest.cpp - Greedy passes are safe, deterministic and good ----===//
#include "TestUtil.h"

using namespace bundlefit::planner;
using bundlefit::planner::test::randomProblem;
using bundlefit::planner::test::requireValid;

namespace {
const GreedyOrder kOrders[] = {GreedyOrder::BySize, GreedyOrder::MaxLiveBySize,
                               GreedyOrder::MaxLiveByTime};
} // namespace

TEST_CASE("every greedy strategy gives a valid plan on random problems") {
  for (uint32_t seed = 1; seed <= 25; ++seed) {
    Problem p = randomProblem(60, 40, seed);
    uint64_t bound = computeLowerBound(p);
    for (GreedyOrder order : kOrders) {
      Plan plan = planGreedy(p, order);
      CAPTURE(seed);
      requireValid(p, plan);
      CHECK(plan.lowerBound == bound);
    }
  }
}

TEST_CASE("best greedy is no worse than TFLM's order nor any strategy it runs") {
  for (uint32_t seed = 100; seed < 110; ++seed) {
    Problem p = randomProblem(80, 30, seed, false);
    Plan best = planBestGreedy(p);
    requireValid(p, best);
    for (GreedyOrder order : {GreedyOrder::BySize, GreedyOrder::MaxLiveBySize}) {
      Plan single = planGreedy(p, order);
      requireValid(p, single);
      CHECK(best.arenaSize <= single.arenaSize);
    }
  }
}

TEST_CASE("TFLM's order: largest first, ties by the later buffer") {
  // The 128-byte buffer goes first, at 0; then the three of 64 bytes, the
  // later first, as TFLM's planner takes them (it fills the array it sorts
  // from the back): 2 on top of it, then 1 and 0 above 2. In the order
  // given, 0 and 1 would be at 128 and 2 at 192.
  Problem p;
  p.buffers = {{0, 64, 1, 0, 0}, {1, 64, 1, 1, 1}, {2, 64, 1, 0, 1}, {3, 128, 1, 0, 1}};
  Plan plan = planGreedy(p, GreedyOrder::BySize);
  requireValid(p, plan);
  CHECK(plan.offsets == std::vector<uint64_t>{192, 192, 128, 0});
}

TEST_CASE("greedy is deterministic") {
  Problem p = randomProblem(200, 50, 7);
  Plan a = planBestGreedy(p), b = planBestGreedy(p);
  requireValid(p, a);
  CHECK(a.offsets == b.offsets);
  CHECK(a.algorithm == b.algorithm);
}

TEST_CASE("a chain of layers packs at the lower bound") {
  // Layer k's output lives on steps [k, k+1]: two buffers live at a time.
  Problem p;
  const uint64_t sizes[] = {4096, 1024, 8192, 512, 2048, 64};
  for (int k = 0; k < 6; ++k)
    p.buffers.push_back({k, sizes[k], 64, k, k + 1});
  Plan plan = planBestGreedy(p);
  requireValid(p, plan);
  CHECK(plan.arenaSize == plan.lowerBound);
  CHECK(plan.lowerBound == 8192 + 1024); // step 2: layers 1 and 2, the heaviest pair
  CHECK(plan.provedOptimal);
}

TEST_CASE("greedy places buffers with mixed alignment on aligned offsets") {
  Problem p;
  p.buffers = {{0, 3, 1, 0, 2}, {1, 100, 64, 0, 2}, {2, 7, 8, 1, 1}, {3, 1, 128, 2, 2}};
  for (GreedyOrder order : kOrders)
    requireValid(p, planGreedy(p, order));
}

TEST_CASE("zero-size buffers are placed at zero and cost nothing") {
  Problem p;
  p.buffers = {{0, 0, 64, 0, 5}, {1, 128, 64, 0, 5}, {2, 0, 1, 2, 2}};
  Plan plan = planBestGreedy(p);
  requireValid(p, plan);
  CHECK(plan.arenaSize == 128); // buffer 1 alone
  CHECK(plan.offsets[0] == 0);
  CHECK(plan.offsets[2] == 0);
}

TEST_CASE("in-place hints are honoured by greedy, exact and planMemory") {
  // A relu written over its input, then an add written over the relu.
  Problem p;
  p.buffers = {{0, 4096, 64, 0, 1}, // conv output
               {1, 4096, 64, 1, 2}, // relu, in place over 0
               {2, 1024, 64, 1, 3}, // side branch
               {3, 4096, 64, 2, 4}, // add, in place over 1
               {4, 512, 64, 3, 4}};
  p.inPlace = {{1, 0, 0, {}}, {3, 1, 0, {}}};
  std::vector<Plan> plans = {planGreedy(p, GreedyOrder::BySize),
                             planGreedy(p, GreedyOrder::MaxLiveByTime), planBestGreedy(p),
                             planExact(p), planMemory(p)};
  for (const Plan &plan : plans) {
    requireValid(p, plan);
    CHECK(plan.offsets[1] == plan.offsets[0]);
    CHECK(plan.offsets[3] == plan.offsets[1]);
  }
  CHECK(plans.back().arenaSize == 4096 + 1024 + 512); // the bound, on step 3
}

TEST_CASE("conflicting in-place hints: the first one wins") {
  // Two outputs both want buffer 0's storage; they are live together.
  Problem p;
  p.buffers = {{0, 256, 1, 0, 1}, {1, 256, 1, 1, 2}, {2, 256, 1, 1, 2}};
  p.inPlace = {{1, 0, 0, {}}, {2, 0, 0, {}}};
  CHECK(honouredInPlaceHints(p) == std::vector<bool>{true, false});
  Plan plan = planMemory(p);
  requireValid(p, plan);
  CHECK(plan.offsets[1] == plan.offsets[0]);
  CHECK(plan.offsets[2] != plan.offsets[0]);
}

TEST_CASE("large problems stay valid") {
  // Network-like: each buffer lives a few steps.
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> life(0, 6);
  std::uniform_int_distribution<uint64_t> size(64, 1 << 16);
  Problem p;
  for (int i = 0; i < 21000; ++i)
    p.buffers.push_back({i, size(rng), 64, i, i + life(rng)});
  Plan plan = planBestGreedy(p);
  requireValid(p, plan);
  CHECK(double(plan.arenaSize) <= 1.25 * double(plan.lowerBound));
}
