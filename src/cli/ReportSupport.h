//===- ReportSupport.h - What several commands' reports share --------------===//
//
// `plan --device` and `compile --device` add the cost model's per-layer time
// and the part's Flash/RAM bars to their reports: the float build, weights
// placed automatically, as `fit --device` would report it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/device/Fit.h"
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
};

/// The float build of `graph` on `deviceId` (after adding `deviceFiles`).
std::unique_ptr<DeviceFitReport> fitForReport(const Graph &graph, const std::string &deviceId,
                                              const std::vector<std::string> &deviceFiles,
                                              std::optional<uint64_t> codeBytes = std::nullopt);

/// Adds the device's bars, verdict and summary line to an HTML report.
void addDeviceToHtml(const DeviceFitReport &report, HtmlReport &html);

/// Throws Error(CannotWrite) naming `path` unless a file can be created
/// there; lets a command fail before it writes anything else.
void checkWritable(const std::string &path);

/// Renders and writes the page atomically (Error(CannotWrite) on failure).
void writeHtmlReport(const std::string &path, const HtmlReport &report);

} // namespace bundlefit
