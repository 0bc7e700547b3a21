//===- KernelCall.h - A kernel call as plain data ---------------*- C++ -*-===//
//
// Every node the bundle runs through a library function - float kernels in
// their --memory-opt forms (codegen/LowerFused.h), int8 kernels and CMSIS-NN
// calls (each operator's definition: Int8Def::lower, CmsisDef::call) - is
// first described as a KernelCall: the function and its arguments as data.
// Code generation has one emitter that turns a call into LLVM IR, so an
// operator's definition says which kernel it calls with what without
// touching LLVM.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace bundlefit {

struct ConvPoolParts;

struct KernelArg {
  enum Kind {
    Address,    ///< `value`'s planned address + `i` bytes (nullptr: a null pointer).
    I32,        ///< `i`.
    F32,        ///< `f`.
    I32Table,   ///< `table` as a private constant global (read-only data, not weights).
    I8Table,    ///< `table` (int8 values) as a private constant int8 array.
    Scratch,    ///< The node's planned workspace (a null pointer when it has none).
    Struct,     ///< A pointer to a stack struct of `fields` (CMSIS-NN's context and quant structs).
    Activation, ///< Three arguments (kind, a, b): `node`'s fused activation.
  } kind = I32;
  const Value *value = nullptr;
  const Node *node = nullptr;
  int64_t i = 0;
  float f = 0.0f;
  std::vector<int32_t> table;
  std::vector<KernelArg> fields;

  static KernelArg address(const Value *value, int64_t byteOffset = 0) {
    KernelArg a;
    a.kind = Address, a.value = value, a.i = byteOffset;
    return a;
  }
  static KernelArg i32(int64_t v) {
    KernelArg a;
    a.kind = I32, a.i = v;
    return a;
  }
  static KernelArg f32(float v) {
    KernelArg a;
    a.kind = F32, a.f = v;
    return a;
  }
  static KernelArg i32Table(std::vector<int32_t> values) {
    KernelArg a;
    a.kind = I32Table, a.table = std::move(values);
    return a;
  }
  static KernelArg i8Table(const std::vector<int8_t> &values) {
    KernelArg a;
    a.kind = I8Table, a.table.assign(values.begin(), values.end());
    return a;
  }
  static KernelArg scratch() {
    KernelArg a;
    a.kind = Scratch;
    return a;
  }
  static KernelArg structOf(std::vector<KernelArg> fields) {
    KernelArg a;
    a.kind = Struct, a.fields = std::move(fields);
    return a;
  }
  static KernelArg activation(const Node &node) {
    KernelArg a;
    a.kind = Activation, a.node = &node;
    return a;
  }
};

struct KernelCall {
  std::string kernel;
  std::vector<KernelArg> args;
  /// A library function the user links (CMSIS-NN), not one of the kernel
  /// bitcode's: declared, returning int32 (a status) or void.
  bool external = false;
  bool returnsVoid = false;
  /// Keeps the nodes Activation arguments point into alive (a ConvPool's parts).
  std::shared_ptr<ConvPoolParts> parts;
};

} // namespace bundlefit
