//===- MemoryOptTestSupport.h - Inputs and comparisons of the memory-opt tests ===//
//
// Both memory-opt test files feed random tensors and compare a level's
// outputs with level 0's the same way; the helpers live here once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Tensor.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace bundlefit::test {

/// n floats uniform in [-1, 1], reproducible from `seed`.
inline std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// max |a - b| / max |b| over all outputs of `b` (same shapes and types).
inline double maxRelativeDiff(const std::map<std::string, Tensor> &a,
                              const std::map<std::string, Tensor> &b) {
  double diff = 0, magnitude = 0;
  for (const auto &[name, reference] : b) {
    const Tensor &t = a.at(name);
    REQUIRE(t.type.sameShapeAndType(reference.type));
    for (int64_t i = 0; i < reference.numElements(); ++i) {
      diff = std::max(diff, std::fabs(t.at(i) - reference.at(i)));
      magnitude = std::max(magnitude, std::fabs(reference.at(i)));
    }
  }
  REQUIRE(magnitude > 0);
  return diff / magnitude;
}

} // namespace bundlefit::test
