//===- MemoryReport.h - The memory report (JSON and text) ------------------===//
//
// JSON schema `bundlefit.memory/1` (reports/schemas/memory.schema.json):
// stable keys that CI pipelines diff and gate on. The text form is the same
// information as aligned tables for a person.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

struct LayerTiming; // LayerTable.h

/// One row per scheduled node: what a person reads to see where memory goes.
struct LayerRow {
  int step = 0;
  const Node *node = nullptr;
  uint64_t macs = 0;
  uint64_t weightBytes = 0; ///< Constant-region bytes this node reads (unaligned).
  /// Arena bytes in use while it runs: its live tensors and workspace, each
  /// aligned, bytes shared in place counted once.
  uint64_t liveBytes = 0;
};

std::vector<LayerRow> computeLayerRows(const MemoryPlan &plan);

/// With `timing`, each layer gains "predicted_ms" and the report a
/// "predicted" object (device, total ms).
nlohmann::json memoryReportJson(const Graph &graph, const MemoryPlan &plan,
                                const std::string &networkName,
                                const LayerTiming *timing = nullptr);

/// "4 activation buffers + 2 kernel scratch": what the arena holds, in the
/// same words in the text report and on the HTML timeline.
std::string arenaContentsLabel(const MemoryPlan &plan);

/// With `timing` (a device was chosen), the layer table gains a predicted
/// time column.
std::string memoryReportText(const Graph &graph, const MemoryPlan &plan,
                             const std::string &networkName, const LayerTiming *timing = nullptr);

} // namespace bundlefit
