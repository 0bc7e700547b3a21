//===- Softmax.h - The axis of (Log)Softmax, as every kernel reads it -*- C++ -*-===//
//
// Softmax and LogSoftmax (NormOps.cpp) normalise along one axis (opset 13,
// default -1) or, with bundlefit's coerce_to_2d=1 (opset < 13, default 1),
// along the flattened dims [axis, rank). The interpreter, the float code
// generator and the int8 kernel arguments all view the input as
// [outer, len, inner] and normalise along len; this is that view.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <cstdint>

namespace bundlefit {

struct SoftmaxExtents {
  int64_t outer = 1, len = 1, inner = 1;
};

/// `node`'s (Log)Softmax over an input of `shape`, as [outer, len, inner].
/// Throws Error(Unsupported) naming the node when the axis is out of range
/// or a product of dims does not fit in int64.
SoftmaxExtents softmaxExtents(const Node &node, const Shape &shape);

} // namespace bundlefit
