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
// The families say which calls qualify (KernelCall::lut): the activation's
// call is marked a lookup with its table's position, and a producer's call
// marks where it takes a table at its stores and whether one pays there.
// This file reads only those marks. Conv marks 1x1 convs (the pointwise
// kernels) and 3x3 depthwise convs of the row fast path as paying
// (ConvInt8.cpp's tablePaysAtStore has the measured figures). Not fused:
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

/// The table activation `producer`'s int8 calls apply at their stores, or
/// nullptr. The one decision: the activation's lowering asks the same
/// question of its producer (lutFusedIntoProducer).
const Node *fusedLutConsumer(const Graph &graph, const PlanView &plan, const Node &producer);

/// Whether `activation`'s table runs in its producer's stores (its own call
/// is then dropped).
bool lutFusedIntoProducer(const Graph &graph, const PlanView &plan, const Node &activation);

/// `producerCalls` (before the in-place rewrite) with `activation`'s table
/// as the table argument their marks name.
void applyFusedLut(const Node &producer, const Node &activation,
                   std::vector<KernelCall> &producerCalls);

} // namespace bundlefit
