//===- DeviceFileFuzzer.cpp - libFuzzer target: --device-file JSON ---------===//
//
// What `bundlefit fit --device-file my.json` does with a user's part: parse
// the JSON, validate it against device_db/schema/device.schema.json, build
// the Device, and then put it to use -- the footprint of LeNet for the float
// variant and the fit verdict -- because a document the schema accepts must
// not break the arithmetic behind the verdict either.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "bundlefit/device/CostModel.h"
#include "bundlefit/device/Device.h"
#include "bundlefit/device/Fit.h"
#include "bundlefit/device/Footprint.h"
#include "bundlefit/driver/VariantFootprint.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

using namespace bundlefit;
using namespace bundlefit::device;

namespace {

const nlohmann::json &schema() {
  static const nlohmann::json document = [] {
    std::ifstream in(BUNDLEFIT_DEVICE_SCHEMA);
    return nlohmann::json::parse(in);
  }();
  return document;
}

const Graph &lenet() {
  static const std::unique_ptr<Graph> graph = buildReferenceModel("lenet");
  return *graph;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string source = "fuzz-device.json";
  nlohmann::json document =
      nlohmann::json::parse(data, data + size, /*callback=*/nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded())
    return 0; // Not JSON: the file reader reports that before validation.
  fuzz::expectParsedOrError(source, [&] {
    validateDeviceDocument(schema(), document, source);
    Device device = parseDevice(document, source);
    Variant variant = parseVariant("float");
    if (!variantAvailable(device, variant))
      return;
    ModelFootprint footprint = estimateFootprint(lenet(), variant, device);
    FitRequest request;
    FitResult fit = fitModel(device, footprint, request);
    (void)fit;
    (void)suggestFlexRam(device, footprint, request);
  });
  return 0;
}
