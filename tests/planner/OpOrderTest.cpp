//===- OpOrderTest.cpp - Operator ordering finds lower peaks --------------===//
#include "bundlefit/planner/OpOrder.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>

using namespace bundlefit::planner;

namespace {
// Two branches from x that join in c:
//   x -> a1 (100 bytes) -> a2 (1 byte) -> c
//   x -> b1 (100 bytes) -> b2 (1 byte) -> c
// Tensors: 0 x, 1 A1, 2 A2, 3 B1, 4 B2, 5 out. Ops: 0 a1, 1 a2, 2 b1, 3 b2, 4 c.
OpGraph twoBranches() {
  OpGraph g;
  g.tensorSizes = {1, 100, 1, 100, 1, 1};
  g.ops = {{{0}, {1}, 0}, {{1}, {2}, 0}, {{0}, {3}, 0}, {{3}, {4}, 0}, {{2, 4}, {5}, 0}};
  g.keepAlive = {5};
  return g;
}

// A random DAG: op k reads one or two tensors written earlier (or the input).
OpGraph randomGraph(int numOps, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<uint64_t> size(1, 1000);
  OpGraph g;
  g.tensorSizes.push_back(size(rng)); // Graph input, tensor 0.
  for (int k = 0; k < numOps; ++k) {
    OpNode op;
    int reads = 1 + int(rng() % 2);
    for (int r = 0; r < reads; ++r)
      op.inputs.push_back(int(rng() % g.tensorSizes.size()));
    op.outputs.push_back(int(g.tensorSizes.size()));
    g.tensorSizes.push_back(size(rng));
    op.scratch = rng() % 3 == 0 ? size(rng) : 0;
    g.ops.push_back(op);
  }
  g.keepAlive = {int(g.tensorSizes.size()) - 1};
  return g;
}

std::vector<int> identity(size_t n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// Tries every topological order (depth-first over ready ops).
void enumerateOrders(const OpGraph &g, std::vector<int> &order, std::vector<bool> &done,
                     uint64_t &best) {
  if (order.size() == g.ops.size()) {
    best = std::min(best, computePeak(g, order));
    return;
  }
  for (size_t o = 0; o < g.ops.size(); ++o) {
    if (done[o])
      continue;
    bool ready = true;
    for (int t : g.ops[o].inputs)
      for (size_t p = 0; p < g.ops.size(); ++p)
        for (int out : g.ops[p].outputs)
          if (out == t && !done[p])
            ready = false;
    if (!ready)
      continue;
    done[o] = true;
    order.push_back(int(o));
    enumerateOrders(g, order, done, best);
    order.pop_back();
    done[o] = false;
  }
}

uint64_t bruteForceBestPeak(const OpGraph &g) {
  std::vector<int> order;
  std::vector<bool> done(g.ops.size(), false);
  uint64_t best = UINT64_MAX;
  enumerateOrders(g, order, done, best);
  return best;
}
} // namespace

TEST_CASE("computePeak follows tensors from producer to last consumer") {
  OpGraph g = twoBranches();
  // a1, b1, a2, b2, c: both big tensors are live while a2 runs.
  std::vector<uint64_t> live = computeLiveBytes(g, {0, 2, 1, 3, 4});
  CHECK(live == std::vector<uint64_t>{101, 201, 201, 102, 3});
  CHECK(computePeak(g, {0, 2, 1, 3, 4}) == 201);
  // One branch at a time: x + A1 (101), then A1 + A2 (101), then x + A2 + B1 (102).
  CHECK(computePeak(g, {0, 1, 2, 3, 4}) == 102);
}

TEST_CASE("computePeak counts scratch only while its op runs") {
  OpGraph g = twoBranches();
  g.ops[1].scratch = 500;
  CHECK(computeLiveBytes(g, {0, 1, 2, 3, 4})[1] == 102 + 500); // x, A1, A2 and a2's scratch
  CHECK(computePeak(g, {0, 1, 2, 3, 4}) == 602);
}

TEST_CASE("optimiseOrder finishes one branch before starting the other") {
  OpGraph g = twoBranches();
  std::vector<int> given = {0, 2, 1, 3, 4};
  OrderResult r = optimiseOrder(g, given);
  CHECK(isTopologicalOrder(g, r.order));
  CHECK(r.peak == 102); // the one-branch-at-a-time peak above
  CHECK(computePeak(g, r.order) == r.peak);
  CHECK(r.provedOptimal);
  CHECK(r.method == "exact-dp");
}

TEST_CASE("optimiseOrder keeps the given order when it is already optimal") {
  OpGraph g = twoBranches();
  OrderResult r = optimiseOrder(g, {0, 1, 2, 3, 4});
  CHECK(r.order == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(r.peak == 102);
  CHECK(r.method == "given");
}

TEST_CASE("optimiseOrder is optimal on small random DAGs") {
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    OpGraph g = randomGraph(7, seed);
    std::vector<int> given = identity(g.ops.size());
    OrderResult r = optimiseOrder(g, given);
    CAPTURE(seed);
    REQUIRE(isTopologicalOrder(g, r.order));
    CHECK(computePeak(g, r.order) == r.peak);
    CHECK(r.peak == bruteForceBestPeak(g));
    CHECK(r.peak <= computePeak(g, given));
  }
}

TEST_CASE("optimiseOrder as a narrow beam is still valid and never worse") {
  for (uint32_t seed = 50; seed < 60; ++seed) {
    OpGraph g = randomGraph(40, seed);
    std::vector<int> given = identity(g.ops.size());
    OrderOptions narrow;
    narrow.maxStates = 3;
    OrderResult r = optimiseOrder(g, given, narrow);
    CAPTURE(seed);
    REQUIRE(isTopologicalOrder(g, r.order));
    CHECK(computePeak(g, r.order) == r.peak);
    CHECK(r.peak <= computePeak(g, given));
    if (r.method == "beam")
      CHECK_FALSE(r.provedOptimal);
  }
}

TEST_CASE("isTopologicalOrder rejects bad orders") {
  OpGraph g = twoBranches();
  CHECK_FALSE(isTopologicalOrder(g, {1, 0, 2, 3, 4})); // a2 before a1
  CHECK_FALSE(isTopologicalOrder(g, {0, 1, 2, 3}));    // missing c
  CHECK_FALSE(isTopologicalOrder(g, {0, 0, 2, 3, 4})); // repeated
}

namespace {
// k Relu branches of one input, all into one Concat (issue 36: 250 to 2,000
// branches took 1.4 to 339 s; the work grew as k^2.5).
OpGraph fanIntoConcat(int k) {
  OpGraph g;
  g.tensorSizes.push_back(4096); // the input
  OpNode concat;
  for (int b = 0; b < k; ++b) {
    g.tensorSizes.push_back(4096);
    g.ops.push_back({{0}, {b + 1}, 0});
    concat.inputs.push_back(b + 1);
  }
  g.tensorSizes.push_back(4096 * uint64_t(k));
  concat.outputs = {k + 1};
  g.ops.push_back(concat);
  g.keepAlive = {k + 1};
  return g;
}
} // namespace

TEST_CASE("optimiseOrder keeps to its work limit on a wide graph") {
  OpGraph g = fanIntoConcat(5000);
  std::vector<int> given = identity(g.ops.size());
  OrderOptions options;
  OrderResult r = optimiseOrder(g, given, options);
  REQUIRE(isTopologicalOrder(g, r.order));
  CHECK(r.peak <= computePeak(g, given));
  // Each layer keeps what its share pays for, at least one state: the
  // whole search stays within the limit (one state per layer costs about
  // 5,000 x 5,000 here, under it).
  CHECK(r.work <= options.maxWork);
  MESSAGE(r.method << ", work " << r.work);
}

TEST_CASE("optimiseOrder keeps the given order when one state per layer is over the limit") {
  OpGraph g = fanIntoConcat(3000);
  std::vector<int> given = identity(g.ops.size());
  OrderOptions options;
  options.maxWork = 1'000'000; // One state per layer costs about 9 million.
  OrderResult r = optimiseOrder(g, given, options);
  CHECK(r.method == "given: too large to reorder");
  CHECK(r.order == given);
  CHECK(r.work <= 2 * options.maxWork + 10'000); // Stopped within a layer of twice it.
  CHECK_FALSE(r.provedOptimal);
}
