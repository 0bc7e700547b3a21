//===- ReduceOps.cpp - ReduceMean, ReduceMax -------------------------------===//
//
// Axes come from the `axes` attribute (opset < 18) or, if given, the opset-18
// `axes` input (which must then be a constant). Empty axes reduce every dim
// (noop_with_empty_axes is ignored). keepdims defaults to 1.
//
// MACs: one per *input* element (each is accumulated/compared once).
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ir/OpRegistry.h"

#include "bundlefit/support/Error.h"

#include <set>

namespace bundlefit {
namespace {

[[noreturn]] void fail(const Node &node, const std::string &message) {
  throw Error(ExitCode::Unsupported, node.describe() + ": " + message);
}

void inferReduce(Node &node) {
  const Value *data = node.input(0);
  if (!data)
    fail(node, "missing input 'data'");
  std::vector<int64_t> axes = node.attrs.getInts("axes");
  if (const Value *axesInput = node.input(1)) {
    if (!axesInput->isConstant())
      fail(node, "input 'axes' must be a constant (bundlefit compiles static shapes)");
    axes = axesInput->toInts();
  }
  int64_t rank = int64_t(data->type.rank());
  std::set<int64_t> reduced;
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank)
      fail(node, "'axes' entry " + std::to_string(axis) + " is out of range for " +
                     data->type.str());
    reduced.insert(axis < 0 ? axis + rank : axis);
  }
  bool keepDims = node.attrs.getInt("keepdims", 1) != 0;
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
    fail(node, "has no output");
  out->type.dtype = data->type.dtype;
  out->type.shape = shape;
}

uint64_t inputElements(const Node &node) {
  const Value *data = node.input(0);
  return data ? uint64_t(data->type.numElements()) : 0;
}

} // namespace

void registerReduceOps(OpRegistry &registry) {
  registry.add({"ReduceMean", inferReduce, inputElements});
  registry.add({"ReduceMax", inferReduce, inputElements});
}

} // namespace bundlefit
