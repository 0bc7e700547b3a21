//===- ResizeAxes.cpp - Resize-18's axes as full-rank operands -------------===//
//
// Why here and not in the importer: X's rank is only known once the sweep of
// foldConstantsAndInferTypes has typed the nodes before the Resize, and the
// scales or sizes are often computed (Shape -> Gather -> Concat) and only
// constants after folding.
//
//===----------------------------------------------------------------------===//
#include "ResizeAxes.h"

#include "bundlefit/support/Bytes.h"
#include "bundlefit/support/Error.h"

#include <set>

namespace bundlefit {

namespace {

template <typename T>
Value *fullRankConstant(Graph &graph, const Node &node, const std::string &operand, DType dtype,
                        const std::vector<T> &values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!values.empty())
    copyBytes(bytes.data(), values.data(), bytes.size());
  return graph.addConstant(graph.uniqueValueName(node.name + "_" + operand),
                           TensorType{dtype, {int64_t(values.size())}, {}}, std::move(bytes));
}

} // namespace

bool expandResizeAxes(Graph &graph, Node &node) {
  const Value *x = node.input(0);
  if (!x || !x->typeKnown)
    return false;
  for (size_t i = 1; i <= 3; ++i)
    if (node.input(i) && !node.input(i)->isConstant())
      return false;
  const int64_t rank = int64_t(x->type.rank());
  std::vector<int64_t> axes = node.attrs.getInts("axes");
  std::set<int64_t> seen;
  for (int64_t &axis : axes) {
    if (axis < -rank || axis >= rank)
      throw Error(ExitCode::Unsupported, node.describe() + ": attribute 'axes' entry " +
                                             std::to_string(axis) + " is out of range for X " +
                                             x->type.str());
    axis = axis < 0 ? axis + rank : axis;
    if (!seen.insert(axis).second)
      throw Error(ExitCode::Unsupported,
                  node.describe() + ": attribute 'axes' repeats axis " + std::to_string(axis));
  }
  const size_t n = axes.size();
  auto requireLength = [&](const Value *operand, const char *what, size_t expected) {
    if (size_t(operand->type.numElements()) != expected)
      throw Error(ExitCode::Unsupported, node.describe() + ": input '" + what + "' has " +
                                             std::to_string(operand->type.numElements()) +
                                             " elements; attribute 'axes' " + "names " +
                                             std::to_string(n) + " axes (expected " +
                                             std::to_string(expected) + ")");
  };
  const Value *roi = node.input(1), *scales = node.input(2), *sizes = node.input(3);
  if (roi && roi->type.numElements() > 0) {
    requireLength(roi, "roi", 2 * n);
    std::vector<float> given = roi->toFloats(), full(size_t(2 * rank));
    for (int64_t d = 0; d < rank; ++d)
      full[size_t(d)] = 0.0f, full[size_t(rank + d)] = 1.0f;
    for (size_t i = 0; i < n; ++i)
      full[size_t(axes[i])] = given[i], full[size_t(rank + axes[i])] = given[n + i];
    node.inputs[1] = fullRankConstant(graph, node, "roi", DType::Float32, full);
  }
  if (scales && scales->type.numElements() > 0) {
    requireLength(scales, "scales", n);
    std::vector<float> given = scales->toFloats(), full(size_t(rank), 1.0f);
    for (size_t i = 0; i < n; ++i)
      full[size_t(axes[i])] = given[i];
    node.inputs[2] = fullRankConstant(graph, node, "scales", DType::Float32, full);
  }
  if (sizes && sizes->type.numElements() > 0) {
    requireLength(sizes, "sizes", n);
    std::vector<int64_t> given = sizes->toInts(), full = x->type.shape;
    for (size_t i = 0; i < n; ++i)
      full[size_t(axes[i])] = given[i];
    node.inputs[3] = fullRankConstant(graph, node, "sizes", DType::Int64, full);
  }
  node.attrs.erase("axes");
  return true;
}

} // namespace bundlefit
