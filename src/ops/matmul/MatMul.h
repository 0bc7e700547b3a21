//===- MatMul.h - The matmul family's hooks (internal) ---------------------===//
//
// The functions of this folder that its registration (MatMulOps.cpp) puts
// into the definitions of Gemm and MatMul.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/kernels/abi.h"
#include "bundlefit/ops/OpRegistry.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

/// Reference interpreter kernels (MatMulInterp.cpp).
namespace matmul_interp {
void gemmKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs);
void matMulKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                  std::vector<Tensor> &outputs);
} // namespace matmul_interp

/// Gemm and MatMul's float kernel calls (MatMulLower.cpp), after their
/// registration.
void registerMatMulLowering(OpRegistry &registry);

namespace gemm_int8 {
/// Gemm and MatMul are fully-connected work for the cost models.
CostClass costClass(const Node &node);
/// bf_fully_connected_s8's geometry (both call it), every field set.
bf_fc_params fcParams(const Node &node, int64_t batches, int64_t accumDepth, int64_t outDepth,
                      int64_t transB, int64_t filterOffset);
} // namespace gemm_int8

} // namespace bundlefit
