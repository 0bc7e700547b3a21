//===- Conv.h - The conv family's hooks (internal) -------------------------===//
//
// The functions of this folder that its registration (ConvOps.cpp) puts
// into the definitions of Conv and ConvTranspose.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/kernels/abi.h"
#include "bundlefit/ops/Int8Params.h"
#include "bundlefit/ops/KernelCall.h"
#include "bundlefit/ops/OpRegistry.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

/// Reference interpreter kernels (ConvInterp.cpp).
namespace conv_interp {
void convKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs);
void convTransposeKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                         std::vector<Tensor> &outputs);
} // namespace conv_interp

/// The bundle's float calls (ConvLower.cpp), the in-place forms included.
namespace conv_float {
std::vector<KernelCall> lowerConv(const Node &node, const PlanView &plan);
std::vector<KernelCall> lowerConvTranspose(const Node &node, const PlanView &plan);
} // namespace conv_float

/// What the int8 ConvPool (memopt/FusedOps.cpp) and Gemm/MatMul share with
/// Conv's int8 call (ConvInt8.cpp).
namespace conv_int8 {
/// The int8 kernels' geometry (m and groups as computed: a depthwise conv as
/// the grouped conv it is) and requantization scalars, every field set.
bf_conv_params convParams(const Int8ConvArgs &a);
bf_quant_params quantParams(const Int8ConvArgs &a);
} // namespace conv_int8

} // namespace bundlefit
