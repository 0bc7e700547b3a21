//===- DeviceReports.h - Fit and pick results as report rows --------------===//
//
// Turns what the device database computed (device_db: FitResult, PickResult)
// into the report's own rows, so the HTML and text renderers stay free of
// device logic.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/device/Fit.h"
#include "bundlefit/reports/HtmlReport.h"
#include "bundlefit/reports/LayerTable.h"

#include <vector>

namespace bundlefit {

/// Per-node predicted times of a fit (the cost model's layers by name).
LayerTiming layerTimingOf(const device::Device &device, const device::FitResult &fit);

/// One bar per memory region of the part, split into what it holds.
std::vector<HtmlRegionBar> regionBarsOf(const device::FitResult &fit);

/// The rows `pick` compares.
std::vector<HtmlVariantRow> variantRowsOf(const device::PickResult &pick);

} // namespace bundlefit
