//===- PickCheck.h - Which build of a model suits a part: pick and its report ===//
//
// What `bundlefit pick` computes, without its command line: every variant the
// part supports (or those asked for) sized by the driver for the part's core,
// the best buildable one that fits for the goal, the changes `fit` would
// suggest when none fits, the notes, and the bundlefit.pick/1 JSON report.
// `pick` and the Python module call it, so both give the same report.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/device/Fit.h"
#include "bundlefit/driver/FitCheck.h"
#include "bundlefit/driver/VariantBuild.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace bundlefit::driver {

/// What pick is asked, beyond the compilation (driver::Compilation::pick).
struct PickQuery {
  PartQuery part;                    ///< Its request's weights policy is ignored: pick varies it.
  std::vector<std::string> variants; ///< Empty: every variant the part has.
  std::string goal = "latency";      ///< latency | ram | flash
  bool allowEstimates = false;
  /// How errors name `variants`' option: the front end's (Python: variants).
  std::string variantsOption = "--variants";
};

/// The comparison and everything its report shows. Holds the device database
/// the results point into: neither copied nor moved.
struct PickCheck {
  device::DeviceDatabase db;
  const device::Device *device = nullptr;
  device::PickRequest pickRequest;
  device::FitRequest request;
  std::unique_ptr<BuildSizer> sizer;
  device::PickResult pick;
  std::vector<device::Suggestion> suggestions; ///< When nothing fits.
  std::vector<std::string> notes;

  PickCheck() = default;
  PickCheck(const PickCheck &) = delete;
  PickCheck &operator=(const PickCheck &) = delete;

  /// 0 a build fits, 3 (ExitCode::DoesNotFit) none does.
  int exitCode() const;
};

/// Sizes the builds of `build` that `query` asks for and compares them.
/// Throws bundlefit::Error naming the model, part or option at fault.
std::unique_ptr<PickCheck> checkPick(const BuildOptions &build, const PickQuery &query);

/// The bundlefit.pick/1 report of `check` for `modelPath`, not yet stamped
/// with the tool and model hash (ToolInfo.h: stampReport).
nlohmann::json pickReportJson(const PickCheck &check, const std::string &modelPath);

} // namespace bundlefit::driver
