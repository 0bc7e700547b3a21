//===- OverlapTest.cpp - Shifted in-place hints (partial overlap) ----------===//
#include "TestUtil.h"

using namespace bundlefit::planner;

namespace {
Plan planOf(std::vector<uint64_t> offsets, uint64_t arena) {
  Plan plan;
  plan.offsets = std::move(offsets);
  plan.arenaSize = arena;
  return plan;
}

// A kernel that writes output bytes [0, 64k+64) while it reads input bytes
// from 64k + 192 on: it may start its output 128 bytes before its input.
std::vector<AccessPhase> streamingAccess(int phases) {
  std::vector<AccessPhase> access;
  for (int k = 0; k < phases; ++k)
    access.push_back({uint64_t(64 * k + 64), uint64_t(64 * k + 192)});
  return access;
}
} // namespace

TEST_CASE("maxSafeShift: the tightest phase, reads counted from that phase on") {
  CHECK(maxSafeShift({}) == 0);
  CHECK(maxSafeShift(streamingAccess(4)) == 128);
  // A late phase reading low input bytes pulls every earlier phase down.
  CHECK(maxSafeShift({{100, 500}, {200, 300}, {250, 0}}) == -250);
  CHECK(maxSafeShift({{100, 0}, {200, 150}}) == -100);
}

TEST_CASE("a shifted hint overlaps output and input by the shift, and the plan checks") {
  Problem p;
  // input [0,1], output [1,2], a scratch-free chain; 256 bytes each.
  p.buffers = {{0, 256, 64, 0, 1}, {1, 256, 64, 1, 2}};
  p.inPlace = {{1, 0, -128, {{64, 0}, {128, 64}, {192, 128}, {256, 192}}}};
  CHECK(maxSafeShift(p.inPlace[0].access) == -64);
  // -128 is within the safe -64.
  Plan plan = planMemory(p);
  CHECK_FALSE(checkPlan(p, plan));
  CHECK(int64_t(plan.offsets[1]) - int64_t(plan.offsets[0]) == -128);
  CHECK(plan.arenaSize == 384); // not 512
}

TEST_CASE("checkPlan rejects a shift beyond the access pattern's safe margin") {
  Problem p;
  p.buffers = {{0, 256, 64, 0, 1}, {1, 256, 64, 1, 2}};
  p.inPlace = {{1, 0, 128, streamingAccess(4)}};
  CHECK_FALSE(checkPlan(p, planOf({0, 128}, 384)));
  p.inPlace[0].access = {{64, 0}};
  std::optional<std::string> error = checkPlan(p, planOf({0, 128}, 384));
  REQUIRE(error);
  CHECK(error->find("safe shift -64") != std::string::npos);
  p.inPlace[0].access.clear();
  error = checkPlan(p, planOf({0, 128}, 384));
  REQUIRE(error);
  CHECK(error->find("no access pattern") != std::string::npos);
}

TEST_CASE("checkPlan sees a buffer overlapping the far member of a shifted pair") {
  Problem p;
  // A [0,256) and B [64,128) share step 1 by a shift of 64; C on step 1 at
  // [192,224) lies above B's end but inside A.
  p.buffers = {{0, 256, 64, 0, 1}, {1, 64, 64, 1, 2}, {2, 32, 32, 1, 1}};
  p.inPlace = {{1, 0, 64, {{64, 128}}}};
  std::optional<std::string> error = checkPlan(p, planOf({0, 64, 192}, 256));
  REQUIRE(error);
  CHECK(error->find("id 0") != std::string::npos);
  CHECK(error->find("id 2") != std::string::npos);
  CHECK_FALSE(checkPlan(p, planOf({0, 64, 256}, 288)));
}

TEST_CASE("a shift that breaks alignment makes the hint invalid") {
  Problem p;
  p.buffers = {{0, 256, 64, 0, 1}, {1, 256, 64, 1, 2}};
  p.inPlace = {{1, 0, 32, {{0, 1000}}}};
  CHECK_FALSE(honouredInPlaceHints(p)[0]);
  Plan plan = planMemory(p);
  CHECK(plan.arenaSize == 512);
}
