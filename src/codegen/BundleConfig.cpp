#include "BundleConfig.h"

#include "bundlefit/support/Names.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

namespace bundlefit {

void emitBundleConfig(llvm::Module &module, const MemoryPlan &plan,
                      const std::string &networkName) {
  llvm::LLVMContext &context = module.getContext();
  llvm::Type *i64 = llvm::Type::getInt64Ty(context);
  llvm::Type *i8 = llvm::Type::getInt8Ty(context);
  llvm::PointerType *ptr = llvm::PointerType::getUnqual(context);
  // LLVM lays these out with the target's C alignment rules, so they match
  // the structs the header declares.
  llvm::StructType *entryType =
      llvm::StructType::create(context, {ptr, i64, i64, i8}, "SymbolTableEntry");
  llvm::StructType *configType =
      llvm::StructType::create(context, {i64, i64, i64, i64, i64, ptr}, "BundleConfig");

  std::vector<llvm::Constant *> entries;
  for (const Value *value : plan.placeholders) {
    llvm::Constant *name = llvm::ConstantDataArray::getString(context, legalizeName(value->name));
    auto *nameGlobal =
        new llvm::GlobalVariable(module, name->getType(), true, llvm::GlobalValue::PrivateLinkage,
                                 name, networkName + "_symbol_name");
    entries.push_back(llvm::ConstantStruct::get(
        entryType, {nameGlobal, llvm::ConstantInt::get(i64, plan.placementOf(value).offset),
                    llvm::ConstantInt::get(i64, uint64_t(value->type.numElements())),
                    llvm::ConstantInt::get(i8, 1)}));
  }
  llvm::ArrayType *tableType = llvm::ArrayType::get(entryType, entries.size());
  auto *table = new llvm::GlobalVariable(module, tableType, true, llvm::GlobalValue::PrivateLinkage,
                                         llvm::ConstantArray::get(tableType, entries),
                                         networkName + "_symbol_table");

  llvm::Constant *config =
      llvm::ConstantStruct::get(configType, {llvm::ConstantInt::get(i64, plan.constantSize),
                                             llvm::ConstantInt::get(i64, plan.mutableSize),
                                             llvm::ConstantInt::get(i64, plan.activationsSize),
                                             llvm::ConstantInt::get(i64, MemoryPlan::kAlignment),
                                             llvm::ConstantInt::get(i64, entries.size()), table});
  new llvm::GlobalVariable(module, configType, true, llvm::GlobalValue::ExternalLinkage, config,
                           networkName + "_config");
}

} // namespace bundlefit
