//===- IndexLower.cpp - Bundle kernel calls of the index family ------------===//
//
// GatherElements, ScatterElements, GatherND and OneHot: one kernel per
// index dtype, moving elements of any size (passed in bytes).
//
//===----------------------------------------------------------------------===//
#include "index/Index.h"

#include "bundlefit/kernels/abi.h" // bf_scatter_reduction
#include "bundlefit/ops/LowerHelpers.h"

namespace bundlefit {
namespace {

using namespace lowering;
using Calls = std::vector<KernelCall>;

Calls lowerGatherElements(const Node &node, const PlanView &plan) {
  const bool scatter = node.opType == "ScatterElements";
  const Value *data = input(node, 0), *indices = input(node, 1), *y = node.output(0);
  const Shape &ds = data->type.shape, &is = indices->type.shape;
  int64_t axis = node.attrs.getInt("axis", 0);
  if (axis < 0)
    axis += int64_t(ds.size());
  const int64_t outer = product(ds, 0, size_t(axis)),
                inner = product(ds, size_t(axis) + 1, ds.size());
  const KernelArg elemSize = KernelArg::i32(int64_t(dtypeSize(y->type.dtype)));
  const std::string suffix = indexSuffix(node, indices);
  if (!scatter)
    return {call("bf_gather_elements_" + suffix,
                 {KernelArg::address(data), KernelArg::address(indices), KernelArg::address(y),
                  KernelArg::i32(outer), KernelArg::i32(ds[size_t(axis)]),
                  KernelArg::i32(is[size_t(axis)]), KernelArg::i32(inner), elemSize})};
  const std::string mode = node.attrs.getString("reduction", "none");
  const int32_t reduction = mode == "add"   ? BF_SCATTER_ADD
                            : mode == "mul" ? BF_SCATTER_MUL
                                            : BF_SCATTER_NONE;
  if (reduction != BF_SCATTER_NONE)
    requireFloat(node, y);
  Calls calls;
  std::optional<PlanView::Where> from = plan.placementOf(data), to = plan.placementOf(y);
  if (!from || !to || from->region != to->region || from->offset != to->offset)
    calls.push_back(copyBytes(data, y));
  calls.push_back(call("bf_scatter_elements_" + suffix,
                       {KernelArg::address(y), KernelArg::address(indices),
                        KernelArg::address(input(node, 2)), KernelArg::i32(outer),
                        KernelArg::i32(ds[size_t(axis)]), KernelArg::i32(is[size_t(axis)]),
                        KernelArg::i32(inner), elemSize, KernelArg::i32(reduction)}));
  return calls;
}

Calls lowerGatherND(const Node &node, const PlanView &) {
  const Value *data = input(node, 0), *indices = input(node, 1), *y = node.output(0);
  const Shape &ds = data->type.shape, &is = indices->type.shape;
  const int64_t b = node.attrs.getInt("batch_dims", 0), k = is.back();
  const Ints strides = denseStrides(ds);
  const int64_t batches = product(is, 0, size_t(b));
  const int64_t tuples = k == 0 || batches == 0 ? 0 : indices->type.numElements() / k / batches;
  return {call("bf_gather_nd_" + indexSuffix(node, indices),
               {KernelArg::address(data), KernelArg::address(indices), KernelArg::address(y),
                KernelArg::i32(batches), KernelArg::i32(tuples), KernelArg::i32(k),
                intTable(node, Ints(ds.begin() + b, ds.begin() + b + k)),
                intTable(node, Ints(strides.begin() + b, strides.begin() + b + k)),
                KernelArg::i32(product(ds, size_t(b), ds.size())),
                KernelArg::i32(product(ds, size_t(b + k), ds.size())),
                KernelArg::i32(int64_t(dtypeSize(y->type.dtype)))})};
}

Calls lowerOneHot(const Node &node, const PlanView &) {
  const Value *indices = input(node, 0), *y = node.output(0);
  const Shape &os = y->type.shape;
  int64_t axis = node.attrs.getInt("axis", -1);
  if (axis < 0)
    axis += int64_t(os.size());
  return {
      call("bf_one_hot_" + indexSuffix(node, indices),
           {KernelArg::address(indices), KernelArg::address(input(node, 2)), KernelArg::address(y),
            KernelArg::i32(product(os, 0, size_t(axis))), KernelArg::i32(os[size_t(axis)]),
            KernelArg::i32(product(os, size_t(axis) + 1, os.size())),
            KernelArg::i32(int64_t(dtypeSize(y->type.dtype)))})};
}

} // namespace

void registerIndexLowering(OpRegistry &registry) {
  registry.at("GatherElements").lower = lowerGatherElements;
  registry.at("ScatterElements").lower = lowerGatherElements;
  registry.at("GatherND").lower = lowerGatherND;
  registry.at("OneHot").lower = lowerOneHot;
}

} // namespace bundlefit
