//===- PoolLower.cpp - The bundle's float MaxPool / AveragePool calls ------===//
//
// 1-D and 2-D: bf_maxpool2d_<f32|u8|i8> / bf_avgpool2d_f32 with a
// bf_pool_params (common/WindowParams.h); MaxPool also runs uint8 and int8
// tensors (the max of integers is exact). 3-D: bf_pool3d_f32 with a
// bf_window3d_params. Global pools: one reduction per plane.
//
//===----------------------------------------------------------------------===//
#include "common/WindowParams.h"
#include "pool/Pool.h"

#include "bundlefit/ops/KernelParams.h"
#include "bundlefit/ops/LowerHelpers.h"

namespace bundlefit {

namespace {

using namespace lowering; // Ints, input, requireFloat, call

std::vector<KernelCall> lowerPool(const Node &node, const PlanView &plan, bool isMax) {
  const Value *x = input(node, 0), *y = node.output(0);
  if (!y)
    unsupported(node, "output 0 is missing");
  const DType dtype = y->type.dtype;
  const bool intMax = isMax && (dtype == DType::UInt8 || dtype == DType::Int8);
  if (!intMax)
    requireFloat(node, y);
  requireDType(node, x, dtype);
  // Indices has a placement when something reads it (or it is a model output).
  if (node.outputs.size() > 1 && node.output(1) && plan.placementOf(node.output(1)))
    unsupported(node, "MaxPool's Indices output");
  if (node.attrs.getInt("storage_order", 0) != 0)
    unsupported(node, "storage_order=1");
  const Shape &xs = x->type.shape, &ys = y->type.shape;
  if (xs.size() == 5) {
    if (intMax)
      requireFloat(node, y);
    const bf_window3d_params pool = window_params::pool3dParams(node, xs, ys, isMax);
    return {call("bf_pool3d_f32",
                 {KernelArg::address(x), KernelArg::address(y), kernelParams(node, pool)})};
  }
  const bf_pool_params pool = window_params::poolParams(node, xs, ys, isMax);
  if (!isMax && (pool.dil_h != 1 || pool.dil_w != 1))
    unsupported(node, "AveragePool with dilations");
  const std::string kernel =
      isMax ? std::string("bf_maxpool2d_") + (intMax ? intKernelSuffix(dtype) : "f32")
            : std::string("bf_avgpool2d_f32");
  return {call(kernel, {KernelArg::address(x), KernelArg::address(y), kernelParams(node, pool)})};
}

std::vector<KernelCall> lowerGlobalPool(const Node &node, bool isMax) {
  const Value *x = input(node, 0), *y = node.output(0);
  requireFloat(node, x), requireFloat(node, y);
  const Shape &s = x->type.shape;
  if (s.size() < 2)
    unsupported(node, "input rank below 2");
  return {call(isMax ? "bf_global_maxpool_f32" : "bf_global_avgpool_f32",
               {KernelArg::address(x), KernelArg::address(y), KernelArg::i32(s[0] * s[1]),
                KernelArg::i32(product(s, 2, s.size()))})};
}

} // namespace

namespace pool_float {
std::vector<KernelCall> lowerMaxPool(const Node &node, const PlanView &plan) {
  return lowerPool(node, plan, true);
}
std::vector<KernelCall> lowerAveragePool(const Node &node, const PlanView &plan) {
  return lowerPool(node, plan, false);
}
std::vector<KernelCall> lowerGlobalMaxPool(const Node &node, const PlanView &) {
  return lowerGlobalPool(node, true);
}
std::vector<KernelCall> lowerGlobalAveragePool(const Node &node, const PlanView &) {
  return lowerGlobalPool(node, false);
}
} // namespace pool_float

} // namespace bundlefit
