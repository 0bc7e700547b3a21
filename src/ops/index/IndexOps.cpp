//===- IndexOps.cpp - GatherElements, GatherND, Scatter, OneHot, NonZero ---===//
//
// Indexed reads and writes with static shapes. Indices are int32 or int64;
// negative indices count from the end of their axis. The kernels check every
// index at run time (an index out of range reads or writes nothing rather
// than memory outside the tensor).
//   GatherElements(data, indices; axis): output shaped as indices; indices
//     must match data's shape on every other axis.
//   GatherND(data, indices; batch_dims=0): indices [..., k] pick slices of
//     data's trailing rank-k dims.
//   ScatterElements(data, indices, updates; axis, reduction none|add|mul).
//   OneHot(indices, depth, values[off, on]; axis): depth must be a constant.
//   NonZero(X): X must be a constant (its output shape depends on X's
//     values); constant folding computes it.
//
//===----------------------------------------------------------------------===//
#include "index/Index.h"

#include "bundlefit/ops/OpRegistry.h"

#include "bundlefit/ops/ShapeHelpers.h"

namespace bundlefit {

using namespace shape_helpers;

namespace {

const Value &indicesOperand(const Node &node, size_t index) {
  const Value &indices = requireInput(node, index, "indices");
  if (indices.type.dtype != DType::Int64 && indices.type.dtype != DType::Int32)
    unsupported(node, "input 'indices' must be int32 or int64, got " + indices.type.str());
  return indices;
}

Value &onlyOutput(const Node &node) {
  if (!node.output(0))
    unsupported(node, "has no output");
  return *node.output(0);
}

/// Indices must match data on every axis but `axis` (GatherElements,
/// ScatterElements).
void requireMatchingShapes(const Node &node, const Value &data, const Value &indices,
                           int64_t axis) {
  if (indices.type.rank() != data.type.rank())
    unsupported(node, "input 'indices' " + indices.type.str() + " must have the rank of 'data' " +
                          data.type.str());
  for (size_t d = 0; d < data.type.rank(); ++d)
    if (int64_t(d) != axis && indices.type.shape[d] != data.type.shape[d])
      unsupported(node, "input 'indices' " + indices.type.str() + " differs from 'data' " +
                            data.type.str() + " off the axis");
}

void inferGatherElements(Node &node) {
  const Value &data = requireInput(node, 0, "data");
  const Value &indices = indicesOperand(node, 1);
  const int64_t rank = int64_t(data.type.rank());
  if (rank == 0)
    unsupported(node, "input 'data' must have rank >= 1");
  const int64_t axis = normalizeAxis(node, node.attrs.getInt("axis", 0), rank, "axis");
  requireMatchingShapes(node, data, indices, axis);
  setDTypeAndShape(onlyOutput(node), data.type.dtype, indices.type.shape);
}

void inferScatterElements(Node &node) {
  const Value &data = requireInput(node, 0, "data");
  const Value &indices = indicesOperand(node, 1);
  const Value &updates = requireInput(node, 2, "updates");
  const int64_t rank = int64_t(data.type.rank());
  if (rank == 0)
    unsupported(node, "input 'data' must have rank >= 1");
  const int64_t axis = normalizeAxis(node, node.attrs.getInt("axis", 0), rank, "axis");
  requireMatchingShapes(node, data, indices, axis);
  if (updates.type.shape != indices.type.shape || updates.type.dtype != data.type.dtype)
    unsupported(node, "input 'updates' " + updates.type.str() +
                          " must have the shape of 'indices' and the dtype of 'data'");
  const std::string reduction = node.attrs.getString("reduction", "none");
  if (reduction != "none" && reduction != "add" && reduction != "mul")
    unsupported(node, "attribute 'reduction'=\"" + reduction + "\" is not supported");
  setDTypeAndShape(onlyOutput(node), data.type.dtype, data.type.shape);
}

void inferGatherND(Node &node) {
  const Value &data = requireInput(node, 0, "data");
  const Value &indices = indicesOperand(node, 1);
  const int64_t b = node.attrs.getInt("batch_dims", 0);
  const int64_t r = int64_t(data.type.rank()), q = int64_t(indices.type.rank());
  if (q < 1 || b < 0 || b >= std::min(r, q))
    unsupported(node, "attribute 'batch_dims'=" + std::to_string(b) + " does not fit data " +
                          data.type.str() + " and indices " + indices.type.str());
  const int64_t k = indices.type.shape.back();
  if (k < 1 || k > r - b)
    unsupported(node, "the last dim of 'indices' " + indices.type.str() + " must be in 1.." +
                          std::to_string(r - b));
  for (int64_t d = 0; d < b; ++d)
    if (indices.type.shape[size_t(d)] != data.type.shape[size_t(d)])
      unsupported(node, "batch dims of 'indices' and 'data' differ");
  Shape shape(indices.type.shape.begin(), indices.type.shape.end() - 1);
  shape.insert(shape.end(), data.type.shape.begin() + b + k, data.type.shape.end());
  setDTypeAndShape(onlyOutput(node), data.type.dtype, shape);
}

void inferOneHot(Node &node) {
  const Value &indices = requireInput(node, 0, "indices");
  const Value &depthValue = requireInput(node, 1, "depth");
  const Value &values = requireInput(node, 2, "values");
  if (indices.type.dtype == DType::Bool)
    unsupported(node, "input 'indices' must be numeric");
  if (!depthValue.isConstant() || depthValue.type.numElements() != 1)
    unsupported(node, "input 'depth' must be a constant scalar (bundlefit compiles static shapes)");
  if (values.type.numElements() != 2)
    unsupported(node, "input 'values' must hold [off_value, on_value]");
  const double depthNumber = depthValue.elementAsDouble(0);
  if (!(depthNumber >= 1 && depthNumber <= double(INT32_MAX)))
    unsupported(node, "input 'depth' must be in 1..2^31-1");
  const int64_t depth = int64_t(depthNumber);
  const int64_t rank = int64_t(indices.type.rank()) + 1;
  const int64_t axis = normalizeAxis(node, node.attrs.getInt("axis", -1), rank, "axis");
  Shape shape = indices.type.shape;
  shape.insert(shape.begin() + axis, depth);
  setDTypeAndShape(onlyOutput(node), values.type.dtype, shape);
}

/// NonZero's output shape, [rank, count], depends on the values: static only
/// when the input is a constant, which folding then evaluates.
void inferNonZero(Node &node) {
  const Value &x = requireInput(node, 0, "X");
  if (!x.isConstant())
    unsupported(node, "input 'X' must be a constant: NonZero's output shape depends on its "
                      "values, and bundlefit compiles static shapes");
  int64_t count = 0;
  for (int64_t i = 0; i < x.type.numElements(); ++i)
    count += x.elementAsDouble(i) != 0 ? 1 : 0;
  setDTypeAndShape(onlyOutput(node), DType::Int64, {int64_t(x.type.rank()), count});
}

uint64_t noMacs(const Node &) { return 0; }

} // namespace

void registerIndexOps(OpRegistry &registry) {
  using namespace index_interp;
  registry.add({"GatherElements", inferGatherElements, noMacs}).runs(gatherElementsKernel);
  registry.add({"GatherND", inferGatherND, noMacs}).runs(gatherNDKernel);
  registry.add({"ScatterElements", inferScatterElements, noMacs}).runs(scatterElementsKernel);
  registry.add({"OneHot", inferOneHot, noMacs}).parameters(1u << 1).runs(oneHotKernel);
  registry.add({"NonZero", inferNonZero, noMacs}).runs(nonZeroKernel);
  registerIndexLowering(registry);
}

} // namespace bundlefit
