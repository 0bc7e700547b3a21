//===- InPlaceOps.h - Which operators may write over their own input -*- C++ -*-===//
//
// --memory-opt >= 1 lets some convolutions write their output over their
// dying input (src/kernels/conv_inplace.c, int8_conv_inplace.c), and 2-D
// pooling start its output just before its input (a partial overlap). These
// tests say which, and how much workspace the kernel then needs; the memory
// plan (which proves each overlap with the kernel's access pattern) and the
// patch stage's peak estimate both ask them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <cstdint>
#include <vector>

namespace bundlefit {

/// A 4-D float32 or int8 Conv that is not a CMSIS-NN call: the kinds our
/// in-place kernels run.
bool hasInPlaceConvKernel(const Node &node);

/// An int8 Conv with group 1 that our kernels run: the im2col workspace of
/// bf_conv2d_im2col_s8 (two int8 columns of C*KH*KW window values, 2*C*KH*KW
/// bytes, half of CMSIS-NN's arm_convolve_s8 buffer), the same on every
/// target; 0 for any other node.
uint64_t int8ConvIm2colBytes(const Node &node);

/// A depthwise Conv (group == C == M) whose output planes are no larger than
/// its input planes (bf_depthwise_inplace_*): the one-plane workspace it
/// needs, or 0 when it cannot run in place.
uint64_t depthwiseInPlaceScratch(const Node &node);

/// A 1x1 Conv (stride 1, no padding, one image) runs in place a block of
/// pixels at a time (bf_pointwise_inplace_*). pointwiseInPlaceRows: 0 when
/// it cannot, else the int8 kernel's block, whole rows (enough for
/// kPointwiseMinPixels pixels). pointwiseInPlacePixels: the pixels per
/// block, int8 those rows, float kPointwiseMinPixels (the widest vector tile
/// of the float kernels, so a block takes their matrix-product path; the
/// whole plane when it is no larger). pointwiseInPlaceLead: the pixels of
/// the first block (float: the plane's pixels left over after whole blocks,
/// or a whole block; int8: a whole block, the leftover rows come last). The
/// workspace holds one block of whole rows of output, every channel: M x
/// rows x W elements (int8: then, from a multiple of 4, int8ConvIm2colBytes;
/// float uses the first M x pointwiseInPlacePixels of it).
inline constexpr int64_t kPointwiseMinPixels = 16;
int64_t pointwiseInPlaceRows(const Node &node);
int64_t pointwiseInPlacePixels(const Node &node);
int64_t pointwiseInPlaceLead(const Node &node);
uint64_t pointwiseInPlaceScratch(const Node &node);

/// A 2-D MaxPool or AveragePool, float32 or int8 (uint8 for max), one
/// output, not a CMSIS-NN call: its kernel walks planes, rows and columns in
/// order, so its output may overlap the part of its input already read
/// (pool.c, int8_pool.c). The plan computes the margin from the window.
bool poolMayOverlapInput(const Node &node);

/// The pool's kernel one output row at a time, in execution order: for each
/// row, the output bytes written up to its end, and the first input byte
/// that this row or a later one reads (rows are read from their window's
/// first row; the rest of the input follows).
struct PoolRowAccess {
  uint64_t writeEnd = 0;
  uint64_t readBegin = 0;
};
std::vector<PoolRowAccess> poolRowAccess(const Node &node);

} // namespace bundlefit
