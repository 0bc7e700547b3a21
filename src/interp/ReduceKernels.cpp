//===- ReduceKernels.cpp - Reference ReduceMean, ReduceMax -----------------===//
//
// Every input element is folded into the output element it reduces to.
// ReduceMean accumulates in double; ReduceMax propagates NaN like numpy.
// Float32 for both; ReduceMax also runs on int8/uint8/int32/int64.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/interp/Interpreter.h"

#include "Broadcast.h"
#include "bundlefit/support/Error.h"

#include <set>

namespace bundlefit {
namespace {

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

void reduceMeanKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                      std::vector<Tensor> &outputs) {
  Tensor &out = outputs[0];
  if (out.type.dtype != DType::Float32)
    throw Error(ExitCode::Unsupported, node.describe() + ": ReduceMean supports float32 only");
  int64_t count = 1;
  std::vector<int64_t> strides = reducedStrides(node, inputs, count);
  std::vector<double> sums(size_t(out.numElements()), 0.0);
  const float *x = inputs[0]->data<float>();
  forEachReduced(inputs[0]->type.shape, strides,
                 [&](int64_t i, int64_t o) { sums[size_t(o)] += x[i]; });
  for (int64_t o = 0; o < out.numElements(); ++o)
    out.data<float>()[o] = float(sums[size_t(o)] / double(count));
}

/// Max that propagates NaN (numpy.max); each output starts from the first
/// element that reaches it.
template <typename T>
void reduceMaxTyped(const Tensor &in, const std::vector<int64_t> &strides, Tensor &out) {
  T *o = out.data<T>();
  const T *x = in.data<T>();
  std::vector<bool> seen(size_t(out.numElements()), false);
  forEachReduced(in.type.shape, strides, [&](int64_t i, int64_t k) {
    T v = x[i], &acc = o[k];
    bool accIsNaN = acc != acc;
    if (!seen[size_t(k)] || (!accIsNaN && (v != v || v > acc)))
      acc = v;
    seen[size_t(k)] = true;
  });
}

void reduceMaxKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                     std::vector<Tensor> &outputs) {
  Tensor &out = outputs[0];
  int64_t count = 1;
  std::vector<int64_t> strides = reducedStrides(node, inputs, count);
  const Tensor &in = *inputs[0];
  switch (out.type.dtype) {
  case DType::Float32: reduceMaxTyped<float>(in, strides, out); break;
  case DType::Int8: reduceMaxTyped<int8_t>(in, strides, out); break;
  case DType::UInt8: reduceMaxTyped<uint8_t>(in, strides, out); break;
  case DType::Int32: reduceMaxTyped<int32_t>(in, strides, out); break;
  case DType::Int64: reduceMaxTyped<int64_t>(in, strides, out); break;
  default:
    throw Error(ExitCode::Unsupported, node.describe() + ": unsupported dtype " +
                                           dtypeName(out.type.dtype));
  }
}

} // namespace

void registerReduceKernels(KernelTable &table) {
  table.add("ReduceMean", reduceMeanKernel);
  table.add("ReduceMax", reduceMaxKernel);
}

} // namespace bundlefit
