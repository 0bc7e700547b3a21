//===- FitReportSupport.h - What `fit` and `pick` share --------------------===//
//
// The part options (--device, --device-file, --static-bytes, the headroom
// options --reserve-ram, --reserve-flash, --app-ram, --app-flash, and
// --no-suggestions, --suggest-parts) and the driver's PartQuery they make,
// where a build's code figure comes from, and the list of changes that would
// make a model fit.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Command.h"

#include "bundlefit/device/Fit.h"
#include "bundlefit/driver/FitCheck.h"
#include "bundlefit/driver/FitSuggestions.h"
#include "bundlefit/driver/VariantBuild.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace bundlefit {

struct HeadroomOptions {
  std::string reserveRam, reserveFlash; ///< BYTES, BYTESK or PCT%.
  int64_t appRam = -1, appFlash = -1;   ///< -1: the part's SDK baseline.
};

void addHeadroomOptions(CLI::App &command, HeadroomOptions &options);
/// A FitRequest with the headroom applied (Error(Usage) naming the option).
device::FitRequest fitRequestOf(const HeadroomOptions &options);

/// The options `fit` and `pick` share: the part and what is asked of it.
struct PartOptions {
  std::string device;
  std::vector<std::string> deviceFiles;
  uint64_t staticBytes = 0;
  HeadroomOptions headroom;
  driver::SuggestOptions suggest;
};

/// Adds --device (required), --device-file, --static-bytes, the headroom and
/// the suggestion options.
void addPartOptions(CLI::App &command, PartOptions &options);
/// The driver's query for them (Error(Usage) naming a headroom option it
/// cannot read); the weights policy is left at auto.
driver::PartQuery partQueryOf(const PartOptions &options);

/// "compiled for cortex-m7 (hard float): object 12,345 + runtime 1,024 +
/// CMSIS-NN 4,096" or why it is an estimate (the JSON: driver/FitCheck.h).
std::string codeOrigin(const driver::VariantBuild &build, const device::FitRequest &request);

/// --no-suggestions and --suggest-parts (FitSuggestions.h).
void addSuggestOptions(CLI::App &command, driver::SuggestOptions &options);

/// "changes:" and one line per suggestion (or that none was found, or that
/// none was looked for: --no-suggestions).
std::string renderSuggestions(const std::vector<device::Suggestion> &suggestions, bool lookedFor);

} // namespace bundlefit
