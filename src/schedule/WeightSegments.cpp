//===- WeightSegments.cpp - The constant region split over memory regions --===//
//
// A part's memory map may put some weights in Flash and others in DTCM or
// ITCM (fit's placement). The bundle carries that placement by laying the
// constant region out region by region: each region's weights are one
// contiguous, 64-aligned segment of weights.bin, so the split entry point
// takes one base per segment and Glow's entry keeps working on the whole file.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/schedule/MemoryPlan.h"

#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <map>

namespace bundlefit {

size_t MemoryPlan::segmentAt(uint64_t offset) const {
  for (size_t s = 0; s < weightSegments.size(); ++s)
    if (offset < weightSegments[s].offset + weightSegments[s].size)
      return s;
  return weightSegments.empty() ? 0 : weightSegments.size() - 1;
}

void splitWeightSegments(MemoryPlan &plan, const std::vector<std::string> &regionOf,
                         const std::vector<std::string> &regionOrder,
                         const std::vector<std::string> &copied) {
  if (regionOf.size() != plan.constants.size())
    fatalInternal("weight placement names " + std::to_string(regionOf.size()) + " regions for " +
                  std::to_string(plan.constants.size()) + " weight tensors");
  for (size_t i = 0; i < regionOf.size(); ++i)
    if (std::find(regionOrder.begin(), regionOrder.end(), regionOf[i]) == regionOrder.end())
      throw Error(ExitCode::Usage, "weight '" + plan.constants[i]->name +
                                       "' is placed in region '" + regionOf[i] +
                                       "', which the part does not have");
  // Old offset of each constant -> new offset; every placement in the
  // constant region moves with the constant it lies in.
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> moved; // old start -> (end, new start)
  std::vector<WeightSegment> segments;
  uint64_t offset = 0;
  for (const std::string &region : regionOrder) {
    WeightSegment segment;
    segment.region = region;
    segment.offset = offset;
    segment.copiedToRam = std::find(copied.begin(), copied.end(), region) != copied.end();
    for (size_t i = 0; i < plan.constants.size(); ++i) {
      if (regionOf[i] != region)
        continue;
      const Placement &old = plan.placementOf(plan.constants[i]);
      const uint64_t padded = alignUp(old.size, MemoryPlan::kAlignment);
      moved[old.offset] = {old.offset + padded, offset};
      segment.constants.push_back(plan.constants[i]);
      offset += padded;
    }
    segment.size = offset - segment.offset;
    if (!segment.constants.empty())
      segments.push_back(std::move(segment));
  }
  if (offset != plan.constantSize)
    fatalInternal("weight segments hold " + std::to_string(offset) + " bytes, CONSTANT is " +
                  std::to_string(plan.constantSize));
  for (auto &[value, placement] : plan.placements) {
    if (placement.region != MemoryRegion::ConstantWeight)
      continue;
    auto it = moved.upper_bound(placement.offset);
    if (it == moved.begin() || placement.offset >= std::prev(it)->second.first)
      fatalInternal("value '" + value->name + "' lies in no weight tensor");
    --it;
    placement.offset = it->second.second + (placement.offset - it->first);
  }
  // plan.constants keeps its first-use order: the fit's weight i is still
  // plan.constants[i].
  plan.weightSegments = std::move(segments);
}

} // namespace bundlefit
