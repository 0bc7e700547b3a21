//===- Int8Kernels.h - int8 execution of quantized nodes (internal) --------===//
#pragma once

#include "bundlefit/interp/Interpreter.h"

namespace bundlefit {

/// The int8 kernel for a quantized node (quant/Int8Params.h needsInt8Kernel),
/// or nullptr: float nodes, views and Transpose use the ordinary table.
KernelFn findInt8Kernel(const Node &node);

} // namespace bundlefit
