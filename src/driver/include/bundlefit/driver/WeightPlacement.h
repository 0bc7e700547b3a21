//===- WeightPlacement.h - Weights placed as `fit` places them -*- C++ -*-===//
//
// `fit --device PART` reports where each weight tensor goes (Flash, or a RAM
// region, hottest first); `compile --device PART --weights ...` builds exactly
// that: the plan's constant region is laid out in one segment per memory
// region (MemoryPlan::weightSegments), which code generation addresses with
// one base each and the bundle writer turns into per-region weight files, a
// linker-script fragment and a copy table (bundle/BundleWriter.h). The fit and
// the compile call the same function, so the placement reported is the one
// built.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/device/Fit.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <string>
#include <vector>

namespace bundlefit::driver {

/// The part a bundle is placed for and the fit request that places it.
struct PartPlacement {
  std::string device;                   ///< Part or board id.
  std::vector<std::string> deviceFiles; ///< --device-file.
  /// Set by callers that hold the device already (fit's sizer); it then
  /// outlives the build.
  const device::Device *resolved = nullptr;
  device::FitRequest request; ///< Weights policy, headroom, application sizes.
  /// `compile`: a placement whose RAM regions overflow is an error. `fit`
  /// builds it anyway and reports the verdict (and --verify-link links it).
  bool refuseOverflow = true;
};

/// --weights flash | ram | auto | FILE into `request`. FILE is a fit report
/// (`fit --json`, bundlefit.fit/1) or any JSON object with its
/// "weights_placement" list ([{"name": ..., "region": ...}]); the tensors it
/// does not name are read from Flash. Throws Error(Usage) for a bad value,
/// Error(BadInputFile) naming FILE when it cannot be read.
void setWeightsOption(device::FitRequest &request, const std::string &text);

/// Places the weights of `plan` on `device` as fitModel does for `request`
/// (the footprint of this very plan) and lays the constant region out in
/// segments accordingly. Returns the fit (code size not counted). With
/// `refuseOverflow`, throws Error(DoesNotFit) naming the part and region when
/// a RAM region overflows.
device::FitResult placeBundleWeights(MemoryPlan &plan, const device::Device &device,
                                     const device::Variant &variant,
                                     const device::FitRequest &request, bool refuseOverflow);

/// The fit's placement as the plan's segments: which region holds each
/// weight, the regions in the device's order, those copied to RAM.
void applyFitPlacement(MemoryPlan &plan, const device::Device &device, const device::FitResult &fit,
                       const std::string &source);

/// "FLASH 1,600,000 + DTCM 104,384 (copied at start-up)": a plan's segments.
std::string describeWeightSegments(const MemoryPlan &plan);

} // namespace bundlefit::driver
