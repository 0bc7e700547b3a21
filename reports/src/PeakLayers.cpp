#include "bundlefit/reports/PeakLayers.h"

#include "bundlefit/ops/PatchStage.h"
#include "bundlefit/reports/MemoryReport.h"
#include "bundlefit/reports/TextTable.h"

#include <algorithm>

namespace bundlefit {

namespace {

/// The first non-patchable layer from `step` walking by `dir`, with its
/// reason; "the graph's start/end" when the walk runs off the schedule.
std::string boundary(const MemoryPlan &plan, int step, int dir) {
  for (int j = step + dir; j >= 0 && j < int(plan.schedule.size()); j += dir) {
    std::string why = whyNotPatchable(*plan.schedule[j]);
    if (!why.empty())
      return plan.schedule[j]->name + ": " + why;
  }
  return dir < 0 ? "the graph's start" : "the graph's end";
}

std::string reasonFor(const MemoryPlan &plan, int step, int level) {
  const Node &node = *plan.schedule[step];
  if (node.opType == kPatchStageOp)
    return "patch stage: its tile arena with its inputs and output";
  const std::string why = whyNotPatchable(node);
  if (level < 1)
    return "--memory-opt 0 runs every layer whole (Glow's layout)" +
           (why.empty() ? std::string() : "; " + why);
  if (!why.empty())
    return "not in a patch stage: " + why;
  if (level < 2)
    return "patchable; --memory-opt 2 may run it patch by patch";
  // Patchable but left whole: the stages that could cover it are bounded
  // by the layers around it, and none of them lowered the estimated peak.
  return "patchable, but no stage over it lowered the peak within the recompute budget; "
         "its run of patchable layers is bounded by " +
         boundary(plan, step, -1) + " and by " + boundary(plan, step, +1);
}

} // namespace

std::vector<PeakLayer> explainPeakLayers(const MemoryPlan &plan, int level) {
  const std::vector<LayerRow> rows = computeLayerRows(plan);
  uint64_t peak = 0;
  for (const LayerRow &row : rows)
    peak = std::max(peak, row.liveBytes);
  std::vector<PeakLayer> layers;
  for (const LayerRow &row : rows)
    if (row.node && peak && row.liveBytes == peak)
      layers.push_back({row.node, row.liveBytes, reasonFor(plan, row.step, level)});
  return layers;
}

std::string peakLayerLine(const PeakLayer &layer) {
  return "peak layer " + layer.node->name + " (" + layer.node->opType + ", live " +
         withThousands(layer.liveBytes) + " B): " + layer.reason;
}

} // namespace bundlefit
