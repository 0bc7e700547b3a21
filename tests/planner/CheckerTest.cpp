//===- CheckerTest.cpp - checkPlan catches every kind of broken plan ------===//
#include "TestUtil.h"

#include <algorithm>
#include <random>

using namespace bundlefit::planner;

namespace {
// Two buffers live together on step 1, one scratch buffer alone on step 3.
Problem twoLiveOneLater() {
  Problem p;
  p.buffers = {{10, 100, 1, 0, 1}, {11, 50, 1, 1, 2}, {12, 200, 1, 3, 3}};
  return p;
}

Plan planOf(std::vector<uint64_t> offsets, uint64_t arena) {
  Plan plan;
  plan.offsets = std::move(offsets);
  plan.arenaSize = arena;
  return plan;
}
} // namespace

TEST_CASE("checkPlan accepts a sound plan") {
  Problem p = twoLiveOneLater();
  CHECK_FALSE(checkPlan(p, planOf({0, 100, 0}, 200)));
}

TEST_CASE("checkPlan catches two live buffers sharing bytes and names them") {
  Problem p = twoLiveOneLater();
  std::optional<std::string> error = checkPlan(p, planOf({0, 99, 0}, 200));
  REQUIRE(error);
  CHECK(error->find("id 10") != std::string::npos);
  CHECK(error->find("id 11") != std::string::npos);
  CHECK(error->find("step 1") != std::string::npos);
}

TEST_CASE("checkPlan lets buffers that are never live together share bytes") {
  Problem p = twoLiveOneLater();
  CHECK_FALSE(checkPlan(p, planOf({0, 100, 0}, 200)));
  // Buffer 12 (step 3) over both others: fine. Buffer 11 over 10: not.
  CHECK(checkPlan(p, planOf({0, 0, 0}, 200)));
}

TEST_CASE("checkPlan catches an overlap hidden behind a lower neighbour") {
  // A long buffer at 0..1000 and a small one inside it, inserted later.
  Problem p;
  p.buffers = {{0, 1000, 1, 0, 5}, {1, 10, 1, 2, 3}, {2, 10, 1, 2, 3}};
  CHECK(checkPlan(p, planOf({0, 1000, 500}, 1010)));
}

TEST_CASE("checkPlan finds every overlap a comparison of all pairs finds") {
  // The sweep compares a new buffer only with its neighbours by offset
  // among the live ones, and walks further down only across in-place pairs:
  // random plans, most of them broken, some with in-place pairs sharing
  // their step, against the definition.
  std::mt19937 random(37);
  auto below = [&random](uint32_t n) { return uint32_t(random() % n); };
  int broken = 0, sound = 0;
  for (int round = 0; round < 20000; ++round) {
    Problem p;
    Plan plan = planOf({}, 128); // above every offset + size
    int n = 2 + int(below(10));
    for (int i = 0; i < n; ++i) {
      int first = int(below(6));
      p.buffers.push_back({i, below(4) * below(12), 1, first, first + int(below(4))});
      plan.offsets.push_back(below(48));
    }
    for (int k = 0; k < n; ++k) { // Hints between buffers that meet on one step, most honoured.
      int in = int(below(uint32_t(n))), out = int(below(uint32_t(n)));
      if (in != out && p.buffers[in].last == p.buffers[out].first) {
        p.inPlace.push_back({out, in, 0, {}});
        if (below(4) != 0)
          plan.offsets[out] = plan.offsets[in];
      }
    }
    bool overlap = false;
    for (int a = 0; a < n; ++a)
      for (int b = a + 1; b < n; ++b) {
        const Buffer &x = p.buffers[a], &y = p.buffers[b];
        bool inPlace =
            plan.offsets[a] == plan.offsets[b] &&
            std::any_of(p.inPlace.begin(), p.inPlace.end(), [&](const InPlaceHint &h) {
              return std::min(h.input, h.output) == a && std::max(h.input, h.output) == b;
            });
        overlap |= x.size > 0 && y.size > 0 && x.first <= y.last && y.first <= x.last &&
                   plan.offsets[a] < plan.offsets[b] + y.size &&
                   plan.offsets[b] < plan.offsets[a] + x.size && !inPlace;
      }
    std::optional<std::string> error = checkPlan(p, plan);
    CAPTURE(round);
    CAPTURE(error.value_or("no error"));
    REQUIRE(bool(error) == overlap);
    (overlap ? broken : sound)++;
  }
  CHECK(broken > 5000);
  CHECK(sound > 5000);
}

TEST_CASE("checkPlan catches a misaligned offset") {
  Problem p;
  p.buffers = {{7, 64, 64, 0, 0}, {8, 64, 64, 0, 0}};
  CHECK_FALSE(checkPlan(p, planOf({0, 64}, 128)));
  std::optional<std::string> error = checkPlan(p, planOf({0, 65}, 129));
  REQUIRE(error);
  CHECK(error->find("aligned") != std::string::npos);
  CHECK(error->find("id 8") != std::string::npos);
}

TEST_CASE("checkPlan catches an arena that is too small") {
  Problem p = twoLiveOneLater();
  std::optional<std::string> error = checkPlan(p, planOf({0, 100, 0}, 149));
  REQUIRE(error);
  CHECK(error->find("arena") != std::string::npos);
}

TEST_CASE("checkPlan catches a missing offset") {
  Problem p = twoLiveOneLater();
  CHECK(checkPlan(p, planOf({0, 100}, 200)));
}

TEST_CASE("checkPlan allows an in-place pair on its shared step only") {
  Problem p;
  p.buffers = {{0, 64, 1, 0, 2}, {1, 64, 1, 2, 4}};
  p.inPlace = {{1, 0, 0, {}}};
  CHECK_FALSE(checkPlan(p, planOf({0, 0}, 64)));
  // Without the hint the same plan is an overlap on step 2.
  Problem noHint = p;
  noHint.inPlace.clear();
  CHECK(checkPlan(noHint, planOf({0, 0}, 64)));
  // A hint whose input outlives the output's first step is not valid.
  Problem tooLong = p;
  tooLong.buffers[0].last = 3;
  CHECK(checkPlan(tooLong, planOf({0, 0}, 64)));
  // Partially overlapping offsets are never allowed.
  CHECK(checkPlan(p, planOf({0, 32}, 96)));
}

TEST_CASE("checkPlan ignores zero-size buffers") {
  Problem p;
  p.buffers = {{0, 0, 1, 0, 3}, {1, 16, 1, 0, 3}};
  CHECK_FALSE(checkPlan(p, planOf({0, 0}, 16)));
}

TEST_CASE("checkProblem catches malformed input") {
  Problem p = twoLiveOneLater();
  CHECK_FALSE(checkProblem(p));
  Problem backwards = p;
  backwards.buffers[1].last = 0;
  std::optional<std::string> error = checkProblem(backwards);
  REQUIRE(error);
  CHECK(error->find("id 11") != std::string::npos);
  Problem badHint = p;
  badHint.inPlace = {{1, 7, 0, {}}};
  CHECK(checkProblem(badHint));
  badHint.inPlace = {{1, 1, 0, {}}};
  CHECK(checkProblem(badHint));
  // A hint that is well formed but not usable is fine: it is ignored.
  Problem unusable = p;
  unusable.inPlace = {{2, 0, 0, {}}};
  CHECK_FALSE(checkProblem(unusable));
}

TEST_CASE("checkProblem rejects sizes whose sums would wrap") {
  Problem p;
  const uint64_t big = (uint64_t(1) << 63) - 1;
  p.buffers = {{0, big, 1, 0, 1}, {1, big, 1, 0, 1}};
  auto error = checkProblem(p);
  REQUIRE(error);
  CHECK(error->find("2^62") != std::string::npos);
  // Each alone is too large as well; a quarter of the range is not.
  p.buffers = {{0, uint64_t(1) << 60, 64, 0, 1}, {1, uint64_t(1) << 60, 64, 0, 1}};
  CHECK_FALSE(checkProblem(p));
  p.buffers.push_back({2, 1, uint64_t(1) << 63, 0, 0});
  CHECK(checkProblem(p));
}
