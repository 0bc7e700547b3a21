//===- LowerInt8.h - Kernel calls of int8-quantized nodes (internal) -------===//
//
// Decides, as plain data, the int8 kernel call(s) of a quantized node from
// the arguments quant/Int8Params.h builds (the interpreter calls the same
// kernels with the same arguments). LowerGraph turns each call into LLVM IR:
// tables become private constant globals (read-only data, not weights).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

struct Int8KernelArg {
  enum Kind { Address, I32, F32, I32Table } kind = I32;
  const Value *value = nullptr; ///< Address: planned address + `i` bytes (nullptr: null).
  int64_t i = 0;
  float f = 0.0f;
  std::vector<int32_t> table; ///< I32Table.
};

struct Int8KernelCall {
  std::string kernel;
  std::vector<Int8KernelArg> args;
};

/// The calls for an int8 node (needsInt8Kernel). Throws Unsupported when the
/// int8 kernels do not cover it.
std::vector<Int8KernelCall> describeInt8Calls(const Node &node);

} // namespace bundlefit
