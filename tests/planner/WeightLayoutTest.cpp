//===- WeightLayoutTest.cpp - Constants padded, in first-use order --------===//
#include "bundlefit/planner/WeightLayout.h"

#include <doctest/doctest.h>

using namespace bundlefit::planner;

namespace {
std::vector<Constant> sample() { return {{0, 100, 3}, {1, 64, 0}, {2, 1, 1}, {3, 130, 1}}; }
} // namespace

TEST_CASE("weights are laid out in first-use order, each padded to 64") {
  WeightLayout layout = layoutWeights(sample());
  REQUIRE(layout);
  // Order: 1 (use 0), 2 and 3 (use 1, input order), 0 (use 3).
  CHECK(layout.placements[1].offset == 0);
  CHECK(layout.placements[2].offset == 64);
  CHECK(layout.placements[3].offset == 128);
  CHECK(layout.placements[0].offset == 320); // 64 + 64 + 130 -> 192
  CHECK(layout.total == 448);                // 320 + 100 -> 128
  for (const WeightPlacement &w : layout.placements) {
    CHECK(w.offset % 64 == 0);
    CHECK(w.region == 0);
  }
}

TEST_CASE("weights split across regions, first region with room first") {
  std::vector<Region> regions = {{"dtcm", 200}, {"ocram", 0}};
  WeightLayout layout = layoutWeights(sample(), regions);
  REQUIRE(layout);
  CHECK(layout.placements[1].region == 0);
  CHECK(layout.placements[2].region == 0);
  CHECK(layout.placements[3].region == 1);
  CHECK(layout.placements[3].offset == 0);
  CHECK(layout.placements[0].region == 1);
  CHECK(layout.placements[0].offset == 192);                    // after 130 -> 192
  CHECK(layout.regionSizes == std::vector<uint64_t>{128, 320}); // 64 + 64; 192 + 128
  CHECK(layout.total == 448);
}

TEST_CASE("a custom policy decides the region") {
  std::vector<Region> regions = {{"ram", 0}, {"flash", 0}};
  RegionPolicy bigToFlash = [](const Constant &, uint64_t padded, const std::vector<Region> &,
                               const std::vector<RegionUsage> &) { return padded >= 128 ? 1 : 0; };
  WeightLayout layout = layoutWeights(sample(), regions, bigToFlash);
  REQUIRE(layout);
  CHECK(layout.regionSizes == std::vector<uint64_t>{128, 320}); // 64 + 64 in ram; 192 + 128
}

TEST_CASE("a constant that fits nowhere is an error naming it") {
  WeightLayout layout = layoutWeights({{42, 130, 0}}, {{"tiny", 128}});
  CHECK_FALSE(layout);
  CHECK(layout.error.find("42") != std::string::npos);
}

TEST_CASE("other alignments are honoured") {
  WeightLayout layout = layoutWeights({{0, 3, 0}, {1, 5, 1}}, 16);
  REQUIRE(layout);
  CHECK(layout.placements[1].offset == 16);
  CHECK(layout.total == 32);
}
