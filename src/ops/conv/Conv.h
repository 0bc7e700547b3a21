//===- Conv.h - The conv family's hooks (internal) -------------------------===//
//
// The functions of this folder that its registration (ConvOps.cpp) puts
// into the definitions of Conv and ConvTranspose.
//
//===----------------------------------------------------------------------===//
#pragma once

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

/// The int8 reference (ConvReference.cpp).
namespace conv_reference {
void conv(const Node &node, const std::vector<const Tensor *> &inputs,
          std::vector<Tensor> &outputs);
} // namespace conv_reference

/// int8 rule, CMSIS-NN mapping and device sizing (ConvInt8.cpp).
namespace conv_int8 {
std::string whyFloat(const Node &node);
int weightAxis(const Node &node);
std::string cmsisChoose(const Node &node, std::string *whyNot);
int64_t cmsisScratch(const Node &node, const std::string &function, CmsisExtension extension);
void cmsisPrepare(Graph &graph, Node &node, const std::string &function, CmsisExtension extension);
CostClass costClass(const Node &node);
uint64_t nnlibScratch(const Node &node);
} // namespace conv_int8

} // namespace bundlefit
