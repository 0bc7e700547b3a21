//===- PeakLayers.h - Which layers hold the arena's peak, and why -*- C++ -*-===//
//
// --memory-opt runs layers in place or patch by patch; the arena is then set
// by the layers it could not touch. `bundlefit plan -v` names them (issue 17:
// "-v names each layer that stayed at the bound and why"), so a user sees
// which operator or shape keeps a model's RAM where it is.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/schedule/MemoryPlan.h"

#include <string>
#include <vector>

namespace bundlefit {

struct PeakLayer {
  const Node *node = nullptr;
  uint64_t liveBytes = 0; ///< As computeLayerRows counts them: the peak.
  std::string reason;     ///< Why --memory-opt `level` left it there.
};

/// The scheduled layers whose live bytes equal the largest of any step, in
/// schedule order, each with the reason memory-opt `level` did not lower it.
std::vector<PeakLayer> explainPeakLayers(const MemoryPlan &plan, int level);

/// One line a layer: "peak layer NAME (OP, live N B): REASON".
std::string peakLayerLine(const PeakLayer &layer);

} // namespace bundlefit
