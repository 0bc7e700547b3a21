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
// from 64k + 192 on: it may start its output 128 bytes after its input.
std::vector<AccessPhase> streamingAccess(int phases) {
  std::vector<AccessPhase> access;
  for (int k = 0; k < phases; ++k)
    access.push_back(streamingPhase(uint64_t(64 * k + 64), uint64_t(64 * k + 192), 1024));
  return access;
}

std::vector<AccessPhase> streaming(std::vector<std::pair<uint64_t, uint64_t>> phases,
                                   uint64_t inputBytes = 1024) {
  std::vector<AccessPhase> access;
  for (auto [writeEnd, readBegin] : phases)
    access.push_back(streamingPhase(writeEnd, readBegin, inputBytes));
  return access;
}

// An NCHW 1x1 convolution over `planes` input channel planes of `pixels`
// bytes that walks pixels across all planes: phase p writes pixel p of every
// output plane, then reads only pixels after p.
std::vector<AccessPhase> pixelWalk(uint64_t planes, uint64_t outPlanes, uint64_t pixels,
                                   uint64_t readBack = 0) {
  std::vector<AccessPhase> access;
  for (uint64_t p = 0; p < pixels; ++p) {
    AccessPhase phase;
    phase.writes.push_back({p, 1, pixels, outPlanes});
    uint64_t from = p + 1 > readBack ? p + 1 - readBack : 0;
    if (from < pixels)
      phase.readsFromHere.push_back({from, pixels - from, pixels, planes});
    access.push_back(phase);
  }
  return access;
}
} // namespace

TEST_CASE("maxSafeShift: the tightest phase, reads counted from that phase on") {
  CHECK(maxSafeShift({}) == 0);
  CHECK(maxSafeShift(streamingAccess(4)) == 128); // reads from 64k + 192, writes to 64k + 64
  // Reads are counted from each phase on, so a late phase reading low bytes
  // lowers the floor of every earlier phase.
  CHECK(maxSafeShift(streaming({{100, 0}, {200, 0}, {250, 0}})) == -250); // 0 - the last 250
  CHECK(maxSafeShift(streaming({{100, 0}, {200, 150}})) == -100);         // 0 - phase 0's 100
  // For streaming phases the bound is exact.
  for (int64_t shift : {-250, -100, 0, 100, 128})
    CHECK(overlapIsSafe(streamingAccess(4), shift) == (shift <= 128));
  CHECK_FALSE(overlapIsSafe({}, 0));
}

TEST_CASE("a shifted hint overlaps output and input by the shift, and the plan checks") {
  Problem p;
  // input [0,1], output [1,2], a scratch-free chain; 256 bytes each.
  p.buffers = {{0, 256, 64, 0, 1}, {1, 256, 64, 1, 2}};
  p.inPlace = {{1, 0, -128, streaming({{64, 0}, {128, 64}, {192, 128}, {256, 192}}, 256)}};
  CHECK(maxSafeShift(p.inPlace[0].access) == -64);
  // -128 is within the safe -64.
  Plan plan = planMemory(p);
  CHECK_FALSE(checkPlan(p, plan));
  CHECK(int64_t(plan.offsets[1]) - int64_t(plan.offsets[0]) == -128);
  CHECK(plan.arenaSize == 384); // 256 + 256 - 128, not 512
}

TEST_CASE("checkPlan rejects a shift beyond the access pattern's safe margin") {
  Problem p;
  p.buffers = {{0, 256, 64, 0, 1}, {1, 256, 64, 1, 2}};
  p.inPlace = {{1, 0, 128, streamingAccess(4)}};
  CHECK_FALSE(checkPlan(p, planOf({0, 128}, 384)));
  p.inPlace[0].access = streaming({{64, 0}}, 256);
  std::optional<std::string> error = checkPlan(p, planOf({0, 128}, 384));
  REQUIRE(error);
  CHECK(error->find("always-safe shift -64") != std::string::npos);
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
  p.inPlace = {{1, 0, 64, streaming({{64, 128}}, 256)}};
  std::optional<std::string> error = checkPlan(p, planOf({0, 64, 192}, 256));
  REQUIRE(error);
  CHECK(error->find("id 0") != std::string::npos);
  CHECK(error->find("id 2") != std::string::npos);
  CHECK_FALSE(checkPlan(p, planOf({0, 64, 256}, 288))); // C moved past A: 256 + 32
}

TEST_CASE("a shift that breaks alignment makes the hint invalid") {
  Problem p;
  p.buffers = {{0, 256, 64, 0, 1}, {1, 256, 64, 1, 2}};
  p.inPlace = {{1, 0, 32, streaming({{0, 1000}})}};
  CHECK_FALSE(honouredInPlaceHints(p)[0]);
  Plan plan = planMemory(p);
  CHECK(plan.arenaSize == 512); // no overlap: 256 + 256
}

TEST_CASE("overlapIsSafe: a pixel walk across channel planes may write over its input") {
  // 8 planes of 16 pixels in, 4 or 12 planes out: pixel p of output plane m
  // lands on pixel p of input plane m, read before it is written.
  CHECK(maxSafeShift(pixelWalk(8, 4, 16)) < 0); // The simple bound cannot see it...
  CHECK(overlapIsSafe(pixelWalk(8, 4, 16), 0)); // ...the exact test can.
  CHECK(overlapIsSafe(pixelWalk(8, 12, 16), 0));
  // Whole planes further on: output plane m on input plane m + 2, whose pixel p
  // is read before it is written too.
  CHECK(overlapIsSafe(pixelWalk(8, 4, 16), 32));
  // One byte later, pixel p of plane m lands on pixel p + 1, still unread.
  CHECK_FALSE(overlapIsSafe(pixelWalk(8, 4, 16), 1));
  // A kernel that reads one pixel back (a 3-wide window) must not start in place,
  // and no shift back helps: plane m's start reaches plane m - 1's unread tail.
  CHECK_FALSE(overlapIsSafe(pixelWalk(8, 8, 16, 1), 0));
  CHECK_FALSE(overlapIsSafe(pixelWalk(8, 8, 16, 1), -1));
  CHECK_FALSE(overlapIsSafe(pixelWalk(8, 8, 16, 1), -2));
  // With a single plane, starting one byte early is enough.
  CHECK(overlapIsSafe(pixelWalk(1, 1, 16, 1), -1));
  CHECK_FALSE(overlapIsSafe(pixelWalk(1, 1, 16, 1), 0));
}

TEST_CASE("checkPlan proves a shift-0 hint that carries an access pattern") {
  Problem p;
  // 8 planes x 64 bytes in, 4 planes out, in place.
  p.buffers = {{0, 512, 64, 0, 1}, {1, 256, 64, 1, 2}};
  p.inPlace = {{1, 0, 0, pixelWalk(8, 4, 64)}};
  Plan plan = planMemory(p);
  CHECK_FALSE(checkPlan(p, plan));
  CHECK(plan.arenaSize == 512); // the input's 512, the output inside it
  // The same claim for a kernel that reads a pixel back is refused.
  p.inPlace[0].access = pixelWalk(8, 4, 64, 1);
  std::optional<std::string> error = checkPlan(p, plan);
  REQUIRE(error);
  CHECK(error->find("would overwrite input bytes") != std::string::npos);
}
