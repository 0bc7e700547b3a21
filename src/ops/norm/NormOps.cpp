//===- NormOps.cpp - Batch/Layer/InstanceNormalization, (Log)Softmax ------===//
//
// BatchNormalization (inference only): X[N,C,...], scale/B/mean/var [C]
//   -> Y = scale * (X - mean) / sqrt(var + epsilon) + B. Only output 0;
//   training_mode=1 is unsupported. MACs = |Y| (one multiply-add per element
//   once folded into a scale and shift).
// Softmax / LogSoftmax: opset-13 semantics, 'axis' (default -1) is the one dim
//   normalised. With bundlefit's coerce_to_2d=1, the opset<13 semantics:
//   normalise over the flattened dims [axis, rank), axis default 1. MACs = 0.
//
//===----------------------------------------------------------------------===//
#include "norm/Norm.h"

#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/Softmax.h"
#include "bundlefit/support/CheckedMath.h"

#include "bundlefit/ops/ShapeHelpers.h"

#include <algorithm>

namespace bundlefit {

using namespace shape_helpers;

namespace {

void inferBatchNorm(Node &node) {
  const Value &x = requireInput(node, 0, "X");
  requireSingleOutput(node, "running_mean / running_var");
  if (node.attrs.getInt("training_mode", 0) != 0)
    unsupported(node, "attribute 'training_mode'=1 is not supported (inference only)");
  if (x.type.rank() < 2)
    unsupported(node, "input X " + x.type.str() + " must have rank >= 2 (N,C,...)");
  int64_t c = x.type.shape[1];
  static const char *names[] = {"scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i <= 4; ++i) {
    const Value &p = requireInput(node, i, names[i - 1]);
    if (p.type.shape != Shape{c})
      unsupported(node, std::string("input ") + names[i - 1] + " " + p.type.str() +
                            " must have shape [" + std::to_string(c) + "]");
  }
  setDTypeAndShape(*node.output(0), x.type.dtype, x.type.shape);
}

uint64_t batchNormMacs(const Node &node) {
  const Value *y = node.output(0);
  return y ? uint64_t(y->type.numElements()) : 0;
}

void inferSoftmax(Node &node) {
  const Value &x = requireInput(node, 0, "input");
  int64_t rank = int64_t(x.type.rank());
  int64_t coerce = node.attrs.getInt("coerce_to_2d", 0);
  if (coerce != 0 && coerce != 1)
    unsupported(node, "attribute 'coerce_to_2d'=" + std::to_string(coerce) + " must be 0 or 1");
  if (rank == 0)
    unsupported(node, "input " + x.type.str() + " must have rank >= 1");
  normalizeAxis(node, node.attrs.getInt("axis", coerce ? 1 : -1), rank, "axis");
  setDTypeAndShape(*node.output(0), x.type.dtype, x.type.shape);
}

/// LayerNormalization(X, Scale, B?): normalises over dims [axis, rank). Scale
/// and B must have exactly those dims; outputs Y and, optionally, Mean and
/// InvStdDev (float32, X's shape with the normalised dims set to 1).
void inferLayerNorm(Node &node) {
  const Value &x = requireInput(node, 0, "X");
  if (x.type.dtype != DType::Float32)
    unsupported(node, "input X " + x.type.str() + ": only float32 is supported");
  const int64_t rank = int64_t(x.type.rank());
  if (rank == 0)
    unsupported(node, "input X must have rank >= 1");
  const int64_t axis = normalizeAxis(node, node.attrs.getInt("axis", -1), rank, "axis");
  const Shape inner(x.type.shape.begin() + axis, x.type.shape.end());
  const char *names[] = {"X", "Scale", "B"};
  for (size_t i = 1; i < 3; ++i) {
    const Value *p = i == 1 ? &requireInput(node, 1, "Scale") : node.input(i);
    if (p && p->type.shape != inner)
      unsupported(node, std::string("input ") + names[i] + " " + p->type.str() +
                            " must have shape " + shapeToString(inner));
    if (p && p->type.dtype != DType::Float32)
      unsupported(node, std::string("input ") + names[i] + " must be float32");
  }
  if (node.outputs.empty() || !node.output(0))
    unsupported(node, "has no output Y");
  setDTypeAndShape(*node.output(0), x.type.dtype, x.type.shape);
  Shape stats = x.type.shape;
  for (int64_t d = axis; d < rank; ++d)
    stats[size_t(d)] = 1;
  for (size_t i = 1; i < node.outputs.size(); ++i)
    if (node.output(i))
      setDTypeAndShape(*node.output(i), DType::Float32, stats);
}

/// InstanceNormalization(X[N,C,...], scale[C], B[C]).
void inferInstanceNorm(Node &node) {
  const Value &x = requireInput(node, 0, "input");
  requireSingleOutput(node, "output");
  if (x.type.dtype != DType::Float32 || x.type.rank() < 3)
    unsupported(node, "input " + x.type.str() + " must be float32 of rank >= 3 (N,C,...)");
  const int64_t c = x.type.shape[1];
  for (size_t i = 1; i <= 2; ++i) {
    const Value &p = requireInput(node, i, i == 1 ? "scale" : "B");
    if (p.type.shape != Shape{c})
      unsupported(node, "input " + p.name + " " + p.type.str() + " must have shape [" +
                            std::to_string(c) + "]");
  }
  setDTypeAndShape(*node.output(0), x.type.dtype, x.type.shape);
}

uint64_t noMacs(const Node &) { return 0; }

} // namespace

SoftmaxExtents softmaxExtents(const Node &node, const Shape &shape) {
  const int64_t rank = int64_t(shape.size());
  const bool coerce = node.attrs.getInt("coerce_to_2d", 0) != 0;
  int64_t axis = node.attrs.getInt("axis", coerce ? 1 : -1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= std::max<int64_t>(rank, 1))
    unsupported(node, "axis out of range");
  auto product = [&](int64_t begin, int64_t end) {
    std::optional<int64_t> count =
        checkedElementCount(Shape(shape.begin() + std::min(begin, rank), shape.begin() + end));
    if (!count)
      unsupported(node, "input shape " + intsToString(shape) +
                            ": the element count is negative or does not fit in int64");
    return *count;
  };
  SoftmaxExtents extents;
  extents.outer = product(0, axis);
  if (coerce) {
    extents.len = product(axis, rank);
  } else {
    extents.len = rank ? shape[size_t(axis)] : 1;
    extents.inner = product(axis + 1, rank);
  }
  return extents;
}

void registerNormOps(OpRegistry &registry) {
  using namespace norm_interp;
  registry.add({"BatchNormalization", inferBatchNorm, batchNormMacs})
      .with(kOpElementwise)
      .runs(batchNormKernel);
  registry.add({"Softmax", inferSoftmax, noMacs}).runs(softmaxKernel);
  registry.add({"LogSoftmax", inferSoftmax, noMacs}).runs(softmaxKernel);
  registry.add({"LayerNormalization", inferLayerNorm, batchNormMacs}).runs(layerNormKernel);
  registry.add({"InstanceNormalization", inferInstanceNorm, batchNormMacs})
      .runs(instanceNormKernel);
  registerNormLowering(registry);
}

} // namespace bundlefit
