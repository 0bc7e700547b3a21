//===- IndexInterp.cpp - Reference GatherElements, GatherND, Scatter, OneHot ---===//
//
// Elements move as dtypeSize bytes (any dtype). An index outside its axis
// (after adding the axis length to a negative one) is an error of the model's
// data: the reference reports it instead of reading out of bounds.
//
//===----------------------------------------------------------------------===//
#include "index/Index.h"

#include "bundlefit/ops/OpRegistry.h"

#include "bundlefit/support/Bytes.h"
#include "bundlefit/support/Error.h"
#include "common/Broadcast.h"

#include <cstring>

namespace bundlefit {
namespace index_interp {

using Inputs = std::vector<const Tensor *>;

int64_t checkedIndex(const Node &node, double raw, int64_t dim) {
  int64_t index = int64_t(raw);
  if (index < 0)
    index += dim;
  if (index < 0 || index >= dim)
    throw Error(ExitCode::Unsupported, node.describe() + ": index " + std::to_string(int64_t(raw)) +
                                           " is out of range for a dimension of " +
                                           std::to_string(dim));
  return index;
}

void copyElement(const Tensor &from, int64_t i, Tensor &to, int64_t o) {
  const size_t size = dtypeSize(to.type.dtype);
  copyBytes(to.bytes.data() + size_t(o) * size, from.bytes.data() + size_t(i) * size, size);
}

int64_t axisAttr(const Node &node, size_t rank) {
  int64_t axis = node.attrs.getInt("axis", 0);
  return axis < 0 ? axis + int64_t(rank) : axis;
}

/// Calls fn(linear index, coords) for every element of `shape`.
template <typename F> void forEachCoord(const Shape &shape, F fn) {
  if (numElements(shape) == 0)
    return;
  std::vector<int64_t> coords(shape.size(), 0);
  int64_t i = 0;
  do
    fn(i++, coords);
  while (nextCoords(coords, shape));
}

void gatherElementsKernel(const Node &node, const Inputs &in, std::vector<Tensor> &out) {
  const Tensor &data = *in[0], &indices = *in[1];
  const int64_t axis = axisAttr(node, data.type.rank());
  const std::vector<int64_t> strides = rowMajorStrides(data.type.shape);
  const int64_t dim = data.type.shape[size_t(axis)];
  forEachCoord(indices.type.shape, [&](int64_t i, const std::vector<int64_t> &c) {
    int64_t from = 0;
    for (size_t d = 0; d < c.size(); ++d)
      from += (int64_t(d) == axis ? checkedIndex(node, indices.at(i), dim) : c[d]) * strides[d];
    copyElement(data, from, out[0], i);
  });
}

void scatterElementsKernel(const Node &node, const Inputs &in, std::vector<Tensor> &out) {
  const Tensor &data = *in[0], &indices = *in[1], &updates = *in[2];
  Tensor &y = out[0];
  y.bytes = data.bytes;
  const int64_t axis = axisAttr(node, data.type.rank());
  const std::vector<int64_t> strides = rowMajorStrides(data.type.shape);
  const int64_t dim = data.type.shape[size_t(axis)];
  const std::string reduction = node.attrs.getString("reduction", "none");
  forEachCoord(indices.type.shape, [&](int64_t i, const std::vector<int64_t> &c) {
    int64_t to = 0;
    for (size_t d = 0; d < c.size(); ++d)
      to += (int64_t(d) == axis ? checkedIndex(node, indices.at(i), dim) : c[d]) * strides[d];
    if (reduction == "none") {
      copyElement(updates, i, y, to);
    } else if (y.type.dtype == DType::Float32) {
      float &dst = y.data<float>()[to];
      dst = reduction == "add" ? dst + updates.data<float>()[i] : dst * updates.data<float>()[i];
    } else if (y.type.dtype == DType::Int64) {
      int64_t &dst = y.data<int64_t>()[to];
      dst =
          reduction == "add" ? dst + updates.data<int64_t>()[i] : dst * updates.data<int64_t>()[i];
    } else {
      throw Error(ExitCode::Unsupported, node.describe() + ": reduction on " +
                                             dtypeName(y.type.dtype) + " is not supported");
    }
  });
}

void gatherNDKernel(const Node &node, const Inputs &in, std::vector<Tensor> &out) {
  const Tensor &data = *in[0], &indices = *in[1];
  const Shape &ds = data.type.shape, &is = indices.type.shape;
  const int64_t b = node.attrs.getInt("batch_dims", 0);
  const int64_t k = is.back();
  const std::vector<int64_t> strides = rowMajorStrides(ds);
  // Elements of one gathered slice (data dims after b + k).
  int64_t slice = 1;
  for (size_t d = size_t(b + k); d < ds.size(); ++d)
    slice *= ds[d];
  // Index tuples: batch-major, `tuples` per batch entry.
  int64_t batches = 1;
  for (int64_t d = 0; d < b; ++d)
    batches *= is[size_t(d)];
  const int64_t tuples = indices.numElements() / k / batches;
  int64_t o = 0;
  for (int64_t batch = 0; batch < batches; ++batch) {
    // The batch coordinates select data's leading b dims.
    int64_t base = 0, rest = batch;
    for (int64_t d = b - 1; d >= 0; --d) {
      base += (rest % ds[size_t(d)]) * strides[size_t(d)];
      rest /= ds[size_t(d)];
    }
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t from = base;
      for (int64_t j = 0; j < k; ++j)
        from += checkedIndex(node, indices.at((batch * tuples + t) * k + j), ds[size_t(b + j)]) *
                strides[size_t(b + j)];
      for (int64_t e = 0; e < slice; ++e)
        copyElement(data, from + e, out[0], o++);
    }
  }
}

void oneHotKernel(const Node &node, const Inputs &in, std::vector<Tensor> &out) {
  const Tensor &indices = *in[0], &values = *in[2];
  Tensor &y = out[0];
  const int64_t depth = int64_t(in[1]->at(0));
  const int64_t rank = int64_t(y.type.rank());
  int64_t axis = node.attrs.getInt("axis", -1);
  if (axis < 0)
    axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (d < axis)
      outer *= y.type.shape[size_t(d)];
    else if (d > axis)
      inner *= y.type.shape[size_t(d)];
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < depth; ++j)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t index = int64_t(indices.at(o * inner + i));
        if (index < 0)
          index += depth;
        copyElement(values, index == j ? 1 : 0, y, (o * depth + j) * inner + i);
      }
}

/// The indices of X's nonzero elements, one row per axis, in row-major order.
void nonZeroKernel(const Node &, const Inputs &in, std::vector<Tensor> &out) {
  const Tensor &x = *in[0];
  Tensor &y = out[0];
  const Shape &shape = x.type.shape;
  const int64_t count = y.type.shape[1];
  int64_t *indices = y.data<int64_t>();
  int64_t found = 0;
  for (int64_t i = 0; i < x.numElements() && found < count; ++i) {
    if (x.at(i) == 0)
      continue;
    for (int64_t d = int64_t(shape.size()) - 1, rest = i; d >= 0; --d) {
      indices[d * count + found] = rest % shape[size_t(d)];
      rest /= shape[size_t(d)];
    }
    ++found;
  }
}

} // namespace index_interp

} // namespace bundlefit
