//===- ToolInfo.h - Which tool and which model a report came from ----------===//
//
// Every JSON report names the bundlefit version that wrote it and the SHA-256
// of the model file it describes, so a report in a CI log can be traced to
// its tool and its exact model.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/support/Error.h"

#include <nlohmann/json.hpp>

#include <string>

namespace bundlefit {

/// "0.1.0" (CMake's PROJECT_VERSION).
std::string bundlefitVersion();

/// Adds "tool": {"name": "bundlefit", "version": ...} and, when `modelPath`
/// is not empty, "model_sha256" to a JSON report.
void stampReport(nlohmann::json &report, const std::string &modelPath);

/// An exit code's name in machine-readable reports (`fit --batch` lines, the
/// Python module's exceptions): "does_not_fit", "bad_input_file", ...
const char *exitCategoryName(ExitCode code);

} // namespace bundlefit
