//===- LowerBoundTest.cpp - The live-peak bound on hand examples ----------===//
#include "TestUtil.h"

using namespace bundlefit::planner;

TEST_CASE("lower bound of nothing is zero") { CHECK(computeLowerBound({}) == 0); }

TEST_CASE("lower bound is the heaviest step") {
  Problem p;
  // Step 0: 100. Step 1: 100 + 50. Step 2: 50 + 30. Step 3: 200 (scratch).
  p.buffers = {{0, 100, 1, 0, 1}, {1, 50, 1, 1, 2}, {2, 30, 1, 2, 2}, {3, 200, 1, 3, 3}};
  CHECK(computeLowerBound(p) == 200);
  p.buffers[3].size = 149;
  CHECK(computeLowerBound(p) == 150); // step 1: 100 + 50
}

TEST_CASE("lower bound counts aligned sizes") {
  Problem p;
  p.buffers = {{0, 10, 64, 0, 0}, {1, 65, 64, 0, 0}};
  CHECK(computeLowerBound(p) == 64 + 128); // 10 -> 64, 65 -> 128
}

TEST_CASE("lower bound: LeNet's first two layers give Glow's 57,600") {
  // conv1 output 20x24x24 floats, pool1 output 20x12x12 floats.
  Problem p;
  p.buffers = {{0, 46080, 64, 0, 1}, {1, 11520, 64, 1, 2}};
  CHECK(computeLowerBound(p) == 57600);
}

TEST_CASE("lower bound counts an in-place pair once on its shared step") {
  Problem p;
  p.buffers = {{0, 100, 1, 0, 1}, {1, 80, 1, 1, 2}, {2, 10, 1, 1, 1}};
  CHECK(computeLowerBound(p) == 190); // step 1: 100 + 80 + 10
  p.inPlace = {{1, 0, 0, {}}};
  CHECK(computeLowerBound(p) == 110); // max(100, 80) + 10
  // An invalid hint (input outlives the output's birth) is ignored.
  p.buffers[0].last = 2;
  CHECK(computeLowerBound(p) == 190); // as without the hint
}

TEST_CASE("lower bound of an in-place chain through a one-step buffer") {
  Problem p;
  p.buffers = {{0, 100, 1, 0, 1}, {1, 300, 1, 1, 1}, {2, 50, 1, 1, 3}};
  p.inPlace = {{1, 0, 0, {}}, {2, 1, 0, {}}};
  CHECK(computeLowerBound(p) == 300); // step 1: the chain shares one block, max(100, 300, 50)
}
