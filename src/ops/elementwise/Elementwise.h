//===- Elementwise.h - The elementwise family's hooks (internal) -----------===//
//
// The functions of this folder that its registration (ElementwiseOps.cpp) puts
// into the definitions of arithmetic, activations, comparisons, Cast.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/KernelCall.h"
#include "bundlefit/ops/OpRegistry.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

/// Reference interpreter kernels (ElementwiseInterp.cpp).
namespace elementwise_interp {
void binaryKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                  std::vector<Tensor> &outputs);
void preluKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                 std::vector<Tensor> &outputs);
void reluKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs);
void clipKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs);
void floatUnaryKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                      std::vector<Tensor> &outputs);
void castKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs);
void powKernel(const Node &node, const std::vector<const Tensor *> &inputs,
               std::vector<Tensor> &outputs);
void compareKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                   std::vector<Tensor> &outputs);
void logicalKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                   std::vector<Tensor> &outputs);
void whereKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                 std::vector<Tensor> &outputs);
void floatTestKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                     std::vector<Tensor> &outputs);
} // namespace elementwise_interp

/// The int8 references (ElementwiseReference.cpp).
namespace elementwise_reference {
void relu(const Node &node, const std::vector<const Tensor *> &inputs,
          std::vector<Tensor> &outputs);
void clip(const Node &node, const std::vector<const Tensor *> &inputs,
          std::vector<Tensor> &outputs);
} // namespace elementwise_reference

namespace elementwise_int8 {
/// bf_clamp_s8 / bf_requantize_table_s8's call (Relu, Clip, Rescale).
std::vector<KernelCall> lowerRescale(const Node &node);
} // namespace elementwise_int8

/// The bundle kernel calls (OpDef::lower) of arithmetic, activations, Clip, Cast, comparisons,
/// logic, Where, IsNaN/IsInf (ElementwiseLower.cpp), after the float registration.
void registerElementwiseLowering(OpRegistry &registry);

} // namespace bundlefit
