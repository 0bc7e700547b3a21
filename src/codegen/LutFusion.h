//===- LutFusion.h - int8 activation tables fused into conv stores ---------===//
//
// An int8 table activation (Sigmoid, HardSwish, SiLU...: bf_lut_s8, src/ops/
// lut) whose only input is an int8 Conv's output, read by nothing else, runs
// in the conv's stores: the plain C conv kernels take the table as their
// `lut` argument (bundlefit_kernels_int8.h) and the activation's own pass is
// dropped. The graph and the memory plan are unchanged (the plan already put
// the activation's output on the conv's: the fusion requires it), so arenas
// are the same with and without it, and so are the numbers: v becomes
// table[v + 128] at the store instead of in a second pass.
//
// Fused only where the table in the stores costs less than its own pass:
// 1x1 convs (the pointwise kernels) and 3x3 depthwise convs of the row fast
// path (LutFusion.cpp's paysAtStore has the measured figures). Not fused:
// other convs (the general depthwise path lost), CMSIS-NN convs
// (--use-cmsis: arm_convolve_wrapper_s8 and its depthwise twin take no
// table, so the activation keeps its own pass), the asymmetric-weight
// kernel, conv + pool kernels, and the steps of a patch stage (their tiles
// run the unfused calls).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/ops/KernelCall.h"

#include <vector>

namespace bundlefit {

/// The table activation `conv`'s int8 calls apply at their stores, or
/// nullptr. The one decision: the activation's lowering asks the same
/// question of its producer (lutFusedIntoProducer).
const Node *fusedLutConsumer(const Graph &graph, const PlanView &plan, const Node &conv);

/// Whether `activation`'s table runs in its producer's stores (its own call
/// is then dropped).
bool lutFusedIntoProducer(const Graph &graph, const PlanView &plan, const Node &activation);

/// `convCalls` (the int8 Conv's, before the in-place rewrite) with
/// `activation`'s table as their `lut` argument.
void applyFusedLut(const Node &conv, const Node &activation, std::vector<KernelCall> &convCalls);

} // namespace bundlefit
