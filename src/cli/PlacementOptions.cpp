//===- PlacementOptions.cpp - compile --device PART --weights ... ----------===//
#include "PlacementOptions.h"

#include "bundlefit/support/Error.h"

namespace bundlefit {

void addPlacementOptions(CLI::App &command, PlacementCliOptions &options) {
  command.add_option("--device", options.device,
                     "Place the weights as `bundlefit fit --device PART` does (per-region weight "
                     "files, linker-script fragment, copy table); the target defaults to the "
                     "part's core");
  command.add_option("--device-file", options.deviceFiles,
                     "Add a part from a JSON file (repeatable)");
  command.add_option("--weights", options.weights,
                     "With --device: flash, ram, auto (default) or a placement FILE (fit --json's "
                     "report)");
  command.add_option("--static-bytes", options.staticBytes,
                     "With --device: initialized application data fit counts (as fit's)");
  addHeadroomOptions(command, options.headroom);
}

std::optional<driver::PartPlacement> partPlacementOf(const PlacementCliOptions &options) {
  const HeadroomOptions &h = options.headroom;
  const bool placementOption = !options.weights.empty() || !options.deviceFiles.empty() ||
                               !h.reserveRam.empty() || !h.reserveFlash.empty() || h.appRam >= 0 ||
                               h.appFlash >= 0 || options.staticBytes;
  if (options.device.empty()) {
    if (placementOption)
      throw Error(ExitCode::Usage, "--weights, --device-file, --static-bytes and the headroom "
                                   "options place the weights for a part: add --device PART");
    return std::nullopt;
  }
  driver::PartPlacement placement;
  placement.device = options.device;
  placement.deviceFiles = options.deviceFiles;
  placement.request = fitRequestOf(options.headroom);
  placement.request.extraStaticBytes = options.staticBytes;
  driver::setWeightsOption(placement.request, options.weights.empty() ? "auto" : options.weights);
  return placement;
}

} // namespace bundlefit
