//===- LowerInt8.h - Kernel calls of int8-quantized nodes (internal) -------===//
//
// Decides, as plain data, the int8 kernel call(s) of a quantized node from
// the arguments quant/Int8Params.h builds (the interpreter calls the same
// kernels with the same arguments). LowerGraph emits each call (KernelCall.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "KernelCall.h"

#include <vector>

namespace bundlefit {

/// The calls for an int8 node (needsInt8Kernel). Throws Unsupported when the
/// int8 kernels do not cover it.
std::vector<KernelCall> describeInt8Calls(const Node &node);

/// The CMSIS-NN call of a node prepareCmsisGraph marked (LowerCmsis.cpp).
KernelCall describeCmsisCall(const Node &node);
/// The strided copy of a CmsisLayout node (NCHW <-> NHWC).
KernelCall describeLayoutCopy(const Node &node);

} // namespace bundlefit
