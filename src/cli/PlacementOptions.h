//===- PlacementOptions.h - compile --device PART --weights ... ------------===//
//
// The options that place a bundle's weights as `fit` places them on a part
// (bundlefit/driver/WeightPlacement.h): --device, --device-file, --weights,
// the headroom options and --static-bytes, the same as fit's so that the two
// commands given the same options report and build one placement.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Command.h"
#include "FitReportSupport.h"

#include "bundlefit/driver/WeightPlacement.h"

#include <optional>
#include <string>
#include <vector>

namespace bundlefit {

struct PlacementCliOptions {
  std::string device;
  std::vector<std::string> deviceFiles;
  std::string weights; ///< Empty: auto with --device.
  HeadroomOptions headroom;
  uint64_t staticBytes = 0;
};

void addPlacementOptions(CLI::App &command, PlacementCliOptions &options);

/// The placement asked for, or none without --device (Error(Usage) for
/// --weights or headroom without --device).
std::optional<driver::PartPlacement> partPlacementOf(const PlacementCliOptions &options);

} // namespace bundlefit
