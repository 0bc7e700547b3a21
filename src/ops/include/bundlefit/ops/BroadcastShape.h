//===- BroadcastShape.h - numpy broadcasting of static shapes --------------===//
#pragma once

#include "bundlefit/ir/TensorType.h"

#include <algorithm>

namespace bundlefit {

/// Numpy multidirectional broadcasting: shapes are right-aligned, and each
/// pair of dims must be equal or contain a 1 (which stretches). Returns false
/// if the shapes are incompatible.
inline bool broadcastShapes(const Shape &a, const Shape &b, Shape &out) {
  size_t rank = std::max(a.size(), b.size());
  out.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return false;
    out[i] = da == 1 ? db : da;
  }
  return true;
}

} // namespace bundlefit

//===----------------------------------------------------------------------===//
// Operand decoding shared by ShapeOps.cpp (type inference) and the reference
// kernels in src/interp/ShapeKernels.cpp, so both read an operator the same
// way. Each throws Error(Unsupported) naming the node on invalid operands.
//===----------------------------------------------------------------------===//
#include "bundlefit/ir/Graph.h"

namespace bundlefit::shapeops {

/// Transpose's `perm` attribute, or the reversed dims when absent.
std::vector<int64_t> transposePerm(const Node &node, size_t rank);

/// Split's part sizes along an axis of `dim` elements: input (or attribute)
/// `split`, else ceil(dim / outputs) each with the last part smaller.
std::vector<int64_t> splitSizes(const Node &node, int64_t dim);

/// Slice: from the starts/ends/axes/steps operands (axes/steps may be empty =
/// defaults), the first element read and the step along every dim of
/// `inShape`, clamped as ONNX specifies, and the output shape.
void sliceParams(const Node &node, const Shape &inShape, const std::vector<int64_t> &starts,
                 const std::vector<int64_t> &ends, const std::vector<int64_t> &axes,
                 const std::vector<int64_t> &steps, std::vector<int64_t> &start,
                 std::vector<int64_t> &step, Shape &outShape);

/// Pad: the `pads` operand (for `axes`, or all dims if empty) expanded to
/// 2 * rank amounts, ONNX order: every begin, then every end.
std::vector<int64_t> padAmounts(const Node &node, size_t rank, const std::vector<int64_t> &pads,
                                const std::vector<int64_t> &axes);

} // namespace bundlefit::shapeops
