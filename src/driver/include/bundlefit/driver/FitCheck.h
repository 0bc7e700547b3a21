//===- FitCheck.h - Does a model fit a part: the verdict and its report ----===//
//
// What `bundlefit fit` computes, without its command line: the build sized
// for the part (VariantBuild.h), the AN13001 fit, the changes that would make
// it fit, the FlexRAM split, the notes, and the bundlefit.fit/1 JSON report.
// `fit`, `fit --batch` and the Python module call it, so the three give the
// same report for the same model and options.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/device/Fit.h"
#include "bundlefit/driver/FitSuggestions.h"
#include "bundlefit/driver/VariantBuild.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bundlefit::driver {

/// The part a build is checked on and what is asked of it there: what `fit`
/// and `pick` are both asked (PickCheck.h), filled once by each front end.
struct PartQuery {
  std::string device;
  std::vector<std::string> deviceFiles; ///< Extra parts (--device-file).
  /// Headroom, static bytes, a given code size; fit also reads the weights
  /// policy (pick varies it).
  device::FitRequest request;
  /// What would make it fit, when it does not (FitSuggestions.h).
  SuggestOptions suggest;
};

/// What fit is asked, beyond the compilation (driver::Compilation::fit).
struct FitQuery {
  PartQuery part;
  std::string variant; ///< Empty: int8 with a profile, else float.
  /// How errors name `variant`'s option: the front end's (Python: variant).
  std::string variantOption = "--variant";
};

/// The verdict and everything its report shows. Holds the device database
/// the results point into: neither copied nor moved.
struct FitCheck {
  device::DeviceDatabase db;
  const device::Device *device = nullptr;
  device::Variant variant;
  device::FitRequest request;
  std::unique_ptr<BuildSizer> sizer;
  const VariantBuild *build = nullptr; ///< Owned by `sizer`.
  device::ModelFootprint footprint;
  device::FitResult fit;
  std::vector<device::Suggestion> suggestions;
  std::optional<device::FlexRamSplit> flexram;
  std::vector<std::string> notes;
  /// The capacity the arena was planned for: the room of the fastest RAM
  /// region its lower bound allows (BuildOptions::arenaRoomsFor), and what the
  /// search proved. 0 and "" for builds that are not compiled (HiFi4).
  uint64_t arenaCapacity = 0;
  std::string arenaProof;

  FitCheck() = default;
  FitCheck(const FitCheck &) = delete;
  FitCheck &operator=(const FitCheck &) = delete;

  /// 0 fits, 3 (ExitCode::DoesNotFit) does not.
  int exitCode() const;
};

/// The part's database with `deviceFiles` added; a database file left out
/// (DeviceDatabase::warnings) is a warning on stderr, once per process.
device::DeviceDatabase loadDeviceDatabase(const std::vector<std::string> &deviceFiles);

/// The variant `fit` sizes: `name`, or int8 with a profile, else float; an
/// int16x8 model's integer builds named int16x8 (int8 names are taken for
/// them). Throws Error(Usage) for a float build of a pre-quantized model, and
/// for an int16x8 name on a model that is not int16x8; the message names
/// `option`, the one the user gave `name` with (FitQuery::variantOption,
/// PickQuery::variantsOption).
device::Variant fitVariant(const std::string &name, const QuantCliOptions &quant,
                           const std::string &option = "--variant");

/// The fit/pick note for a CMSIS-NN variant's nodes left on bundlefit's
/// kernels (ModelFootprint::portable): how many, and the first few with why.
std::string portableNote(const std::string &variant, const std::vector<std::string> &portable);

/// Sizes the build of `build` that `query` asks for and fits it. Throws
/// bundlefit::Error naming the model, part or option at fault.
std::unique_ptr<FitCheck> checkFit(const BuildOptions &build, const FitQuery &query);

/// Where the code figure of a build comes from (the report's "code").
nlohmann::json codeJson(const VariantBuild &build, const device::FitRequest &request);

/// The changes that would make a model fit, as reports list them.
nlohmann::json suggestionsJson(const std::vector<device::Suggestion> &suggestions);

/// The bundlefit.fit/1 report of `check` for `modelPath`, not yet stamped
/// with the tool and model hash (ToolInfo.h: stampReport).
nlohmann::json fitReportJson(const FitCheck &check, const std::string &modelPath);

} // namespace bundlefit::driver
