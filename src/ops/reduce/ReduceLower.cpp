//===- ReduceLower.cpp - Bundle kernel calls of the reduce family ----------===//
//
// The Reduce* ops are one bf_reduce_f32 over a loop nest of the input whose
// output strides are 0 on the reduced axes; ArgMax/ArgMin and Hardmax work
// on outer x n x inner around their axis.
//
//===----------------------------------------------------------------------===//
#include "reduce/Reduce.h"

#include "bundlefit/kernels/abi.h" // bf_reduce_op
#include "bundlefit/ops/LowerHelpers.h"

#include <algorithm>

namespace bundlefit {
namespace {

using namespace lowering;
using Calls = std::vector<KernelCall>;

const std::pair<const char *, int32_t> kReductions[] = {
    {"ReduceSum", BF_REDUCE_SUM},        {"ReduceMean", BF_REDUCE_SUM},
    {"ReduceMax", BF_REDUCE_MAX},        {"ReduceMin", BF_REDUCE_MIN},
    {"ReduceProd", BF_REDUCE_PROD},      {"ReduceL1", BF_REDUCE_L1},
    {"ReduceL2", BF_REDUCE_L2},          {"ReduceSumSquare", BF_REDUCE_SUM_SQUARE},
    {"ReduceLogSum", BF_REDUCE_LOG_SUM}, {"ReduceLogSumExp", BF_REDUCE_LOG_SUM_EXP}};

Calls lowerReduce(const Node &node, const PlanView &) {
  int32_t op = -1;
  for (const auto &[name, code] : kReductions)
    if (node.opType == name)
      op = code;
  const Value *x = input(node, 0), *y = node.output(0);
  requireFloat(node, x), requireFloat(node, y);
  const Shape &s = x->type.shape;
  const int64_t rank = int64_t(s.size());
  Ints axes = node.attrs.getInts("axes");
  if (axes.empty())
    axes = constantInts(node, 1, "axes");
  if (axes.empty()) {
    if (node.attrs.getInt("noop_with_empty_axes", 0))
      return {copyBytes(x, y)};
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }
  Shape kept = s;
  for (int64_t a : axes)
    kept[a < 0 ? a + rank : a] = 1;
  Ints outStrides = denseStrides(kept);
  for (int64_t d = 0; d < rank; ++d)
    if (kept[d] == 1)
      outStrides[d] = 0;
  LoopNest nest{s, {denseStrides(s), outStrides}};
  nest.simplify();
  const int64_t outCount = y->type.numElements();
  // ReduceMean is a sum scaled by the reduced count.
  const double scale = node.opType == "ReduceMean"
                           ? double(outCount) / double(std::max<int64_t>(1, x->type.numElements()))
                           : 1.0;
  return {call("bf_reduce_f32",
               {KernelArg::address(x), KernelArg::address(y),
                KernelArg::i32Table(padFront(nest.dims, 1, node)),
                KernelArg::i32Table(padFront(nest.strides[1], 0, node)), KernelArg::i32(outCount),
                KernelArg::i32(op), KernelArg::f32(float(scale))})};
}

/// outer x n x inner around `axis` of `shape`.
void splitAround(const Shape &shape, int64_t axis, int64_t &outer, int64_t &n, int64_t &inner) {
  const int64_t rank = int64_t(shape.size());
  if (axis < 0)
    axis += rank;
  outer = product(shape, 0, size_t(axis));
  n = shape[size_t(axis)];
  inner = product(shape, size_t(axis) + 1, shape.size());
}

Calls lowerArgMax(const Node &node, const PlanView &) {
  const Value *x = input(node, 0), *y = node.output(0);
  requireFloat(node, x);
  int64_t outer, n, inner;
  splitAround(x->type.shape, node.attrs.getInt("axis", 0), outer, n, inner);
  return {call("bf_argmax_f32",
               {KernelArg::address(x), KernelArg::address(y), KernelArg::i32(outer),
                KernelArg::i32(n), KernelArg::i32(inner), KernelArg::i32(node.opType == "ArgMin"),
                KernelArg::i32(node.attrs.getInt("select_last_index", 0) != 0)})};
}

Calls lowerHardmax(const Node &node, const PlanView &) {
  const Value *x = input(node, 0), *y = node.output(0);
  requireFloat(node, x);
  int64_t outer, n, inner;
  splitAround(x->type.shape, node.attrs.getInt("axis", -1), outer, n, inner);
  if (node.attrs.getInt("coerce_to_2d", 0) != 0) // opset < 13: over dims [axis, rank)
    n *= inner, inner = 1;
  return {
      call("bf_hardmax_f32", {KernelArg::address(x), KernelArg::address(y), KernelArg::i32(outer),
                              KernelArg::i32(n), KernelArg::i32(inner)})};
}

} // namespace

void registerReduceLowering(OpRegistry &registry) {
  for (const auto &[name, code] : kReductions)
    registry.at(name).lower = lowerReduce;
  registry.at("ArgMax").lower = lowerArgMax;
  registry.at("ArgMin").lower = lowerArgMax;
  registry.at("Hardmax").lower = lowerHardmax;
}

} // namespace bundlefit
