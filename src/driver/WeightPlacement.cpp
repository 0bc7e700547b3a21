//===- WeightPlacement.cpp - Weights placed as `fit` places them -----------===//
#include "bundlefit/driver/WeightPlacement.h"

#include "bundlefit/device/Footprint.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/Format.h"
#include "bundlefit/support/InputFile.h"

#include <nlohmann/json.hpp>

#include <filesystem>

namespace bundlefit::driver {

using namespace bundlefit::device;

void setWeightsOption(FitRequest &request, const std::string &text) {
  if (text == "flash" || text == "ram" || text == "auto") {
    request.weights = parseWeightsPolicy(text);
    return;
  }
  std::error_code ec;
  if (!std::filesystem::exists(text, ec))
    throw Error(ExitCode::Usage, "--weights " + text +
                                     ": expected flash, ram, auto or a placement file (fit "
                                     "--json's report), and no such file can be read");
  // A regular file of known length (support/InputFile.h): never a FIFO's wait.
  nlohmann::json document =
      nlohmann::json::parse(readInputFile(text, "weights placement (--weights)"), nullptr, false);
  if (document.is_discarded() || !document.is_object() || !document.contains("weights_placement") ||
      !document["weights_placement"].is_array())
    throw Error(ExitCode::BadInputFile,
                text + ": not a weights placement (expected a JSON object with a "
                       "\"weights_placement\" list, as `bundlefit fit --json` prints)");
  request.weights = WeightsPolicy::Given;
  request.givenFrom = text;
  request.givenRegions.clear();
  size_t index = 0;
  for (const nlohmann::json &entry : document["weights_placement"]) {
    const std::string where = text + ": weights_placement[" + std::to_string(index++) + "]";
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string() ||
        !entry.contains("region") || !entry["region"].is_string())
      throw Error(ExitCode::BadInputFile, where + ": expected {\"name\": ..., \"region\": ...}");
    if (!request.givenRegions.emplace(entry["name"], entry["region"]).second)
      throw Error(ExitCode::BadInputFile,
                  where + ": weight '" + entry["name"].get<std::string>() + "' is placed twice");
  }
}

void applyFitPlacement(MemoryPlan &plan, const Device &device, const FitResult &fit,
                       const std::string &source) {
  if (fit.weightRegion.size() != plan.constants.size())
    fatalInternal("the fit placed " + std::to_string(fit.weightRegion.size()) +
                  " weight tensors, the plan has " + std::to_string(plan.constants.size()));
  std::vector<std::string> regionOf, order, copied;
  for (const MemoryRegionInfo *region : fit.weightRegion)
    regionOf.push_back(region ? region->name : device.homes.weightsFlash);
  for (const MemoryRegionInfo &region : device.memory) {
    order.push_back(region.name);
    if (!region.isFlash())
      copied.push_back(region.name);
  }
  splitWeightSegments(plan, regionOf, order, copied);
  plan.weightImageRegion = device.homes.weightsFlash;
  plan.weightPlacementSource = source;
}

FitResult placeBundleWeights(MemoryPlan &plan, const Device &device, const Variant &variant,
                             const FitRequest &request, bool refuseOverflow) {
  ModelFootprint footprint = footprintOfPlan(plan, variant, device);
  FitRequest placing = request;
  placing.codeBytes = 0; // Code lives in Flash: it moves no weight.
  FitResult fit = fitModel(device, footprint, placing);
  for (const RegionUse &use : fit.regions)
    if (refuseOverflow && use.over() && !use.region->isFlash())
      throw Error(ExitCode::DoesNotFit,
                  "the weights placement (" + std::string(weightsPolicyName(request.weights)) +
                      ") does not fit " + device.id + ": " + use.region->name + " needs " +
                      withThousands(use.used) + " B of " + withThousands(use.region->size) +
                      " (bundlefit fit shows the whole verdict)");
  applyFitPlacement(plan, device, fit,
                    device.id + ", weights " +
                        (request.weights == WeightsPolicy::Given
                             ? "from " + request.givenFrom
                             : std::string(weightsPolicyName(request.weights))));
  return fit;
}

std::string describeWeightSegments(const MemoryPlan &plan) {
  std::string text;
  for (const WeightSegment &segment : plan.weightSegments)
    text += (text.empty() ? "" : " + ") + segment.region + " " + withThousands(segment.size) +
            (segment.copiedToRam ? " (copied at start-up)" : "");
  return text;
}

} // namespace bundlefit::driver
