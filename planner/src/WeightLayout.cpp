//===- WeightLayout.cpp - Constants in first-use order, padded ------------===//
#include "bundlefit/planner/WeightLayout.h"
#include "bundlefit/planner/Problem.h"

#include <algorithm>
#include <numeric>

namespace bundlefit::planner {

int firstRegionWithRoom(const Constant &constant, uint64_t paddedSize,
                        const std::vector<Region> &regions, const std::vector<RegionUsage> &usage) {
  for (size_t r = 0; r < regions.size(); ++r) {
    uint64_t capacity = regions[r].capacity;
    if (capacity == 0 || usage[r].used + paddedSize <= capacity)
      return int(r);
  }
  return -1;
}

WeightLayout layoutWeights(const std::vector<Constant> &constants, uint64_t alignment) {
  return layoutWeights(constants, {Region{"weights", 0}}, firstRegionWithRoom, alignment);
}

WeightLayout layoutWeights(const std::vector<Constant> &constants,
                           const std::vector<Region> &regions, const RegionPolicy &policy,
                           uint64_t alignment) {
  WeightLayout layout;
  layout.placements.resize(constants.size());
  std::vector<RegionUsage> usage(regions.size());
  std::vector<int> order(constants.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return constants[a].firstUse < constants[b].firstUse; });
  for (int c : order) {
    uint64_t padded = alignUp(constants[c].size, std::max<uint64_t>(alignment, 1));
    int r = policy(constants[c], padded, regions, usage);
    if (r < 0 || r >= int(regions.size())) {
      layout.error = "constant " + std::to_string(constants[c].id) + " (" + std::to_string(padded) +
                     " bytes) fits in no region";
      return layout;
    }
    layout.placements[c] = {r, usage[r].used};
    usage[r].used += padded;
  }
  for (const RegionUsage &u : usage) {
    layout.regionSizes.push_back(u.used);
    layout.total += u.used;
  }
  return layout;
}

} // namespace bundlefit::planner
