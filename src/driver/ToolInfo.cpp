//===- ToolInfo.cpp - Which tool and which model a report came from --------===//
#include "bundlefit/driver/ToolInfo.h"

#include "bundlefit/driver/Sha256.h"

#ifndef BUNDLEFIT_VERSION
#error "BUNDLEFIT_VERSION comes from src/driver/CMakeLists.txt"
#endif

namespace bundlefit {

std::string bundlefitVersion() { return BUNDLEFIT_VERSION; }

void stampReport(nlohmann::json &report, const std::string &modelPath) {
  if (!report.is_object())
    return;
  report["tool"] = {{"name", "bundlefit"}, {"version", bundlefitVersion()}};
  if (!modelPath.empty())
    report["model_sha256"] = sha256OfFile(modelPath);
}

const char *exitCategoryName(ExitCode code) {
  switch (code) {
  case ExitCode::Success:
    return "success";
  case ExitCode::Internal:
    return "internal";
  case ExitCode::Usage:
    return "usage";
  case ExitCode::DoesNotFit:
    return "does_not_fit";
  case ExitCode::BadInputFile:
    return "bad_input_file";
  case ExitCode::Unsupported:
    return "unsupported";
  case ExitCode::CannotWrite:
    return "cannot_write";
  case ExitCode::ToolMissing:
    return "tool_missing";
  case ExitCode::NotFoundInTime:
    return "not_found_in_time";
  }
  return "internal";
}

} // namespace bundlefit
