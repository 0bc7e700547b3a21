//===- MatMul.h - The matmul family's hooks (internal) ---------------------===//
//
// The functions of this folder that its registration (MatMulOps.cpp) puts
// into the definitions of Gemm and MatMul.
//
//===----------------------------------------------------------------------===//
#pragma once

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

/// The int8 reference (GemmReference.cpp).
namespace matmul_reference {
void gemm(const Node &node, const std::vector<const Tensor *> &inputs,
          std::vector<Tensor> &outputs);
} // namespace matmul_reference

/// int8 rule, CMSIS-NN mapping and device sizing (GemmInt8.cpp).
namespace gemm_int8 {
std::string whyFloat(const Node &node);
int weightAxis(const Node &node);
std::string cmsisChoose(const Node &node, std::string *whyNot);
void cmsisPrepare(Graph &graph, Node &node, const std::string &function, CmsisExtension extension);
void readFlattenedNhwc(Graph &graph, Node &node, int64_t C, int64_t H, int64_t W);
CostClass costClass(const Node &node);
} // namespace gemm_int8

} // namespace bundlefit
