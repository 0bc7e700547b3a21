//===- Pool.h - The pool family's hooks (internal) -------------------------===//
//
// The functions of this folder that its registration (PoolOps.cpp) puts
// into the definitions of MaxPool, AveragePool and their global forms.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/Int8Params.h"
#include "bundlefit/ops/KernelCall.h"
#include "bundlefit/ops/KernelParams.h"
#include "bundlefit/ops/OpRegistry.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

/// Reference interpreter kernels (PoolInterp.cpp).
namespace pool_interp {
void poolKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs);
void globalPoolKernel(const Node &node, const std::vector<const Tensor *> &inputs,
                      std::vector<Tensor> &outputs);
} // namespace pool_interp

/// The bundle's float calls (PoolLower.cpp; MaxPool also uint8 and int8).
namespace pool_float {
std::vector<KernelCall> lowerMaxPool(const Node &node, const PlanView &plan);
std::vector<KernelCall> lowerAveragePool(const Node &node, const PlanView &plan);
std::vector<KernelCall> lowerGlobalMaxPool(const Node &node, const PlanView &plan);
std::vector<KernelCall> lowerGlobalAveragePool(const Node &node, const PlanView &plan);
} // namespace pool_float

namespace pool_int8 {
/// bf_maxpool2d_s8 / bf_avgpool2d_s8 / bf_global_avgpool_s8 /
/// bf_avgpool2d_requant_s8's call; each takes poolParams().
KernelCall lowerPool(const Node &node);
/// The bf_pool_params of int8 MaxPool / AveragePool / GlobalAveragePool
/// `node` (its input: n, c, h, w; GlobalAveragePool's spatial dimensions
/// flattened into w, one window of 1 x w; chunk 0). The fused ConvPool
/// kernels take the same struct with their chunk (memopt/FusedOps.cpp).
bf_pool_params poolParams(const Node &node, const Int8PoolArgs &args);
} // namespace pool_int8

} // namespace bundlefit
