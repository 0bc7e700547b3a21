//===- FusedOps.h - Operators that exist only after memory passes -*- C++ -*-===//
//
// "ConvPool" (made by fuseConvPool, --memory-opt >= 1) is a 2-D Conv (with
// its fused activation) followed by a MaxPool or AveragePool, computed so that
// the full-resolution conv output never exists: the kernel computes one conv
// row of `channel_chunk` output channels at a time into a small scratch
// buffer and folds it into the pool output at once.
//
//   inputs   X, W, B?            (the Conv's)
//   output   Y                   (the pool's value: same name, same readers)
//   attrs    conv.<name>         every Conv attribute (group, pads, activation...)
//            pool.<name>         every pool attribute (kernel_shape, strides...)
//            pool.op             "MaxPool" | "AveragePool"
//            channel_chunk       output channels per scratch row (divides nothing;
//                                the last chunk may be short)
//
// The element type and pool decide the kernel: bf_conv_pool2d_f32 (max and
// average), bf_conv_pool2d_s8 (max) and bf_conv_avgpool2d_s8 (average whose
// windows do not overlap vertically; its scratch adds int32 sums of one
// pooled row), the int8 ones reading the conv's quantization parameters.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <cstdint>
#include <memory>
#include <string>

namespace bundlefit {

inline constexpr const char *kConvPoolOp = "ConvPool";

/// A ConvPool taken apart: a standalone Conv node and pool node over private
/// copies of the operand types (no constant bytes), with types inferred. The
/// interpreter evaluates them one after the other; code generation reads
/// their geometry. Not part of any graph.
struct ConvPoolParts {
  Node conv, pool;
  Value x, w, b, convOut, y;
  bool hasBias = false;
};

/// Splits `fused` (a ConvPool whose input types are known).
std::unique_ptr<ConvPoolParts> splitConvPool(const Node &fused);

/// Attributes of ConvPool from those of a Conv and a pool node.
Attributes makeConvPoolAttributes(const Node &conv, const Node &pool, int64_t channelChunk);

/// Bytes of kernel workspace `node` needs while it runs (0 for ordinary ops).
/// ConvPool: one conv output row of channel_chunk channels (int8: then an
/// average's int32 row sums and the conv's im2col columns). An int8 Conv
/// with group 1: its im2col columns (int8ConvIm2colBytes). A node calling
/// CMSIS-NN: its `cmsis_scratch` attribute (quant/CmsisLayout.h).
uint64_t nodeScratchBytes(const Node &node);

} // namespace bundlefit
