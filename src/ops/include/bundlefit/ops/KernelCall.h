//===- KernelCall.h - A kernel call as plain data ---------------*- C++ -*-===//
//
// Every node the bundle runs through a library function - float kernels
// (OpDef::lower, their --memory-opt forms included), int8
// kernels and CMSIS-NN calls (Int8Def::lower, CmsisDef::call) - is first
// described as a KernelCall: the function and its arguments as data.
// Code generation has one emitter that turns a call into LLVM IR, so an
// operator's definition says which kernel it calls with what without
// touching LLVM.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace bundlefit {

struct ConvPoolParts;

/// How code generation may share one kernel's code between its calls
/// (codegen/KernelClasses.h). The family that chose the kernel says so on
/// the call; code generation reads the mark, never the kernel's name.
enum class CallSharing {
  /// Inlined and specialised for all its constants (the default).
  Specialise,
  /// An int8 kernel whose calls of one shape class (every constant but the
  /// quantization's output offset) share one noinline copy: its noAlias
  /// arguments are noalias there.
  ShapeClass,
  /// A float convolution: past kMaxSpecialisedConvolutions call sites, one
  /// copy per distinct shape (every integer and float constant).
  ByShape,
};

struct KernelArg {
  enum Kind {
    Address,    ///< `value`'s planned address + `i` bytes (nullptr: a null pointer).
    I32,        ///< `i`.
    F32,        ///< `f`.
    I32Table,   ///< `table` as a private constant global (read-only data, not weights).
    I8Table,    ///< `table` (int8 values) as a private constant int8 array.
    I16Table,   ///< `table` (int16 values) as a private constant int16 array.
    F32Table,   ///< `floats` as a private constant float array.
    Scalar,     ///< Element 0 of constant `value` as a private global of its dtype.
    Bits,       ///< `i`'s low `bits` bits as an integer of that width (a fill pattern).
    RegionBase, ///< The base pointer of memory region `i` (a copy table's pieces).
    Scratch,    ///< The node's planned workspace (a null pointer when it has none).
    Struct,     ///< A pointer to a stack struct of `fields` (CMSIS-NN's context and quant structs).
    Activation, ///< Three arguments (kind, a, b): `node`'s fused activation.
    Params,     ///< A pointer to C struct `type` (bundlefit/kernels/abi.h) whose int32
                ///< fields are `table`, as a private constant global (KernelParams.h).
  } kind = I32;
  const Value *value = nullptr;
  const Node *node = nullptr;
  int64_t i = 0;
  float f = 0.0f;
  unsigned bits = 0;
  std::vector<int32_t> table;
  std::vector<float> floats;
  std::vector<KernelArg> fields;
  std::string type;
  /// A pointer the kernel only reads (weights, bias, tables) or owns (the
  /// node's scratch), planned apart from everything else the call passes:
  /// noalias where CallSharing::ShapeClass shares the kernel.
  bool noAlias = false;

  /// This argument, marked noAlias.
  KernelArg unaliased() && {
    noAlias = true;
    return std::move(*this);
  }

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
  static KernelArg i16Table(const std::vector<int16_t> &values) {
    KernelArg a;
    a.kind = I16Table, a.table.assign(values.begin(), values.end());
    return a;
  }
  static KernelArg f32Table(std::vector<float> values) {
    KernelArg a;
    a.kind = F32Table, a.floats = std::move(values);
    return a;
  }
  static KernelArg scalar(const Value *constant) {
    KernelArg a;
    a.kind = Scalar, a.value = constant;
    return a;
  }
  static KernelArg bitsOf(unsigned width, int64_t pattern) {
    KernelArg a;
    a.kind = Bits, a.bits = width, a.i = pattern;
    return a;
  }
  static KernelArg regionBase(int region) {
    KernelArg a;
    a.kind = RegionBase, a.i = region;
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
  /// Use kernelParams() (KernelParams.h), which fills `table` from the struct.
  static KernelArg params(std::string cStruct, std::vector<int32_t> fields) {
    KernelArg a;
    a.kind = Params, a.type = std::move(cStruct), a.table = std::move(fields);
    return a;
  }
  static KernelArg activation(const Node &node) {
    KernelArg a;
    a.kind = Activation, a.node = &node;
    return a;
  }
};

/// What an int8 call says about 256-entry activation tables (bf_lut_s8's,
/// src/ops/lut), so that code generation can run a table activation in its
/// producer's stores (codegen/LutFusion.h) reading these marks, never kernel
/// names or argument positions of its own.
struct LutMarks {
  /// The call only maps its input through a table (y = table[x + 128]):
  /// argument `lookup` is that table.
  std::optional<size_t> lookup;
  /// The kernel applies a table at its stores: argument `atStore` (a null
  /// pointer until code generation puts one there).
  std::optional<size_t> atStore;
  /// A table at the stores costs less than the table's own pass (the family
  /// says so where it measured it).
  bool paysAtStore = false;
};

struct KernelCall {
  std::string kernel;
  std::vector<KernelArg> args;
  /// A library function the user links (CMSIS-NN), not one of the kernel
  /// bitcode's: declared, returning int32 (a status) or void.
  bool external = false;
  bool returnsVoid = false;
  CallSharing sharing = CallSharing::Specialise;
  /// An int8 1x1 stride-1 convolution: the shape its code specialises for
  /// (codegen counts the distinct ones to set bf_pointwise_shared,
  /// int8_conv_im2col.c); empty for any other call.
  std::vector<int64_t> pointwiseShape;
  LutMarks lut;
  /// Keeps the nodes Activation arguments point into alive (a ConvPool's parts).
  std::shared_ptr<ConvPoolParts> parts;

  /// Inserts `arg` before argument `at`, keeping the marks on the arguments
  /// they name.
  void insertArg(size_t at, KernelArg arg) {
    args.insert(args.begin() + std::ptrdiff_t(at), std::move(arg));
    for (std::optional<size_t> *mark : {&lut.lookup, &lut.atStore})
      if (*mark && **mark >= at)
        ++**mark;
  }
};

/// What a node's float lowering (OpDef::lower) may ask of the memory plan:
/// code generation answers from its MemoryPlan, which src/ops cannot see.
class PlanView {
public:
  struct Where {
    int region = 0; ///< MemoryRegion
    uint64_t offset = 0;
  };
  virtual ~PlanView() = default;
  /// Where `value` is placed; nothing when it has no placement (an output
  /// nobody reads).
  virtual std::optional<Where> placementOf(const Value *value) const = 0;
  /// The constants are split over several memory regions (the region base
  /// of ConstantWeight then addresses only the first segment).
  virtual bool splitWeights() const = 0;
  /// The plan put `node`'s output at its input's address (--memory-opt: a
  /// Conv that runs in place, InPlaceOps.h).
  virtual bool outputOnInput(const Node &node) const = 0;
  /// The size of `node`'s planned workspace (KernelArg::Scratch); nothing
  /// when the plan reserved none.
  virtual std::optional<uint64_t> scratchBytes(const Node &node) const = 0;
};

} // namespace bundlefit
