//===- MatMul.h - The matmul family's hooks (internal) ---------------------===//
//
// The functions of this folder that its registration (MatMulOps.cpp) puts
// into the definitions of Gemm and MatMul.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/OpRegistry.h"

#include <vector>

namespace bundlefit {

/// Reference interpreter kernels (MatMulInterp.cpp).
namespace matmul_interp {
void gemmKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs);
void matMulKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                  std::vector<Tensor> &outputs);
} // namespace matmul_interp

/// The int8 reference (GemmReference.cpp).
namespace matmul_reference {
void gemm(const Node &node, const std::vector<const Tensor *> &inputs,
          std::vector<Tensor> &outputs);
} // namespace matmul_reference

} // namespace bundlefit
