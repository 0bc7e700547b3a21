//===- ReduceInterp.cpp - Reference Reduce*, ArgMax/ArgMin, Hardmax --------===//
//
// Every input element is folded into the output element it reduces to.
// The arithmetic reductions (Sum, Mean, Prod, L1, L2, SumSquare, LogSum,
// LogSumExp) accumulate float32 in double; ReduceMax/ReduceMin propagate NaN
// like numpy and also run on int8/uint8/int32/int64.
//
//===----------------------------------------------------------------------===//
#include "reduce/Reduce.h"

#include "bundlefit/ops/OpRegistry.h"

#include "bundlefit/support/Error.h"
#include "common/Broadcast.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace bundlefit {
namespace reduce_interp {

/// Output-element stride for each input dim: 0 on reduced dims, so that
/// sum(coords[i] * strides[i]) is the output index an input element feeds.
std::vector<int64_t> reducedStrides(const Node &node, const std::vector<const Tensor *> &inputs,
                                    int64_t &reducedCount) {
  const Shape &shape = inputs[0]->type.shape;
  int64_t rank = int64_t(shape.size());
  std::vector<int64_t> axes = node.attrs.getInts("axes");
  if (inputs.size() > 1 && inputs[1])
    for (int64_t i = 0; i < inputs[1]->numElements(); ++i)
      axes.push_back(int64_t(inputs[1]->at(i)));
  std::set<int64_t> reduced;
  for (int64_t axis : axes)
    reduced.insert(axis < 0 ? axis + rank : axis);
  Shape kept(shape);
  reducedCount = 1;
  for (int64_t i = 0; i < rank; ++i)
    if (axes.empty() || reduced.count(i)) {
      reducedCount *= kept[size_t(i)];
      kept[size_t(i)] = 1;
    }
  std::vector<int64_t> strides = rowMajorStrides(kept);
  for (int64_t i = 0; i < rank; ++i)
    if (kept[size_t(i)] == 1)
      strides[size_t(i)] = 0;
  return strides;
}

/// Calls fn(inputIndex, outputIndex) for every element of `shape`.
template <typename F>
void forEachReduced(const Shape &shape, const std::vector<int64_t> &strides, F fn) {
  if (numElements(shape) == 0)
    return;
  std::vector<int64_t> coords(shape.size(), 0);
  int64_t i = 0;
  do {
    int64_t o = 0;
    for (size_t d = 0; d < coords.size(); ++d)
      o += coords[d] * strides[d];
    fn(i++, o);
  } while (nextCoords(coords, shape));
}

/// Whether the node reduces nothing (empty axes with noop_with_empty_axes).
bool isNoopReduce(const Node &node, const std::vector<const Tensor *> &inputs) {
  bool noAxes = node.attrs.getInts("axes").empty() &&
                (inputs.size() < 2 || !inputs[1] || inputs[1]->numElements() == 0);
  return noAxes && node.attrs.getInt("noop_with_empty_axes", 0) != 0;
}

/// ReduceSum, ReduceMean, ReduceProd, ReduceL1, ReduceL2, ReduceSumSquare,
/// ReduceLogSum, ReduceLogSumExp on float32.
void reduceArithmeticKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                            std::vector<Tensor> &outputs) {
  Tensor &out = outputs[0];
  const std::string &op = node.opType;
  if (out.type.dtype != DType::Float32)
    throw Error(ExitCode::Unsupported, node.describe() + ": " + op + " supports float32 only");
  const float *x = inputs[0]->data<float>();
  float *y = out.data<float>();
  if (isNoopReduce(node, inputs)) {
    std::copy(x, x + out.numElements(), y);
    return;
  }
  int64_t count = 1;
  std::vector<int64_t> strides = reducedStrides(node, inputs, count);
  std::vector<double> acc(size_t(out.numElements()), op == "ReduceProd" ? 1.0 : 0.0);
  forEachReduced(inputs[0]->type.shape, strides, [&](int64_t i, int64_t o) {
    double v = x[i];
    double &a = acc[size_t(o)];
    if (op == "ReduceProd")
      a *= v;
    else if (op == "ReduceL1")
      a += std::fabs(v);
    else if (op == "ReduceL2" || op == "ReduceSumSquare")
      a += v * v;
    else if (op == "ReduceLogSumExp")
      a += std::exp(v);
    else
      a += v;
  });
  for (int64_t o = 0; o < out.numElements(); ++o) {
    double a = acc[size_t(o)];
    if (op == "ReduceMean")
      a /= double(count);
    else if (op == "ReduceL2")
      a = std::sqrt(a);
    else if (op == "ReduceLogSum" || op == "ReduceLogSumExp")
      a = std::log(a);
    y[o] = float(a);
  }
}

/// Max that propagates NaN (numpy.max); each output starts from the first
/// element that reaches it.
template <typename T>
void reduceMaxTyped(const Tensor &in, const std::vector<int64_t> &strides, Tensor &out,
                    bool isMin) {
  T *o = out.data<T>();
  const T *x = in.data<T>();
  std::vector<bool> seen(size_t(out.numElements()), false);
  forEachReduced(in.type.shape, strides, [&](int64_t i, int64_t k) {
    T v = x[i], &acc = o[k];
    bool accIsNaN = acc != acc;
    if (!seen[size_t(k)] || (!accIsNaN && (v != v || (isMin ? v < acc : v > acc))))
      acc = v;
    seen[size_t(k)] = true;
  });
}

void reduceMaxKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                     std::vector<Tensor> &outputs) {
  Tensor &out = outputs[0];
  const Tensor &in = *inputs[0];
  if (isNoopReduce(node, inputs)) {
    out.bytes = in.bytes;
    return;
  }
  int64_t count = 1;
  std::vector<int64_t> strides = reducedStrides(node, inputs, count);
  const bool isMin = node.opType == "ReduceMin";
  switch (out.type.dtype) {
  case DType::Float32:
    reduceMaxTyped<float>(in, strides, out, isMin);
    break;
  case DType::Int8:
    reduceMaxTyped<int8_t>(in, strides, out, isMin);
    break;
  case DType::UInt8:
    reduceMaxTyped<uint8_t>(in, strides, out, isMin);
    break;
  case DType::Int16:
    reduceMaxTyped<int16_t>(in, strides, out, isMin);
    break;
  case DType::Int32:
    reduceMaxTyped<int32_t>(in, strides, out, isMin);
    break;
  case DType::Int64:
    reduceMaxTyped<int64_t>(in, strides, out, isMin);
    break;
  default:
    throw Error(ExitCode::Unsupported,
                node.describe() + ": unsupported dtype " + dtypeName(out.type.dtype));
  }
}

/// outer x axis x inner view of `shape` around `axis`.
void splitAround(const Shape &shape, int64_t axis, int64_t &outer, int64_t &n, int64_t &inner) {
  outer = 1, inner = 1, n = shape[size_t(axis)];
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[size_t(d)];
  for (size_t d = size_t(axis) + 1; d < shape.size(); ++d)
    inner *= shape[d];
}

int64_t axisOf(const Node &node, const Tensor &in, int64_t fallback) {
  const int64_t rank = int64_t(in.type.rank());
  const int64_t axis = node.attrs.getInt("axis", fallback);
  return axis < 0 ? axis + rank : axis;
}

/// ArgMax/ArgMin: the first (or, select_last_index=1, last) extreme index.
void argReduceKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                     std::vector<Tensor> &outputs) {
  const Tensor &in = *inputs[0];
  int64_t outer, n, inner;
  splitAround(in.type.shape, axisOf(node, in, 0), outer, n, inner);
  const bool isMin = node.opType == "ArgMin";
  const bool last = node.attrs.getInt("select_last_index", 0) != 0;
  int64_t *y = outputs[0].data<int64_t>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      double bestValue = in.at(o * n * inner + i);
      for (int64_t k = 1; k < n; ++k) {
        double v = in.at((o * n + k) * inner + i);
        bool better = isMin ? (v < bestValue || (last && v == bestValue))
                            : (v > bestValue || (last && v == bestValue));
        if (better)
          best = k, bestValue = v;
      }
      y[o * inner + i] = best;
    }
}

/// Hardmax: 1 at the first maximum along `axis`, 0 elsewhere.
void hardmaxKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                   std::vector<Tensor> &outputs) {
  const Tensor &in = *inputs[0];
  int64_t outer, n, inner;
  splitAround(in.type.shape, axisOf(node, in, -1), outer, n, inner);
  if (node.attrs.getInt("coerce_to_2d", 0) != 0) // opset < 13: over dims [axis, rank)
    n *= inner, inner = 1;
  const float *x = in.data<float>();
  float *y = outputs[0].data<float>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t k = 0; k < n; ++k) {
        y[(o * n + k) * inner + i] = 0.0f;
        if (x[(o * n + k) * inner + i] > x[(o * n + best) * inner + i])
          best = k;
      }
      if (n > 0)
        y[(o * n + best) * inner + i] = 1.0f;
    }
}

} // namespace reduce_interp

} // namespace bundlefit
