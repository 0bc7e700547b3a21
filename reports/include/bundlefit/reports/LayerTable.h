//===- LayerTable.h - Per-layer rows: where the work and the memory go ----===//
//
// One row per scheduled node: op, output shape, MACs, weight bytes, the
// activation bytes live while it runs and, when a device was chosen, the cost
// model's predicted time. `plan`, `compile` and `fit` print it; the HTML
// report draws the same rows.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/reports/MemoryReport.h"

#include <map>
#include <string>

namespace bundlefit {

/// Predicted time per node (by node name) on one device; a node without an
/// entry (a view the cost model does not charge) shows "-".
struct LayerTiming {
  std::string device;
  std::string build; ///< "float, weights auto": what was timed.
  std::map<std::string, double> msByNode;
  double totalMs = 0;
};

/// "Conv+Relu", "Flatten (view)".
std::string layerOpLabel(const Node &node);

/// "0.123 ms" (two decimals above 1 ms, three below).
std::string formatMs(double ms);

/// The aligned per-layer table with a total row; the time column appears only
/// when `timing` is given.
std::string renderLayerTable(const MemoryPlan &plan, const LayerTiming *timing);

} // namespace bundlefit
