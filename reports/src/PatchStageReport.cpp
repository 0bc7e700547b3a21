#include "bundlefit/reports/PatchStageReport.h"

#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/PatchStage.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/support/CheckedMath.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace bundlefit {

namespace {

uint64_t aligned(uint64_t bytes) { return alignUp(bytes, 64); }

/// Bytes of `node`'s data inputs (not constants) and outputs, each aligned.
uint64_t wholeLayerBytes(const Node &node) {
  uint64_t bytes = 0;
  std::set<const Value *> seen;
  for (const Value *in : node.inputs)
    if (in && !in->isConstant() && seen.insert(in).second)
      bytes += aligned(in->type.bytes());
  for (const Value *out : node.outputs)
    if (out && seen.insert(out).second)
      bytes += aligned(out->type.bytes());
  return bytes;
}

std::string percent(uint64_t part, uint64_t whole) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", whole ? 100.0 * double(part) / double(whole) : 0.0);
  return text;
}

/// "1.27" (two decimals), for `plan -v`'s estimated time.
std::string timeRatio(double time, uint64_t base) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", base ? time / double(base) : 0.0);
  return text;
}

} // namespace

std::vector<PatchStageSummary> summarizePatchStages(const MemoryPlan &plan) {
  uint64_t modelMacs = 0;
  for (const Node *node : plan.schedule)
    modelMacs += countNodeMacs(*node);
  std::vector<PatchStageSummary> stages;
  for (const Node *node : plan.schedule) {
    if (node->opType != kPatchStageOp)
      continue;
    std::shared_ptr<const PatchBody> body = patchBodyOf(*node);
    std::unique_ptr<PatchProgram> program = buildPatchProgram(*node);
    PatchStageSummary s;
    s.stage = node;
    s.layers = body->nodes.size();
    s.gridH = node->attrs.getInt("grid_h", 1);
    s.gridW = node->attrs.getInt("grid_w", 1);
    s.arenaBytes = program->arenaBytes;
    s.tileMacs = program->macs;
    s.modelMacs = modelMacs;
    for (const auto &layer : body->nodes) {
      s.layerMacs += countNodeMacs(*layer);
      s.wholeBytes = std::max(s.wholeBytes, wholeLayerBytes(*layer));
    }
    s.stageBytes = aligned(s.arenaBytes) + wholeLayerBytes(*node);
    s.narrowestTileColumns = program->narrowestConvColumns;
    s.narrowTiles = program->narrowConvTiles;
    s.timeMacs = patchTimeMacs(*program, s.gridH, s.gridW);
    stages.push_back(s);
  }
  return stages;
}

std::string patchStageLine(const PatchStageSummary &s) {
  const uint64_t extra = s.tileMacs > s.layerMacs ? s.tileMacs - s.layerMacs : 0;
  std::string line =
      "patch stage " + s.stage->name + ": " + std::to_string(s.layers) + " layers in " +
      std::to_string(s.gridH) + "x" + std::to_string(s.gridW) + " tiles (" +
      (s.gridW == 1 ? "full-width row bands" : "narrowest conv tile ") +
      (s.gridW == 1 ? "" : std::to_string(s.narrowestTileColumns) + " columns") + "); saves " +
      withThousands(s.wholeBytes > s.stageBytes ? s.wholeBytes - s.stageBytes : 0) +
      " B (its largest layer run whole holds " + withThousands(s.wholeBytes) + " B, the stage " +
      withThousands(s.stageBytes) + " B with a " + withThousands(s.arenaBytes) +
      " B tile arena); costs " + withThousands(extra) + " extra MACs recomputing halos (+" +
      percent(extra, s.layerMacs) + " of its layers', +" + percent(extra, s.modelMacs) +
      " of the model's); estimated time " + timeRatio(s.timeMacs, s.layerMacs) +
      "x its layers' run whole (its MACs, times 1 + " + timeRatio(kColumnSplitTimeFactor, 1) +
      " log2 of its " + std::to_string(s.gridW) +
      " column band(s), for the cropped, shorter rows, + " + timeRatio(kRowSplitTimeFactor, 1) +
      " log2 of its " + std::to_string(s.gridH) + " row band(s), for the calls)";
  if (s.narrowTiles)
    line += "; tiles of " + std::to_string(s.narrowestTileColumns) + " columns (< " +
            std::to_string(kWideTileColumns) +
            ") miss the 16-pixel convolution tiles of AVX-512 hosts";
  if (s.narrowTiles && s.narrowestTileColumns < kFlatRunColumns)
    line += " (below " + std::to_string(kFlatRunColumns) +
            " columns, 64-bit hosts run them as flat runs across rows, computing and dropping "
            "the halo columns: more time than their MACs)";
  return line;
}

std::string patchBudgetLine(const std::vector<PatchStageSummary> &stages, double budget) {
  if (stages.empty())
    return "";
  uint64_t extra = 0;
  for (const PatchStageSummary &s : stages)
    extra += s.tileMacs > s.layerMacs ? s.tileMacs - s.layerMacs : 0;
  // The model's MACs as formPatchStage counted them: before the stages.
  const uint64_t whole = stages.front().modelMacs > extra ? stages.front().modelMacs - extra : 0;
  char bound[32], ratio[32];
  std::snprintf(bound, sizeof bound, "%g", budget);
  std::snprintf(ratio, sizeof ratio, "%g", kPastBudgetTimeRatio);
  const bool past = double(extra) > budget * double(whole);
  return "patch stages: " + withThousands(extra) + " extra MACs recomputed (+" +
         percent(extra, whole) + " of the model's MACs run whole); --patch-recompute-budget " +
         bound + " bounds those of the grids that set the peak" +
         (past ? std::string("; past it, each stage that recomputes more than its grid within "
                             "the budget runs a grid of no higher peak estimated under ") +
                     ratio + "x that grid's time (patchTimeMacs)"
               : " (within it)");
}

} // namespace bundlefit
