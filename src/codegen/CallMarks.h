//===- CallMarks.h - What a kernel call's family said about it (internal) -===//
//
// Why: code generation shares a kernel's code between calls (KernelClasses.h)
// on what the operator family that chose the kernel says on its KernelCall
// (CallSharing, KernelArg::noAlias, pointwiseShape: KernelCall.h), never on
// the kernel's name. The one emitter (LowerGraph.cpp) puts those facts on the
// LLVM call as string attributes, so they follow the call wherever the node
// function pool moves it; stripCallMarks removes them before optimisation,
// so the optimiser sees the calls as it always did.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ops/KernelCall.h"

#include <cstdint>
#include <vector>

namespace llvm {
class CallInst;
class Function;
class Module;
} // namespace llvm

namespace bundlefit {

/// Marks `call` (emitted for `kernelCall`) with its sharing, its pointwise
/// shape and, for each of `noAliasArgs` (positions in `call`), noAlias.
void markCall(llvm::CallInst &call, const KernelCall &kernelCall,
              const std::vector<unsigned> &noAliasArgs);

/// The sharing `call`'s family asked for (Specialise when unmarked).
CallSharing sharingOf(const llvm::CallInst &call);

/// Whether argument `arg` of `call` is marked noAlias.
bool isNoAliasArg(const llvm::CallInst &call, unsigned arg);

/// The pointwise shape `call` is marked with (empty when none).
std::vector<int64_t> pointwiseShapeOf(const llvm::CallInst &call);

/// Whether some direct call of `fn` is marked `sharing`.
bool hasCallMarked(const llvm::Function &fn, CallSharing sharing);

/// Removes every mark from `module`'s calls.
void stripCallMarks(llvm::Module &module);

} // namespace bundlefit
