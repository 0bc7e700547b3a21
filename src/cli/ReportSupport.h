//===- ReportSupport.h - What several commands' reports share --------------===//
//
// `plan --device` adds the cost model's per-layer time and the part's
// Flash/RAM bars to its report: the build `fit` would size (float, or int8
// with --load-profile), weights placed automatically, through the driver.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/device/Fit.h"
#include "bundlefit/driver/Pipeline.h"
#include "bundlefit/reports/HtmlReport.h"
#include "bundlefit/reports/LayerTable.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bundlefit {

class Graph;

struct DeviceFitReport {
  device::DeviceDatabase db;
  const device::Device *device = nullptr;
  device::ModelFootprint footprint;
  device::FitResult fit;
  LayerTiming timing;
  std::string code; ///< Where the code figure comes from (codeOrigin).
};

/// The model's build on `deviceId` (after adding `deviceFiles`): int8 when
/// `quant` has a profile, else float; sized as `fit` sizes it.
std::unique_ptr<DeviceFitReport> fitForReport(const ModelOptions &model, const QuantCliOptions &quant,
                                              const std::string &deviceId,
                                              const std::vector<std::string> &deviceFiles);

/// Adds the device's bars, verdict and summary line to an HTML report.
void addDeviceToHtml(const DeviceFitReport &report, HtmlReport &html);

/// Throws Error(CannotWrite) naming `path` unless a file can be created
/// there; lets a command fail before it writes anything else.
void checkWritable(const std::string &path);

/// Renders and writes the page atomically (Error(CannotWrite) on failure).
void writeHtmlReport(const std::string &path, const HtmlReport &report);

} // namespace bundlefit
