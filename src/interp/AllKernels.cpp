#include "bundlefit/interp/Interpreter.h"

#include "Int8Kernels.h"

#include "bundlefit/support/Error.h"

namespace bundlefit {

const KernelTable &KernelTable::get() {
  static const KernelTable table = [] {
    KernelTable t;
    registerConvKernels(t);
    registerPoolKernels(t);
    registerMatMulKernels(t);
    registerNormKernels(t);
    registerResizeKernels(t);
    registerElementwiseKernels(t);
    registerShapeKernels(t);
    registerReduceKernels(t);
    registerFusedKernels(t);
    registerUnaryMathKernels(t);
    registerMovementKernels(t);
    registerIndexKernels(t);
    registerLinearQuantKernels(t);
    return t;
  }();
  return table;
}

void KernelTable::add(const std::string &opType, KernelFn fn) { kernels_[opType] = fn; }

KernelFn KernelTable::find(const std::string &opType) const {
  auto it = kernels_.find(opType);
  return it == kernels_.end() ? nullptr : it->second;
}

std::vector<Tensor> evaluateNode(const Node &node, const std::vector<const Tensor *> &inputs) {
  // Quantized nodes run the bundles' int8 kernels (Int8Kernels.cpp).
  KernelFn kernel = findInt8Kernel(node);
  if (!kernel)
    kernel = KernelTable::get().find(node.opType);
  if (!kernel)
    throw Error(ExitCode::Unsupported,
                node.describe() + ": the reference interpreter has no kernel");
  std::vector<Tensor> outputs;
  outputs.reserve(node.outputs.size());
  for (const Value *output : node.outputs)
    outputs.emplace_back(output->type);
  kernel(node, inputs, outputs);
  return outputs;
}

} // namespace bundlefit
