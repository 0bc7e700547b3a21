//===- WeightLayout.h - Where constant weights go ---------------*- C++ -*-===//
//
// Constants are laid out in the order the schedule first reads them (good for
// caches and for streaming from Flash), each padded to the alignment (64, as
// Glow bundles do). Several memory regions can be given, with a policy that
// picks the region of each constant; the default policy fills the regions in
// the order given. A device planner can pass its own policy later.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_WEIGHTLAYOUT_H
#define BUNDLEFIT_PLANNER_WEIGHTLAYOUT_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace bundlefit::planner {

struct Constant {
  int id = 0;        ///< The caller's name for it; used in messages.
  uint64_t size = 0; ///< Bytes.
  int firstUse = 0;  ///< Step of its first reader; ties keep input order.
};

struct Region {
  std::string name;
  uint64_t capacity = 0; ///< Bytes; 0 means unlimited.
};

/// How full each region is while the layout is being built.
struct RegionUsage {
  uint64_t used = 0;
};

/// Picks a region index for the constant (padded size given), or -1 if none
/// can take it. Called in first-use order.
using RegionPolicy =
    std::function<int(const Constant &constant, uint64_t paddedSize,
                      const std::vector<Region> &regions, const std::vector<RegionUsage> &usage)>;

/// The first region with room left (first fit, in the order given).
int firstRegionWithRoom(const Constant &constant, uint64_t paddedSize,
                        const std::vector<Region> &regions, const std::vector<RegionUsage> &usage);

struct WeightPlacement {
  int region = 0;
  uint64_t offset = 0; ///< Within its region; a multiple of the alignment.
};

struct WeightLayout {
  std::vector<WeightPlacement> placements; ///< Same order as the constants given.
  std::vector<uint64_t> regionSizes;       ///< Bytes used per region (padded).
  uint64_t total = 0;                      ///< Sum of regionSizes.
  std::string error;                       ///< Empty on success; else which constant did not fit.
  explicit operator bool() const { return error.empty(); }
};

/// One unlimited region.
WeightLayout layoutWeights(const std::vector<Constant> &constants, uint64_t alignment = 64);

WeightLayout layoutWeights(const std::vector<Constant> &constants,
                           const std::vector<Region> &regions,
                           const RegionPolicy &policy = firstRegionWithRoom,
                           uint64_t alignment = 64);

} // namespace bundlefit::planner

#endif // BUNDLEFIT_PLANNER_WEIGHTLAYOUT_H
