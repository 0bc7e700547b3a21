//===- NodeFunctions.cpp - One function per kind of node ------------------===//
#include "NodeFunctions.h"

#include "bundlefit/support/Error.h"

#include <llvm/ADT/Hashing.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include <string>

namespace bundlefit {
namespace {

/// FunctionComparator's hash looks at opcodes and types only, so every Relu
/// of any size would share a bucket. Equal functions use the same uniqued
/// constants, so hashing the constant operands keeps equal functions
/// together and splits the rest.
size_t structuralHash(llvm::Function &fn) {
  llvm::hash_code hash = llvm::FunctionComparator::functionHash(fn);
  for (const llvm::BasicBlock &block : fn)
    for (const llvm::Instruction &inst : block)
      for (const llvm::Value *operand : inst.operands())
        if (llvm::isa<llvm::Constant>(operand))
          hash = llvm::hash_combine(hash, operand);
  return size_t(hash);
}

} // namespace

NodeFunctionPool::Use NodeFunctionPool::add(llvm::Function *lowered,
                                            llvm::ArrayRef<llvm::GetElementPtrInst *> addresses) {
  llvm::LLVMContext &context = lowered->getContext();
  llvm::Type *ptr = llvm::PointerType::get(context, 0);
  llvm::Type *i64 = llvm::Type::getInt64Ty(context);
  std::vector<llvm::Type *> params(bases_, ptr);
  params.insert(params.end(), addresses.size(), i64);
  auto *fn =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(context), params, false),
                             lowered->getLinkage(), "", lowered->getParent());
  fn->copyAttributesFrom(lowered);
  fn->splice(fn->end(), lowered);
  for (unsigned i = 0; i < bases_; ++i) {
    fn->getArg(i)->takeName(lowered->getArg(i));
    lowered->getArg(i)->replaceAllUsesWith(fn->getArg(i));
  }
  Use use;
  for (size_t i = 0; i < addresses.size(); ++i) {
    llvm::GetElementPtrInst *gep = addresses[i];
    auto *offset = llvm::dyn_cast<llvm::ConstantInt>(gep->getOperand(1));
    if (gep->getNumIndices() != 1 || !offset || offset->getType() != i64)
      fatalInternal("node address is not a base + constant i64 offset");
    use.offsets.push_back(offset);
    gep->setOperand(1, fn->getArg(unsigned(bases_ + i)));
  }
  fn->takeName(lowered);
  lowered->eraseFromParent();

  std::vector<llvm::Function *> &bucket = byHash_[structuralHash(*fn)];
  for (llvm::Function *kind : bucket)
    if (llvm::FunctionComparator(fn, kind, &globalNumbers_).compare() == 0) {
      fn->eraseFromParent();
      ++shared_;
      use.fn = kind;
      return use;
    }
  bucket.push_back(fn);
  functions_.push_back(fn);
  use.fn = fn;
  return use;
}

void NodeFunctionPool::specialiseSingleUses() {
  for (llvm::Function *fn : functions_) {
    if (!fn->hasOneUse())
      continue;
    auto *call = llvm::cast<llvm::CallInst>(fn->user_back());
    for (unsigned i = bases_; i < fn->arg_size(); ++i)
      fn->getArg(i)->replaceAllUsesWith(call->getArgOperand(i));
  }
}

} // namespace bundlefit
