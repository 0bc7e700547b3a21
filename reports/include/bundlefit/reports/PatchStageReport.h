//===- PatchStageReport.h - What each patch stage saves and costs -*- C++ -*-===//
//
// A patch stage (--memory-opt 2) trades time for bytes: its tiles recompute
// the halos their windows overlap, and tiles narrower than the wide
// convolution tiles run the narrow ones. `bundlefit plan -v` says both sides
// per stage, so a user weighing level 2 against level 1 sees the price.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/schedule/MemoryPlan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

struct PatchStageSummary {
  const Node *stage = nullptr;
  size_t layers = 0;
  int64_t gridH = 1, gridW = 1;
  /// Columns of the narrowest convolution output of any tile; whether some
  /// are narrower than kWideTileColumns where the layer is not.
  int64_t narrowestTileColumns = 0;
  bool narrowTiles = false;
  uint64_t arenaBytes = 0;
  /// Its largest layer run whole: that layer's data inputs and output at full
  /// size (64-aligned); and the stage's arena + data inputs + output.
  uint64_t wholeBytes = 0, stageBytes = 0;
  uint64_t layerMacs = 0, tileMacs = 0; ///< The layers' own MACs; the tiles'.
  uint64_t modelMacs = 0;               ///< Of the whole scheduled graph.
  double timeMacs = 0;                  ///< patchTimeMacs of its program.
};

/// One summary per PatchStage of the plan's schedule, in schedule order.
std::vector<PatchStageSummary> summarizePatchStages(const MemoryPlan &plan);

/// "patch stage NAME: 5 layers in 4x1 tiles (... columns); saves N B (...);
/// costs N extra MACs (+x% of its layers, +y% of the model's); estimated
/// time N.NNx its layers' run whole (...)[; tiles under 16 columns: ...]".
std::string patchStageLine(const PatchStageSummary &summary);

/// "patch stages: N extra MACs recomputed (+x% of the model's MACs run
/// whole); --patch-recompute-budget F bounds those of the grids that set the
/// peak (...)": what the option promised and whether a stage passed it (only
/// for a grid estimated under kPastBudgetTimeRatio of the time, formPatchStage). Empty without
/// stages.
std::string patchBudgetLine(const std::vector<PatchStageSummary> &stages, double budget);

} // namespace bundlefit
