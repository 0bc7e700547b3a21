//===- LowerFused.h - Kernel calls of the --memory-opt execution forms -----===//
//
// ConvPool nodes and depthwise Convs the plan put in place (output at the
// input's offset) need kernels with a workspace. This file decides the call
// as plain data; LowerGraph turns it into LLVM IR, so the geometry lives here
// and LowerGraph only gains one dispatch line.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "LowerInt8.h"

#include "bundlefit/ops/FusedOps.h"
#include "bundlefit/ops/InPlaceOps.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <optional>
#include <vector>

namespace bundlefit {

/// The call for `node` when it runs in a --memory-opt form, else nullopt
/// (the ordinary lowering applies). Throws Unsupported for a ConvPool the
/// kernels cannot run (non-float).
std::optional<KernelCall> describeMemoryOptCall(const Node &node, const MemoryPlan &plan);

/// An int8 depthwise Conv the plan put in place calls bf_depthwise_inplace_s8
/// (the same arguments plus its one-plane scratch); other calls are kept.
void rewriteInt8InPlaceCalls(const Node &node, const MemoryPlan &plan,
                             std::vector<KernelCall> &calls);

} // namespace bundlefit
