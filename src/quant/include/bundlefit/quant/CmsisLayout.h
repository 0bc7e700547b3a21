//===- CmsisLayout.h - Prepare an int8 graph for CMSIS-NN calls ------------===//
//
// `--use-cmsis`: conv, depthwise conv, fully connected, max/average pooling
// and softmax call CMSIS-NN's s8 wrapper API instead of the portable int8
// kernels. CMSIS-NN wants NHWC activations, OHWI weights (depthwise:
// 1HWC) and [out, in] fully-connected weights with an int32 bias.
//
// Design: the graph keeps its logical NCHW shapes (reports, planner and byte
// sizes are unchanged); what changes is how bytes are stored:
//  - a 4-D value written by a CMSIS-NN conv/pool node is stored NHWC; the
//    next CMSIS-NN conv/pool reads it as it is, so a chain of them (the body
//    of a CNN) runs in NHWC with no copies. Elementwise int8 nodes whose
//    kernels do not care about element order (Relu, Clip, Rescale, and
//    Add/Mul without broadcasting: a residual Add) carry NHWC through;
//  - where an NHWC value meets a portable consumer (a view, Add, Concat,
//    Dequantize...) or a CMSIS-NN node reads an NCHW value, one
//    `CmsisLayout` node (int8 -> int8, same type, attribute `to` = "NHWC"
//    or "NCHW") is inserted and copies it across. Its output is an ordinary
//    planned buffer, so the arena accounts for it. Values with C == 1 or
//    H*W == 1 have the same bytes in both layouts and never need one (e.g.
//    LeNet's input, a global-pooled vector). A Flatten of an NHWC value read
//    only by CMSIS-NN fully connected layers needs none either: their weight
//    columns are permuted to H, W, C order instead (TFLM does the same);
//  - weights are repacked in the graph's constants at compile time (the
//    weights.bin holds them the way CMSIS-NN reads them); an int8 bias is
//    brought to the accumulator scale once, as the int32 bias CMSIS-NN takes.
//
// Which nodes, what their constants become and their scratch are each
// operator's definition's answer (OpDef::cmsis, ops/Cmsis.h). Marked nodes
// carry `cmsis` = the CMSIS-NN function name and `cmsis_scratch` = the bytes of their
// CMSIS-NN context buffer for the core's extension (CmsisBufferSizes.h); the
// memory planner places that workspace in the activation arena. Helium's
// fully connected layers read per-row kernel sums instead: computed here and
// read as a fourth (constant) input, so they live in the weights. After this
// pass the graph is for code generation only (its constants are no longer in
// ONNX layout): the interpreter must run the graph from before.
//
// Nodes CMSIS-NN does not cover stay portable: grouped (non-depthwise) or
// 1-D convolutions, per-channel fully connected layers, dilated or batched
// pooling, average pooling that counts padding, softmax over a strided axis,
// and 4-D conv/pool nodes whose output is a graph output.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/ops/Cmsis.h"

#include <string>
#include <vector>

namespace bundlefit {

struct CmsisPreparation {
  int cmsisNodes = 0;  ///< Nodes that now call CMSIS-NN.
  int layoutNodes = 0; ///< CmsisLayout copies inserted.
  /// "node 'x' (Op): reason" for the int8 nodes left portable, and the int16
  /// nodes CMSIS-NN has no s16 function for.
  std::vector<std::string> portable;
};

/// Rewrites a quantized graph for CMSIS-NN calls (see above). Idempotent
/// nodes are not re-marked; call once, before planning.
CmsisPreparation prepareCmsisGraph(Graph &graph, CmsisExtension extension);

} // namespace bundlefit
