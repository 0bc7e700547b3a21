//===- NetworkLike.cpp - Random network-like allocation problems ----------===//
#include "bundlefit/planner/formats/NetworkLike.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace bundlefit::planner::formats {

Problem networkLikeProblem(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> logSize(6.0, 20.0);
  std::uniform_int_distribution<int> percent(0, 99);
  auto life = [&](int longest) { return std::uniform_int_distribution<int>(0, longest)(rng); };
  Problem p;
  p.buffers.reserve(size_t(std::max(n, 0)));
  for (int i = 0; i < n; ++i) {
    int kind = percent(rng);
    int span = kind < 1 ? life(4096) : kind < 6 ? life(256) : life(8);
    uint64_t size = uint64_t(std::exp2(logSize(rng)));
    p.buffers.push_back({i, size, 64, i, std::min(i + span, n - 1)});
  }
  return p;
}

} // namespace bundlefit::planner::formats
