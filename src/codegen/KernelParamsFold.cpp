//===- KernelParamsFold.cpp - Fields every call of a kernel shares ---------===//
#include "KernelParamsFold.h"

#include "KernelParamsCheck.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Operator.h>

#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace bundlefit {
namespace {

/// What the calls pass in a struct argument: its type and, per field, the
/// constant they all agree on (nullptr where they differ or it is unknown).
struct Fields {
  llvm::StructType *type = nullptr;
  std::vector<llvm::Constant *> values;
};

/// A parameter struct: code generation's type of one (the constants calls
/// pass, the locals of shape-class wrappers) or, for a C kernel's local copy
/// of its struct argument, clang's type ("struct.bf_*"; llvm-link may have
/// given it another struct's name, but the prefix stays).
bool isParamsStruct(llvm::Type *type) {
  if (kernelParamsStructOf(type))
    return true;
  auto *st = llvm::dyn_cast<llvm::StructType>(type);
  return st && st->hasName() && st->getName().startswith("struct.bf_");
}

/// `a` and `b` field by field (nullopt if their types differ).
std::optional<Fields> meet(std::optional<Fields> a, const std::optional<Fields> &b) {
  if (!a || !b || a->type != b->type)
    return std::nullopt;
  for (size_t i = 0; i < a->values.size(); ++i)
    if (a->values[i] != b->values[i])
      a->values[i] = nullptr;
  return a;
}

Fields fromConstant(llvm::Constant *value) {
  Fields f{llvm::cast<llvm::StructType>(value->getType()), {}};
  for (unsigned i = 0; i < f.type->getNumElements(); ++i)
    f.values.push_back(value->getAggregateElement(i));
  return f;
}

/// The kernel bitcode is unoptimised (clang -O0 form: each argument spilled
/// to its own stack slot): the argument `slot` holds if its only store
/// stores one, and it is otherwise only loaded.
llvm::Argument *spilledArgument(llvm::AllocaInst &slot) {
  llvm::Argument *stored = nullptr;
  for (llvm::User *user : slot.users()) {
    if (auto *store = llvm::dyn_cast<llvm::StoreInst>(user)) {
      auto *arg = llvm::dyn_cast<llvm::Argument>(store->getValueOperand());
      if (!arg || stored || store->getPointerOperand() != &slot)
        return nullptr;
      stored = arg;
    } else if (!llvm::isa<llvm::LoadInst>(user)) {
      return nullptr;
    }
  }
  return stored;
}

/// `arg` and every load of a stack slot holding it.
std::vector<llvm::Value *> copiesOf(llvm::Argument &arg) {
  std::vector<llvm::Value *> copies{&arg};
  for (llvm::User *user : arg.users())
    if (auto *store = llvm::dyn_cast<llvm::StoreInst>(user))
      if (auto *slot = llvm::dyn_cast<llvm::AllocaInst>(store->getPointerOperand()))
        if (store->getValueOperand() == &arg && spilledArgument(*slot) == &arg)
          for (llvm::User *u : slot->users())
            if (auto *load = llvm::dyn_cast<llvm::LoadInst>(u))
              copies.push_back(load);
  return copies;
}

class Folder {
public:
  /// The fields `value` (a call operand) holds at every call, if known.
  std::optional<Fields> fieldsOf(llvm::Value *value, unsigned depth) {
    if (auto *global = llvm::dyn_cast<llvm::GlobalVariable>(value))
      if (global->isConstant() && global->hasInitializer() &&
          isParamsStruct(global->getValueType()))
        return fromConstant(global->getInitializer());
    if (auto *arg = llvm::dyn_cast<llvm::Argument>(value))
      return depth < 3 ? fieldsOfArgument(*arg, depth + 1) : std::nullopt;
    if (auto *local = llvm::dyn_cast<llvm::AllocaInst>(value))
      return fieldsOfLocal(*local, depth);
    if (auto *load = llvm::dyn_cast<llvm::LoadInst>(value)) // a C caller's spilled argument
      if (auto *slot = llvm::dyn_cast<llvm::AllocaInst>(load->getPointerOperand()))
        if (llvm::Argument *arg = spilledArgument(*slot))
          return fieldsOf(arg, depth);
    return std::nullopt;
  }

  /// The meet over the direct calls of the argument's function.
  std::optional<Fields> fieldsOfArgument(llvm::Argument &arg, unsigned depth) {
    llvm::Function &fn = *arg.getParent();
    if (!fn.hasLocalLinkage() || fn.use_empty())
      return std::nullopt;
    auto key = std::make_pair(&fn, arg.getArgNo());
    if (auto it = memo_.find(key); it != memo_.end())
      return it->second;
    std::optional<Fields> result;
    bool first = true;
    for (llvm::Use &use : fn.uses()) {
      auto *call = llvm::dyn_cast<llvm::CallInst>(use.getUser());
      if (!call || !call->isCallee(&use) || call->getFunctionType() != fn.getFunctionType()) {
        result = std::nullopt;
        break;
      }
      std::optional<Fields> here = fieldsOf(call->getArgOperand(arg.getArgNo()), depth);
      result = first ? here : meet(result, here);
      first = false;
      if (!result)
        break;
    }
    memo_[key] = result;
    return result;
  }

  /// A local struct a shape-class wrapper builds (KernelClasses.cpp): one
  /// store of a constant struct, then stores of run-time fields, then calls;
  /// or a C kernel's copy of its own struct argument, then stores.
  std::optional<Fields> fieldsOfLocal(llvm::AllocaInst &local, unsigned depth) {
    if (!isParamsStruct(local.getAllocatedType()))
      return std::nullopt;
    std::optional<Fields> fields;
    std::vector<std::pair<unsigned, llvm::Constant *>> runtime;
    const llvm::DataLayout &layout = local.getModule()->getDataLayout();
    for (llvm::User *user : local.users()) {
      if (auto *store = llvm::dyn_cast<llvm::StoreInst>(user)) {
        auto *value = llvm::dyn_cast<llvm::Constant>(store->getValueOperand());
        if (store->getPointerOperand() != &local || !value || fields)
          return std::nullopt;
        fields = fromConstant(value);
      } else if (auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(user)) {
        llvm::APInt offset(layout.getIndexTypeSizeInBits(gep->getType()), 0);
        if (!gep->accumulateConstantOffset(layout, offset) || offset.getZExtValue() % 4)
          return std::nullopt;
        llvm::Constant *value = nullptr;
        for (llvm::User *u : gep->users()) {
          auto *store = llvm::dyn_cast<llvm::StoreInst>(u);
          if (!store || store->getPointerOperand() != gep || value)
            return std::nullopt;
          value = intOf(store->getValueOperand(), depth);
        }
        runtime.push_back({unsigned(offset.getZExtValue() / 4), value});
      } else if (auto *copy = llvm::dyn_cast<llvm::MemCpyInst>(user)) {
        // A C kernel's `bf_conv_params row = *conv;` (conv_pool.c): the
        // fields its own callers pass, then its stores of some of them.
        auto *length = llvm::dyn_cast<llvm::ConstantInt>(copy->getLength());
        if (copy->getDest() != &local || fields || !length ||
            length->getZExtValue() != layout.getTypeAllocSize(local.getAllocatedType()))
          return std::nullopt;
        fields = fieldsOf(copy->getSource(), depth);
        if (!fields)
          return std::nullopt;
      } else if (!llvm::isa<llvm::CallInst>(user)) {
        return std::nullopt;
      }
    }
    if (fields)
      for (auto [i, value] : runtime)
        if (i < fields->values.size())
          fields->values[i] = value;
    return fields;
  }

  /// The integer constant `value` is at every call (a shape-class wrapper's
  /// run-time field: the same in all its calls), or null.
  llvm::Constant *intOf(llvm::Value *value, unsigned depth) {
    if (auto *constant = llvm::dyn_cast<llvm::ConstantInt>(value))
      return constant;
    auto *arg = llvm::dyn_cast<llvm::Argument>(value);
    if (!arg || depth >= 3 || !arg->getParent()->hasLocalLinkage())
      return nullptr;
    llvm::Constant *result = nullptr;
    for (llvm::Use &use : arg->getParent()->uses()) {
      auto *call = llvm::dyn_cast<llvm::CallInst>(use.getUser());
      if (!call || !call->isCallee(&use))
        return nullptr;
      llvm::Constant *here = intOf(call->getArgOperand(arg->getArgNo()), depth + 1);
      if (!here || (result && here != result))
        return nullptr;
      result = here;
    }
    return result;
  }

private:
  std::map<std::pair<llvm::Function *, unsigned>, std::optional<Fields>> memo_;
};

/// Replaces the int32 loads at constant offsets from `base` (`arg` or a
/// copy of it) by `fields`.
unsigned foldLoads(llvm::Argument &arg, llvm::Value &base, const Fields &fields) {
  const llvm::DataLayout &layout = arg.getParent()->getParent()->getDataLayout();
  unsigned folded = 0;
  auto fold = [&](llvm::Value *pointer, uint64_t offset) {
    std::vector<llvm::LoadInst *> loads;
    for (llvm::User *user : pointer->users())
      if (auto *load = llvm::dyn_cast<llvm::LoadInst>(user))
        if (load->getPointerOperand() == pointer && !load->isVolatile() &&
            load->getType()->isIntegerTy(32) && offset % 4 == 0 &&
            offset / 4 < fields.values.size() && fields.values[offset / 4] &&
            fields.values[offset / 4]->getType() == load->getType())
          loads.push_back(load);
    for (llvm::LoadInst *load : loads) {
      load->replaceAllUsesWith(fields.values[offset / 4]);
      load->eraseFromParent();
      ++folded;
    }
  };
  fold(&base, 0);
  for (llvm::User *user : base.users())
    if (auto *gep = llvm::dyn_cast<llvm::GEPOperator>(user)) {
      llvm::APInt offset(layout.getIndexTypeSizeInBits(gep->getType()), 0);
      if (gep->getPointerOperand() == &base && gep->accumulateConstantOffset(layout, offset))
        fold(gep, offset.getZExtValue());
    }
  return folded;
}

/// Kernels nothing calls (O2's GlobalDCE would drop them later) must not
/// count as callers: conv_pool.c's call of bf_conv2d_f32 with its conv row
/// struct, say, would otherwise hide the fields a model's convolutions share
/// when it has no ConvPool at all.
void eraseUncalledKernels(llvm::Module &module) {
  for (bool erased = true; erased;) {
    erased = false;
    for (llvm::Function &fn : llvm::make_early_inc_range(module))
      if (!fn.isDeclaration() && fn.hasLocalLinkage() && fn.use_empty()) {
        fn.eraseFromParent();
        erased = true;
      }
  }
}

} // namespace

unsigned foldSharedKernelParams(llvm::Module &module) {
  eraseUncalledKernels(module);
  Folder folder;
  unsigned folded = 0;
  for (llvm::Function &fn : module) {
    if (fn.isDeclaration() || !fn.hasLocalLinkage())
      continue;
    for (llvm::Argument &arg : fn.args())
      if (arg.getType()->isPointerTy() && !arg.use_empty())
        if (std::optional<Fields> fields = folder.fieldsOfArgument(arg, 0))
          for (llvm::Value *copy : copiesOf(arg))
            folded += foldLoads(arg, *copy, *fields);
  }
  return folded;
}

} // namespace bundlefit
