//===- CmsisConstants.h - Constants in CMSIS-NN's layouts (internal) ----===//
//
// The repacking the families' CmsisDef::prepare hooks share: weights in the
// order CMSIS-NN reads them, an int8 bias brought to the int32 accumulator
// bias CMSIS-NN takes, Helium's fully-connected kernel sums. The graph keeps
// its logical shapes; only the bytes move (quant/CmsisLayout.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/Int8Params.h"

#include <cstdint>

namespace bundlefit::cmsis_constants {

/// The constant `node` reads at `index`, cloned first when another node
/// reads it too (repacking must not change what the others see).
Value *ownConstant(Graph &graph, Node &node, size_t index);
/// [M, C, KH, KW] -> OHWI [M, KH, KW, C] (the logical shape stays).
void repackConvWeights(Value &w);
/// Depthwise [M, 1, KH, KW] -> 1HWC [1, KH, KW, M].
void repackDepthwiseWeights(Value &w);
/// Gemm B [K, N] (transB = 0) -> [N, K], transB = 1: CMSIS-NN's [out, in].
void transposeGemmWeights(Node &node, Value &b);
/// An int8 bias becomes the int32 bias at the accumulator scale CMSIS-NN
/// takes, computed once (bit-identical to what the portable kernels add).
void widenInt8Bias(Graph &graph, Node &node, const Int8ConvArgs &a, int64_t channels);
/// Helium's arm_fully_connected_s8 kernel sums, stored as a constant read at
/// kCmsisKernelSumsInput (Cmsis.h).
void addKernelSums(Graph &graph, Node &node, const Int8ConvArgs &a);
/// Gemm weights [out, C*H*W] re-ordered to [out, H*W*C]: the columns a
/// flattened NHWC vector meets (TFLM-style).
void permuteColumnsToHwc(Value &w, int64_t C, int64_t H, int64_t W);

} // namespace bundlefit::cmsis_constants
