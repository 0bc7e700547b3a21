//===- ReduceOps.cpp - Reduce*, ArgMax, ArgMin, Hardmax --------------------===//
//
// Axes come from the `axes` attribute (opset < 18) or, if given, the `axes`
// input (opset 13 ReduceSum, opset 18 all; it must then be a constant). Empty
// axes reduce every dim, or none with noop_with_empty_axes=1. keepdims
// defaults to 1. ArgMax/ArgMin reduce one `axis` to its int64 index;
// Hardmax (opset 13) keeps the shape, 1 at the first maximum along `axis`.
//
// MACs: one per *input* element (each is accumulated/compared once).
//
//===----------------------------------------------------------------------===//
#include "reduce/Reduce.h"

#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/ShapeHelpers.h"

#include "bundlefit/support/Error.h"

#include <set>

namespace bundlefit {

using shape_helpers::unsupported;
namespace {

void inferReduce(Node &node) {
  const Value *data = node.input(0);
  if (!data)
    unsupported(node, "missing input 'data'");
  std::vector<int64_t> axes = node.attrs.getInts("axes");
  if (const Value *axesInput = node.input(1)) {
    if (!axesInput->isConstant())
      unsupported(node, "input 'axes' must be a constant (bundlefit compiles static shapes)");
    axes = axesInput->toInts();
  }
  int64_t rank = int64_t(data->type.rank());
  std::set<int64_t> reduced;
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank)
      unsupported(node, "'axes' entry " + std::to_string(axis) + " is out of range for " +
                            data->type.str());
    reduced.insert(axis < 0 ? axis + rank : axis);
  }
  bool keepDims = node.attrs.getInt("keepdims", 1) != 0;
  if (axes.empty() && node.attrs.getInt("noop_with_empty_axes", 0) != 0) {
    Value *out = node.output(0);
    if (!out)
      unsupported(node, "has no output");
    out->type.dtype = data->type.dtype;
    out->type.shape = data->type.shape;
    return;
  }
  Shape shape;
  for (int64_t i = 0; i < rank; ++i) {
    bool isReduced = axes.empty() || reduced.count(i);
    if (!isReduced)
      shape.push_back(data->type.shape[size_t(i)]);
    else if (keepDims)
      shape.push_back(1);
  }
  Value *out = node.output(0);
  if (!out)
    unsupported(node, "has no output");
  out->type.dtype = data->type.dtype;
  out->type.shape = shape;
}

/// The `axis` attribute of ArgMax/ArgMin/Hardmax, made non-negative.
int64_t normalizedAxis(const Node &node, int64_t fallback) {
  const Value *data = node.input(0);
  const int64_t rank = int64_t(data->type.rank());
  const int64_t axis = node.attrs.getInt("axis", fallback);
  if (axis < -rank || axis >= rank || rank == 0)
    unsupported(node,
                "'axis' " + std::to_string(axis) + " is out of range for " + data->type.str());
  return axis < 0 ? axis + rank : axis;
}

void inferArgReduce(Node &node) {
  const Value *data = node.input(0);
  Value *out = node.output(0);
  if (!data || !out)
    unsupported(node, "needs input 'data' and output 'reduced'");
  const int64_t axis = normalizedAxis(node, 0);
  Shape shape = data->type.shape;
  if (node.attrs.getInt("keepdims", 1) != 0)
    shape[size_t(axis)] = 1;
  else
    shape.erase(shape.begin() + axis);
  out->type.dtype = DType::Int64;
  out->type.shape = shape;
}

void inferHardmax(Node &node) {
  const Value *data = node.input(0);
  Value *out = node.output(0);
  if (!data || !out)
    unsupported(node, "needs input 'input' and output 'output'");
  normalizedAxis(node, -1);
  if (data->type.dtype != DType::Float32)
    unsupported(node, "input '" + data->name + "' is " + data->type.str() + "; only float32");
  out->type.dtype = data->type.dtype;
  out->type.shape = data->type.shape;
}

uint64_t inputElements(const Node &node) {
  const Value *data = node.input(0);
  return data ? uint64_t(data->type.numElements()) : 0;
}

} // namespace

void registerReduceOps(OpRegistry &registry) {
  using namespace reduce_interp;
  for (const char *op : {"ReduceMean", "ReduceSum", "ReduceProd", "ReduceL1", "ReduceL2",
                         "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
    registry.add({op, inferReduce, inputElements})
        .parameters(kParametersFrom1)
        .runs(reduceArithmeticKernel);
  for (const char *op : {"ReduceMax", "ReduceMin"})
    registry.add({op, inferReduce, inputElements})
        .parameters(kParametersFrom1)
        .runs(reduceMaxKernel);
  registry.add({"ArgMax", inferArgReduce, inputElements}).runs(argReduceKernel);
  registry.add({"ArgMin", inferArgReduce, inputElements}).runs(argReduceKernel);
  registry.add({"Hardmax", inferHardmax, inputElements}).runs(hardmaxKernel);
  registerReduceLowering(registry);
}

} // namespace bundlefit
