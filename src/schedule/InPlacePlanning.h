//===- InPlacePlanning.h - Outputs written over their dying inputs -*- C++ -*-===//
//
// Internal to the schedule library: MemoryPlan.cpp asks which operators may
// write over their dying input (InPlaceOps.h says which kernels can), adds
// the chosen hints and workspaces to the planner problem, and plans.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/planner/Problem.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <map>
#include <utility>
#include <vector>

namespace bundlefit {

/// An operator that may write its output over its dying input (a
/// convolution in place, or a pool overlapping it), with the kernel's access
/// pattern (in the hint) and the workspace it then needs.
struct InPlaceOp {
  const Node *node = nullptr;
  planner::InPlaceHint hint;
  uint64_t scratch = 0;
};

/// Every operator of `plan.schedule` whose kernel may write over its input
/// (InPlaceOps.h) when that input dies on its step: the hint (output and
/// input buffers of `problem`, shift, access pattern) and its workspace.
/// Shifts are multiples of plan.bufferAlignment.
std::vector<InPlaceOp> inPlaceCandidates(const MemoryPlan &plan, const planner::Problem &problem,
                                         const std::map<const Value *, int> &bufferOf);

/// `base` plus the chosen in-place hints and one workspace buffer, live on
/// its node's step only, per node that needs one (fused nodes' in
/// `scratchBytes`, the chosen operators' own), aligned to `alignment`
/// (PlanOptions::bufferAlignment). `scratchOf` gets node -> buffer.
planner::Problem withInPlaceOps(const planner::Problem &base, const std::vector<InPlaceOp> &chosen,
                                std::map<const Node *, uint64_t> scratchBytes,
                                const std::vector<const Node *> &schedule, uint64_t alignment,
                                std::vector<std::pair<const Node *, int>> *scratchOf);

/// The candidates worth taking (see the definition for the rule).
/// `dropDepthwise`: also leave out the depthwise convs whose in-place chain
/// makes the greedy plan larger (the caller has the final planner judge).
std::vector<InPlaceOp> chooseInPlaceOps(const planner::Problem &base,
                                        const std::vector<InPlaceOp> &candidates,
                                        const std::map<const Node *, uint64_t> &scratchBytes,
                                        const std::vector<const Node *> &schedule,
                                        uint64_t alignment, bool dropDepthwise);

} // namespace bundlefit
