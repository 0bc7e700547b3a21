//===- KernelParamsCheck.cpp - C++ parameter structs vs the kernel bitcode ===//
#include "KernelParamsCheck.h"

#include "bundlefit/kernels/abi.h" // the parameter structs
#include "bundlefit/ops/KernelParams.h"
#include "bundlefit/support/Error.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Module.h>

#include <vector>

namespace bundlefit {
namespace {

constexpr llvm::StringLiteral kTypePrefix = "bf.params.";

/// abi.c's `const int32_t bf_abi_sizeof_<cStruct>`, or null.
const llvm::GlobalVariable *sizeGlobal(const llvm::Module &kernels, const std::string &cStruct) {
  return kernels.getNamedGlobal(BF_ABI_SIZEOF_PREFIX + cStruct);
}

} // namespace

std::string kernelParamsMismatch(const llvm::Module &kernels, const std::string &cStruct,
                                 size_t fieldCount) {
  const llvm::GlobalVariable *global = sizeGlobal(kernels, cStruct);
  const auto *size = global && global->hasInitializer()
                         ? llvm::dyn_cast<llvm::ConstantInt>(global->getInitializer())
                         : nullptr;
  if (!size)
    return "the kernel bitcode has no struct " + cStruct;
  // abi.c asserts that the struct has only int32 fields.
  const uint64_t bytes = size->getZExtValue();
  if (bytes != 4 * uint64_t(fieldCount))
    return "struct " + cStruct + " has " + std::to_string(bytes / 4) + " int32 fields (" +
           std::to_string(bytes) + " bytes) in the kernel bitcode but " +
           std::to_string(fieldCount) + " in code generation (bundlefit/kernels/abi.h differs)";
  return "";
}

void checkKernelParamsStructs(llvm::Module &kernels) {
  for (const auto &[name, fields] : kernelParamsStructs())
    if (std::string why = kernelParamsMismatch(kernels, name, fields); !why.empty())
      fatalInternal(why);
  std::vector<llvm::GlobalVariable *> sizes;
  for (llvm::GlobalVariable &global : kernels.globals())
    if (global.getName().startswith(BF_ABI_SIZEOF_PREFIX))
      sizes.push_back(&global);
  for (llvm::GlobalVariable *global : sizes)
    if (global->use_empty())
      global->eraseFromParent();
}

llvm::StructType *kernelParamsType(llvm::Module &module, const std::string &cStruct,
                                   size_t fieldCount) {
  llvm::LLVMContext &ctx = module.getContext();
  const std::string name = (kTypePrefix + cStruct).str();
  if (llvm::StructType *type = llvm::StructType::getTypeByName(ctx, name)) {
    if (type->getNumElements() != fieldCount)
      fatalInternal("struct " + cStruct + " passed with " + std::to_string(fieldCount) +
                    " fields and with " + std::to_string(type->getNumElements()));
    return type;
  }
  std::vector<llvm::Type *> fields(fieldCount, llvm::Type::getInt32Ty(ctx));
  return llvm::StructType::create(ctx, fields, name);
}

std::optional<llvm::StringRef> kernelParamsStructOf(const llvm::Type *type) {
  const auto *st = llvm::dyn_cast<llvm::StructType>(type);
  if (!st || !st->hasName() || !st->getName().startswith(kTypePrefix))
    return std::nullopt;
  return st->getName().drop_front(kTypePrefix.size());
}

} // namespace bundlefit
