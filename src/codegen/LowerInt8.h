//===- LowerInt8.h - Kernel calls of int8-quantized nodes (internal) -------===//
//
// The int8 kernel call(s) of a quantized node, as plain data, from its
// operator's definition (Int8Def::lower, CmsisDef::call). LowerGraph emits
// each call (bundlefit/ops/KernelCall.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/KernelCall.h"

#include <vector>

namespace bundlefit {

/// The calls for an int8 node (needsInt8Kernel). Throws Unsupported when the
/// int8 kernels do not cover it.
std::vector<KernelCall> describeInt8Calls(const Node &node);

/// The CMSIS-NN call of a node prepareCmsisGraph marked (CmsisDef::call).
KernelCall describeCmsisCall(const Node &node);
/// The strided copy of a CmsisLayout node (NCHW <-> NHWC).
KernelCall describeLayoutCopy(const Node &node);

} // namespace bundlefit
