//===- Pool.h - The pool family's hooks (internal) -------------------------===//
//
// The functions of this folder that its registration (PoolOps.cpp) puts
// into the definitions of MaxPool, AveragePool and their global forms.
//
//===----------------------------------------------------------------------===//
#pragma once

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

/// The int8 references (PoolReference.cpp).
namespace pool_reference {
void pool(const Node &node, const std::vector<const Tensor *> &inputs,
          std::vector<Tensor> &outputs);
void globalAveragePool(const Node &node, const std::vector<const Tensor *> &inputs,
                       std::vector<Tensor> &outputs);
} // namespace pool_reference

/// int8 rule, CMSIS-NN mapping and device sizing (PoolInt8.cpp).
namespace pool_int8 {
std::string whyFloat(const Node &node);
std::string cmsisChoose(const Node &node, std::string *whyNot);
int64_t cmsisAvgPoolScratch(const Node &node, const std::string &function,
                            CmsisExtension extension);
uint64_t nnlibScratch(const Node &node);
} // namespace pool_int8

} // namespace bundlefit
