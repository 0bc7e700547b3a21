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
  /// Scratch: the node's planned workspace (null when it has none).
  /// Struct: a pointer to a stack struct whose fields are `fields` (scalars,
  /// addresses, tables, scratch), for CMSIS-NN's context and quant structs.
  enum Kind { Address, I32, F32, I32Table, Scratch, Struct } kind = I32;
  const Value *value = nullptr; ///< Address: planned address + `i` bytes (nullptr: null).
  int64_t i = 0;
  float f = 0.0f;
  std::vector<int32_t> table;        ///< I32Table.
  std::vector<Int8KernelArg> fields; ///< Struct.
};

struct Int8KernelCall {
  std::string kernel;
  std::vector<Int8KernelArg> args;
  /// A library function the user links (CMSIS-NN), not one of the kernel
  /// bitcode's: declared, returning int32 (a status) or void.
  bool external = false;
  bool returnsVoid = false;
};

/// The calls for an int8 node (needsInt8Kernel). Throws Unsupported when the
/// int8 kernels do not cover it.
std::vector<Int8KernelCall> describeInt8Calls(const Node &node);

/// The CMSIS-NN call of a node prepareCmsisGraph marked (LowerCmsis.cpp).
Int8KernelCall describeCmsisCall(const Node &node);
/// The strided copy of a CmsisLayout node (NCHW <-> NHWC).
Int8KernelCall describeLayoutCopy(const Node &node);

} // namespace bundlefit
