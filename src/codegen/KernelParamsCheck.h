//===- KernelParamsCheck.h - C++ parameter structs vs the kernel bitcode ---===//
//
// The lowering fills the parameter structs of bundlefit/kernels/abi.h by
// name (bundlefit/ops/KernelParams.h); the kernels were compiled from the
// same header into bitcode. These checks make a struct that differs between
// the two (a stale or mismatched kernel library, a field added on one side)
// an internal error before any call is emitted.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <string>

namespace llvm {
class Module;
class StructType;
} // namespace llvm

namespace bundlefit {

/// Why `kernels`' C struct `cStruct` is not `fieldCount` int32 fields (the
/// C++ side's count), or "" when it is.
std::string kernelParamsMismatch(const llvm::Module &kernels, const std::string &cStruct,
                                 size_t fieldCount);

/// Checks every struct of KernelParams.h against `kernels` (fatal on a
/// mismatch, naming the struct and both field counts).
void checkKernelParamsStructs(const llvm::Module &kernels);

/// `cStruct`'s type in `kernels`, checked to have `fieldCount` int32 fields.
llvm::StructType *kernelParamsType(const llvm::Module &kernels, const std::string &cStruct,
                                   size_t fieldCount);

} // namespace bundlefit
