//===- KernelParamsCheck.cpp - C++ parameter structs vs the kernel bitcode ===//
#include "KernelParamsCheck.h"

#include "bundlefit/kernels/abi.h" // the parameter structs
#include "bundlefit/ops/KernelParams.h"
#include "bundlefit/support/Error.h"

#include <llvm/IR/DataLayout.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Module.h>

namespace bundlefit {

llvm::StructType *findKernelParamsType(const llvm::Module &kernels, const std::string &cStruct) {
  // clang names a C struct type "struct.<tag>"; the kernels that read it
  // reference it (every field access is a GEP on it in the unoptimised bitcode).
  return llvm::StructType::getTypeByName(kernels.getContext(), "struct." + cStruct);
}

std::string kernelParamsMismatch(const llvm::Module &kernels, const std::string &cStruct,
                                 size_t fieldCount) {
  llvm::StructType *type = findKernelParamsType(kernels, cStruct);
  if (!type || type->isOpaque())
    return "the kernel bitcode has no struct " + cStruct;
  const unsigned elements = type->getNumElements();
  for (unsigned i = 0; i < elements; ++i)
    if (!type->getElementType(i)->isIntegerTy(32))
      return "the kernel bitcode's struct " + cStruct + " has a field (" + std::to_string(i) +
             ") that is not int32";
  const uint64_t bytes = kernels.getDataLayout().getTypeAllocSize(type);
  if (elements != fieldCount || bytes != 4 * uint64_t(fieldCount))
    return "struct " + cStruct + " has " + std::to_string(elements) + " int32 fields (" +
           std::to_string(bytes) + " bytes) in the kernel bitcode but " +
           std::to_string(fieldCount) + " in code generation (bundlefit/kernels/abi.h differs)";
  return "";
}

void checkKernelParamsStructs(const llvm::Module &kernels) {
  for (const auto &[name, fields] : kernelParamsStructs())
    if (std::string why = kernelParamsMismatch(kernels, name, fields); !why.empty())
      fatalInternal(why);
}

llvm::StructType *kernelParamsType(const llvm::Module &kernels, const std::string &cStruct,
                                   size_t fieldCount) {
  if (std::string why = kernelParamsMismatch(kernels, cStruct, fieldCount); !why.empty())
    fatalInternal(why);
  return findKernelParamsType(kernels, cStruct);
}

} // namespace bundlefit
