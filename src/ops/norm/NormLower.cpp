//===- NormLower.cpp - Bundle kernel calls of the normalisation family -----===//
//
// BatchNormalization, LayerNormalization, InstanceNormalization and
// (Log)Softmax: one float kernel each over their outer/channel/inner extents.
//
//===----------------------------------------------------------------------===//
#include "norm/Norm.h"

#include "bundlefit/ops/LowerHelpers.h"
#include "bundlefit/ops/Softmax.h"

namespace bundlefit {
namespace {

using namespace lowering;
using Calls = std::vector<KernelCall>;

KernelArg epsilon(const Node &node) {
  return KernelArg::f32(node.attrs.getFloat("epsilon", 1e-5f));
}

Calls lowerBatchNorm(const Node &node, const PlanView &) {
  const Value *x = input(node, 0), *y = node.output(0);
  requireFloat(node, x), requireFloat(node, y);
  for (size_t i = 1; i < 5; ++i)
    requireFloat(node, input(node, i));
  const Shape &s = x->type.shape;
  if (s.size() < 2)
    unsupported(node, "input rank below 2");
  return {call("bf_batchnorm_f32",
               {KernelArg::address(x), KernelArg::address(y), KernelArg::i32(s[0]),
                KernelArg::i32(s[1]), KernelArg::i32(product(s, 2, s.size())),
                KernelArg::address(input(node, 1)), KernelArg::address(input(node, 2)),
                KernelArg::address(input(node, 3)), KernelArg::address(input(node, 4)),
                epsilon(node)})};
}

Calls lowerSoftmax(const Node &node, const PlanView &) {
  const Value *x = input(node, 0), *y = node.output(0);
  requireFloat(node, x), requireFloat(node, y);
  const SoftmaxExtents e = softmaxExtents(node, x->type.shape);
  return {call(node.opType == "LogSoftmax" ? "bf_logsoftmax_f32" : "bf_softmax_f32",
               {KernelArg::address(x), KernelArg::address(y), KernelArg::i32(e.outer),
                KernelArg::i32(e.len), KernelArg::i32(e.inner)})};
}

Calls lowerLayerNorm(const Node &node, const PlanView &plan) {
  const Value *x = input(node, 0), *scale = input(node, 1), *y = node.output(0);
  requireFloat(node, x), requireFloat(node, y);
  const Shape &s = x->type.shape;
  int64_t axis = node.attrs.getInt("axis", -1);
  if (axis < 0)
    axis += int64_t(s.size());
  const int64_t inner = product(s, size_t(axis), s.size());
  const int64_t outer = inner == 0 ? 0 : x->type.numElements() / inner;
  // Mean and InvStdDev are written only when someone reads them.
  auto optionalOutput = [&](size_t i) {
    const Value *v = node.output(i);
    return KernelArg::address(v && !v->name.empty() && plan.placementOf(v) ? v : nullptr);
  };
  return {call("bf_layernorm_f32",
               {KernelArg::address(x), KernelArg::address(scale), KernelArg::address(node.input(2)),
                KernelArg::address(y), optionalOutput(1), optionalOutput(2), KernelArg::i32(outer),
                KernelArg::i32(inner), epsilon(node)})};
}

Calls lowerInstanceNorm(const Node &node, const PlanView &) {
  const Value *x = input(node, 0), *y = node.output(0);
  requireFloat(node, x), requireFloat(node, y);
  const Shape &s = x->type.shape;
  return {call("bf_instancenorm_f32",
               {KernelArg::address(x), KernelArg::address(input(node, 1)),
                KernelArg::address(input(node, 2)), KernelArg::address(y), KernelArg::i32(s[0]),
                KernelArg::i32(s[1]), KernelArg::i32(product(s, 2, s.size())), epsilon(node)})};
}

} // namespace

void registerNormLowering(OpRegistry &registry) {
  registry.at("BatchNormalization").lower = lowerBatchNorm;
  registry.at("Softmax").lower = lowerSoftmax;
  registry.at("LogSoftmax").lower = lowerSoftmax;
  registry.at("LayerNormalization").lower = lowerLayerNorm;
  registry.at("InstanceNormalization").lower = lowerInstanceNorm;
}

} // namespace bundlefit
