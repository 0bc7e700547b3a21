//===- FusedKernels.cpp - Reference kernels of fused operators -------------===//
//
// ConvPool is evaluated as what it replaced: the reference Conv, then the
// reference pool, on a temporary. The interpreter has no memory limit; the
// fused bundle kernel is checked against exactly this.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/ir/FusedOps.h"

namespace bundlefit {

namespace {

void convPoolKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                    std::vector<Tensor> &outputs) {
  std::unique_ptr<ConvPoolParts> parts = splitConvPool(node);
  std::vector<const Tensor *> convInputs(inputs.begin(), inputs.begin() + 2);
  if (parts->hasBias)
    convInputs.push_back(inputs.at(2));
  std::vector<Tensor> conv = evaluateNode(parts->conv, convInputs);
  std::vector<Tensor> pooled = evaluateNode(parts->pool, {&conv[0]});
  outputs[0] = std::move(pooled[0]);
}

} // namespace

void registerFusedKernels(KernelTable &table) { table.add(kConvPoolOp, convPoolKernel); }

} // namespace bundlefit
