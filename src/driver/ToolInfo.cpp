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

} // namespace bundlefit
