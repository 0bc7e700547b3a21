//===- Quant.h - The quant family's hooks (internal) -----------------------===//
//
// The functions of this folder that its registration (QuantOps.cpp) puts
// into the definitions of ONNX QuantizeLinear/DequantizeLinear and the integer Conv/MatMul of the
// conformance tests.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/OpRegistry.h"

#include <vector>

namespace bundlefit {

/// Reference interpreter kernels (LinearQuantInterp.cpp).
namespace linear_quant_interp {
void quantizeLinearKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                          std::vector<Tensor> &outputs);
void dequantizeLinearKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                            std::vector<Tensor> &outputs);
void matMulIntegerKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                         std::vector<Tensor> &outputs);
void qlinearMatMulKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                         std::vector<Tensor> &outputs);
void convIntegerKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                       std::vector<Tensor> &outputs);
void qlinearConvKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                       std::vector<Tensor> &outputs);
} // namespace linear_quant_interp

/// The int8 references of bundlefit's conversion nodes (QuantReference.cpp).
namespace quant_reference {
void quantize(const Node &node, const std::vector<const Tensor *> &inputs,
              std::vector<Tensor> &outputs);
void dequantize(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs);
void rescale(const Node &node, const std::vector<const Tensor *> &inputs,
             std::vector<Tensor> &outputs);
} // namespace quant_reference

} // namespace bundlefit
