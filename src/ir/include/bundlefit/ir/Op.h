//===- Op.h - An operator's identity, checked by the compiler -------------===//
//
// `Op::Conv` names an operator the way LLVM's opcodes or TFLM's
// BuiltinOperator do: a rewrite that matches `node.is(Op::Conv)` or switches
// on `node.op()` cannot misspell it. The enumerators come from Ops.def;
// an operator whose model spelling is no identifier has its own enumerator
// name there (Op::MsQLinearAdd is "com.microsoft.QLinearAdd").
//
// A node stores its operator as the name (`Node::opType`), because an
// importer must carry a name bundlefit has no definition for up to the
// "unsupported operator" error; the identity is derived from that name, so
// the two never disagree.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace bundlefit {

enum class Op : uint16_t {
#define BUNDLEFIT_OP(Name) Name,
#include "bundlefit/ir/Ops.def"
  /// A name with no definition (an unsupported operator from a model).
  Unknown,
};

inline constexpr size_t kNumOps = static_cast<size_t>(Op::Unknown);

/// The operator's name as models and diagnostics spell it ("Conv").
const std::string &opName(Op op);
/// The identity of `name`; Op::Unknown if Ops.def does not list it.
Op opFromName(std::string_view name);
/// Whether Ops.def lists `op` as BUNDLEFIT_MODEL_OP: a model's operator with
/// no definition, which a rewrite replaces.
bool isModelOnlyOp(Op op);

} // namespace bundlefit
