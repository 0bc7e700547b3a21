//===- KernelClasses.cpp - Share big kernels by shape class ----------------===//
#include "KernelClasses.h"

#include "CallMarks.h"
#include "KernelParamsCheck.h"
#include "LowerGraph.h"
#include "bundlefit/ops/KernelParams.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace bundlefit {
namespace {

/// The parameter-struct fields (abi.h, by name) a kernel takes at run time
/// although they are constants: the output offset, one add per output
/// either way. Every other constant (the geometry, the input offset, flags,
/// clamp bounds, null tables) stays in the class; pointers and tables are
/// passed.
///
/// `noAliasArgs` are the arguments the call marks noAlias (CallMarks.h):
/// weights, bias and requantization tables (only read, and planned apart
/// from the node's output) and the node's own scratch. noalias in the
/// wrapper, as the node function's distinct constant offsets showed before
/// (the in-place kernels' input and output may be one address, so without
/// it LLVM would reload around every store).
struct RuntimeField {
  const char *cStruct;
  const char *field;
};
struct ShapeClassPolicy {
  std::vector<RuntimeField> runtimeFields;
  std::vector<unsigned> noAliasArgs;
  /// Float constants (clamp bounds of a fused activation) shape the class
  /// too; the int8 kernels' scales stay run-time arguments.
  bool floatsInClass = false;
};

// CallSharing::ShapeClass: the quantization's output_offset at run time
// (bundlefit_kernels_int8.h). CallSharing::ByShape (the float convolutions,
// grouped only when their call sites outnumber kMaxSpecialisedConvolutions:
// patch tiles multiply them): all pointers at run time, the C kernel's
// restrict already says they do not alias.
const RuntimeField kOutputOffset{"bf_quant_params", "output_offset"};

/// The policy of a call marked ShapeClass or ByShape.
ShapeClassPolicy policyOf(const llvm::CallInst &call) {
  ShapeClassPolicy policy;
  if (sharingOf(call) == CallSharing::ShapeClass)
    policy.runtimeFields = {kOutputOffset};
  else
    policy.floatsInClass = true;
  for (unsigned i = 0; i < call.arg_size(); ++i)
    if (isNoAliasArg(call, i))
      policy.noAliasArgs.push_back(i);
  return policy;
}

/// A parameter struct argument: a constant global of a kernel parameter
/// type (KernelArg::Params, kernelParamsType), or null.
llvm::GlobalVariable *paramsGlobal(llvm::Value *arg) {
  auto *global = llvm::dyn_cast<llvm::GlobalVariable>(arg);
  if (!global || !global->isConstant() || !global->hasInitializer())
    return nullptr;
  return kernelParamsStructOf(global->getValueType()) ? global : nullptr;
}

/// The fields of `global`'s struct that `policy` passes at run time.
std::vector<unsigned> runtimeFieldsOf(const ShapeClassPolicy &policy,
                                      const llvm::GlobalVariable &global) {
  const llvm::StringRef cStruct = *kernelParamsStructOf(global.getValueType());
  std::vector<unsigned> fields;
  for (const RuntimeField &f : policy.runtimeFields)
    if (cStruct == f.cStruct)
      fields.push_back(unsigned(kernelParamsFieldIndex(f.cStruct, f.field)));
  return fields;
}

/// One global per class struct value: `global`'s fields with the run-time
/// ones zeroed (the calls' own globals may repeat a value).
class ClassStructs {
public:
  llvm::GlobalVariable *of(llvm::GlobalVariable &global, const std::vector<unsigned> &runtime) {
    auto *value = llvm::cast<llvm::ConstantStruct>(global.getInitializer());
    if (!runtime.empty()) {
      std::vector<llvm::Constant *> fields;
      for (unsigned i = 0; i < value->getNumOperands(); ++i)
        fields.push_back(value->getOperand(i));
      for (unsigned i : runtime)
        fields.at(i) = llvm::Constant::getNullValue(fields[i]->getType());
      value = llvm::cast<llvm::ConstantStruct>(llvm::ConstantStruct::get(value->getType(), fields));
    }
    auto [it, added] = globals_.try_emplace(value, nullptr);
    if (added)
      it->second = runtime.empty()
                       ? &global
                       : new llvm::GlobalVariable(*global.getParent(), value->getType(), true,
                                                  llvm::GlobalValue::PrivateLinkage, value,
                                                  "bf.params.class");
    return it->second;
  }

private:
  std::map<llvm::Constant *, llvm::GlobalVariable *> globals_;
};

/// The call's class: for each argument, its constant if it is a class
/// argument (or a null pointer), else nullptr (passed at run time). A
/// parameter struct is in the class with its run-time fields zeroed.
std::vector<llvm::Constant *> classOf(const llvm::CallInst &call, const ShapeClassPolicy &policy,
                                      ClassStructs &structs) {
  std::vector<llvm::Constant *> key(call.arg_size(), nullptr);
  for (unsigned i = 0; i < call.arg_size(); ++i) {
    auto *constant = llvm::dyn_cast<llvm::Constant>(call.getArgOperand(i));
    if (!constant)
      continue;
    if (llvm::GlobalVariable *params = paramsGlobal(constant))
      key[i] = structs.of(*params, runtimeFieldsOf(policy, *params));
    else if (llvm::isa<llvm::ConstantInt>(constant) ? true
             : llvm::isa<llvm::ConstantFP>(constant)
                 ? policy.floatsInClass
                 : llvm::isa<llvm::ConstantPointerNull>(constant))
      key[i] = constant;
  }
  return key;
}

/// The run-time fields of argument `i` of a class (empty unless the class
/// holds it as a parameter struct with some).
std::vector<unsigned> runtimeFieldsAt(const ShapeClassPolicy &policy,
                                      const std::vector<llvm::Constant *> &key, unsigned i) {
  llvm::GlobalVariable *params = key[i] ? paramsGlobal(key[i]) : nullptr;
  return params ? runtimeFieldsOf(policy, *params) : std::vector<unsigned>();
}

/// `void kernel.class<n>(...)`: the kernel's parameters, but a struct with
/// run-time fields becomes those fields (int32, passed as immediates as the
/// positional integers were); calls the kernel with the class's constants
/// in place of their parameters (inlined there later).
llvm::Function *makeWrapper(llvm::Function &kernel, const ShapeClassPolicy &policy,
                            const std::vector<llvm::Constant *> &key, unsigned index) {
  llvm::LLVMContext &context = kernel.getContext();
  llvm::Type *i32 = llvm::Type::getInt32Ty(context);
  const llvm::AttributeList kernelAttrs = kernel.getAttributes();
  std::vector<llvm::Type *> params;
  std::vector<llvm::AttributeSet> paramAttrs;
  for (unsigned i = 0; i < kernel.arg_size(); ++i) {
    const size_t fields = runtimeFieldsAt(policy, key, i).size();
    if (fields == 0) {
      params.push_back(kernel.getArg(i)->getType());
      llvm::AttrBuilder attrs(context, kernelAttrs.getParamAttrs(i));
      if (std::find(policy.noAliasArgs.begin(), policy.noAliasArgs.end(), i) !=
              policy.noAliasArgs.end() &&
          kernel.getArg(i)->getType()->isPointerTy())
        attrs.addAttribute(llvm::Attribute::NoAlias);
      paramAttrs.push_back(llvm::AttributeSet::get(context, attrs));
    }
    for (size_t f = 0; f < fields; ++f)
      params.push_back(i32), paramAttrs.push_back(llvm::AttributeSet());
  }
  auto *wrapper = llvm::Function::Create(
      llvm::FunctionType::get(kernel.getReturnType(), params, false),
      llvm::GlobalValue::InternalLinkage, kernel.getName() + ".class" + std::to_string(index),
      kernel.getParent());
  wrapper->setAttributes(llvm::AttributeList::get(context, kernelAttrs.getFnAttrs(),
                                                  kernelAttrs.getRetAttrs(), paramAttrs));
  wrapper->addFnAttr(llvm::Attribute::NoInline);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", wrapper));
  std::vector<llvm::Value *> args;
  unsigned next = 0; // the wrapper's parameter
  for (unsigned i = 0; i < kernel.arg_size(); ++i) {
    const std::vector<unsigned> runtime = runtimeFieldsAt(policy, key, i);
    if (runtime.empty()) {
      args.push_back(key[i] ? static_cast<llvm::Value *>(key[i]) : wrapper->getArg(next));
      ++next;
      continue;
    }
    // The class's struct with the call's run-time fields: a local that SROA
    // turns back into constants and parameters once the kernel is inlined.
    llvm::GlobalVariable *classStruct = paramsGlobal(key[i]);
    llvm::Type *type = classStruct->getValueType();
    llvm::AllocaInst *local = builder.CreateAlloca(type);
    builder.CreateStore(classStruct->getInitializer(), local);
    for (unsigned field : runtime)
      builder.CreateStore(wrapper->getArg(next++), builder.CreateStructGEP(type, local, field));
    args.push_back(local);
  }
  builder.CreateCall(&kernel, args);
  builder.CreateRetVoid();
  return wrapper;
}

/// Replaces `call` of the kernel by a call of its class's wrapper: the
/// run-time fields of a struct argument as immediates from its global.
void callWrapper(llvm::CallInst &call, llvm::Function &wrapper, const ShapeClassPolicy &policy,
                 const std::vector<llvm::Constant *> &key) {
  std::vector<llvm::Value *> args;
  for (unsigned i = 0; i < call.arg_size(); ++i) {
    const std::vector<unsigned> runtime = runtimeFieldsAt(policy, key, i);
    if (runtime.empty()) {
      args.push_back(call.getArgOperand(i));
      continue;
    }
    // In the class as a struct: the call passes a constant global of it.
    llvm::Constant *value = paramsGlobal(call.getArgOperand(i))->getInitializer();
    for (unsigned field : runtime)
      args.push_back(value->getAggregateElement(field));
  }
  llvm::CallInst *replacement = llvm::CallInst::Create(&wrapper, args, "", &call);
  replacement->setDebugLoc(call.getDebugLoc());
  call.eraseFromParent();
}

using ClassKey = std::pair<llvm::Function *, std::vector<llvm::Constant *>>;

/// The calls grouped by (kernel, class), classes in the order of their first
/// call, not of their keys' addresses, so that the same model always gives
/// the same object file. A class's policy is its first call's (calls of one
/// kernel mark the same arguments).
struct CallClass {
  ClassKey key;
  ShapeClassPolicy policy;
  std::vector<llvm::CallInst *> members;
};
std::vector<CallClass> groupByClass(const std::vector<llvm::CallInst *> &calls) {
  ClassStructs structs;
  std::map<ClassKey, size_t> classIndex;
  std::vector<CallClass> classes;
  for (llvm::CallInst *call : calls) {
    ShapeClassPolicy policy = policyOf(*call);
    ClassKey key{call->getCalledFunction(), classOf(*call, policy, structs)};
    auto [it, added] = classIndex.try_emplace(key, classes.size());
    if (added)
      classes.push_back({key, std::move(policy), {}});
    classes[it->second].members.push_back(call);
  }
  return classes;
}

/// Routes each class of two or more calls through one wrapper; `index`
/// numbers the wrappers.
void callWrappers(const std::vector<CallClass> &classes, unsigned &index) {
  for (const CallClass &c : classes) {
    if (c.members.size() < 2) // specialised where it is called, as before
      continue;
    llvm::Function *wrapper = makeWrapper(*c.key.first, c.policy, c.key.second, index++);
    for (llvm::CallInst *call : c.members)
      callWrapper(*call, *wrapper, c.policy, c.key.second);
  }
}

/// Measured on Cortex-M7 (bench/mcu): MobileNetV1-0.25's 13 pointwise
/// layers (9 shapes) shared: .text 33.0 -> 21.6 KB at 0.81x of CMSIS-NN's
/// instructions (0.76x specialised); DS-CNN's four (one shape, one class
/// function) shared: 0.92x instead of 0.87x and 80 bytes more.
constexpr size_t kMinSharedPointwiseShapes = 3;

} // namespace

void choosePointwiseSharing(llvm::Module &module) {
  llvm::GlobalVariable *flag = module.getGlobalVariable("bf_pointwise_shared");
  if (!flag)
    return;
  std::set<std::vector<int64_t>> shapes;
  for (llvm::Function &fn : module) {
    if (!fn.hasFnAttribute(kNodeFunctionAttribute))
      continue;
    for (llvm::BasicBlock &block : fn)
      for (llvm::Instruction &inst : block)
        if (auto *call = llvm::dyn_cast<llvm::CallInst>(&inst))
          if (call->getCalledFunction())
            if (std::vector<int64_t> shape = pointwiseShapeOf(*call); !shape.empty())
              shapes.insert(shape);
  }
  flag->setInitializer(
      llvm::ConstantInt::get(flag->getValueType(), shapes.size() >= kMinSharedPointwiseShapes));
  flag->setConstant(true);
  flag->setLinkage(llvm::GlobalValue::InternalLinkage);
}

void shareKernelsByShapeClass(llvm::Module &module) {
  std::vector<llvm::CallInst *> calls;
  for (llvm::Function &fn : module) {
    if (!fn.hasFnAttribute(kNodeFunctionAttribute)) // not the kernels' own calls
      continue;
    for (llvm::BasicBlock &block : fn)
      for (llvm::Instruction &inst : block)
        if (auto *call = llvm::dyn_cast<llvm::CallInst>(&inst))
          if (llvm::Function *callee = call->getCalledFunction();
              callee && !callee->isDeclaration() && callee->getReturnType()->isVoidTy() &&
              sharingOf(*call) == CallSharing::ShapeClass)
            calls.push_back(call);
  }
  unsigned index = 0;
  callWrappers(groupByClass(calls), index);
}

size_t shareConvolutionsByShape(llvm::Module &module) {
  size_t classCount = 0;
  unsigned index = 0;
  for (llvm::Function &kernel : module) {
    if (kernel.isDeclaration() || kernel.getNumUses() <= kMaxSpecialisedConvolutions)
      continue;
    // The graph's call sites: in node functions and patch tiles' functions
    // (conv_pool.c and conv_inplace.c call the kernel with run-time shapes).
    std::vector<llvm::CallInst *> calls;
    for (llvm::User *user : kernel.users())
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(user))
        if (call->getCalledFunction() == &kernel && sharingOf(*call) == CallSharing::ByShape &&
            (call->getFunction()->hasFnAttribute(kNodeFunctionAttribute) ||
             call->getFunction()->hasFnAttribute(kTileFunctionAttribute)))
          calls.push_back(call);
    if (calls.empty())
      continue;
    std::vector<CallClass> classes = groupByClass(calls);
    // The other uses are kernels calling it with their own run-time shapes
    // (conv_pool.c, conv_inplace.c): specialised where those are inlined.
    if (classes.size() > kMaxSpecialisedConvolutionShapes)
      continue; // Too many shapes: one shared generic copy, as before.
    kernel.addFnAttr(kShapesGroupedAttribute);
    classCount += classes.size();
    callWrappers(classes, index);
  }
  return classCount;
}

} // namespace bundlefit
