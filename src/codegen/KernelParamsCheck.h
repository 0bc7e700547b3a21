//===- KernelParamsCheck.h - C++ parameter structs vs the kernel bitcode ---===//
//
// The lowering fills the parameter structs of bundlefit/kernels/abi.h by
// name (bundlefit/ops/KernelParams.h); the kernels were compiled from the
// same header into bitcode. These checks make a struct that differs between
// the two (a stale or mismatched kernel library, a field added on one side)
// an internal error before any call is emitted.
//
// Why code generation owns the struct types: llvm-link merges structurally
// identical struct types of the kernels' bitcode under one of their names
// (two 7-field structs become one "struct.bf_gemm_params"), so a struct type
// found by name in the bitcode may be another struct's, or missing. The
// kernels take the structs by pointer (opaque in LLVM 16), so the type of
// the constant a call passes is code generation's choice: it creates one
// named type per C struct ("bf.params.<struct>") and checks its size against
// the global abi.c compiles for it (global names are never merged).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <llvm/ADT/StringRef.h>

#include <cstddef>
#include <optional>
#include <string>

namespace llvm {
class Module;
class StructType;
class Type;
} // namespace llvm

namespace bundlefit {

/// Why `kernels`' C struct `cStruct` is not `fieldCount` int32 fields (the
/// C++ side's count), or "" when it is.
std::string kernelParamsMismatch(const llvm::Module &kernels, const std::string &cStruct,
                                 size_t fieldCount);

/// Checks every struct of KernelParams.h against `kernels` (fatal on a
/// mismatch, naming the struct and both field counts), then erases abi.c's
/// size globals so that no bundle carries them.
void checkKernelParamsStructs(llvm::Module &kernels);

/// Code generation's type of `cStruct` in `module`'s context: `fieldCount`
/// int32 fields, named "bf.params.<cStruct>" (created on first use).
llvm::StructType *kernelParamsType(llvm::Module &module, const std::string &cStruct,
                                   size_t fieldCount);

/// The C struct `type` is code generation's type of (kernelParamsType), or
/// nullopt for any other type.
std::optional<llvm::StringRef> kernelParamsStructOf(const llvm::Type *type);

} // namespace bundlefit
