//===- KernelClasses.cpp - Share big kernels by shape class ----------------===//
#include "KernelClasses.h"

#include "LowerGraph.h"
#include "bundlefit/ops/KernelParams.h"
#include "bundlefit/support/Error.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <map>
#include <optional>
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
/// `noAliasArgs` are the weights, bias and requantization tables (only read,
/// and planned apart from the node's output) and the node's own scratch:
/// noalias in the wrapper, as the node function's distinct constant offsets
/// showed before (the in-place kernels' input and output may be one address,
/// so without it LLVM would reload around every store).
struct RuntimeField {
  const char *cStruct;
  const char *field;
};
struct ShapeClassPolicy {
  const char *kernel;
  /// The kernel's parameter count: noAliasArgs are positions in its C
  /// signature, so a signature that changed is refused, never guessed at.
  unsigned arity;
  std::vector<RuntimeField> runtimeFields;
  std::vector<unsigned> noAliasArgs;
  /// Float constants (clamp bounds of a fused activation) shape the class
  /// too; the int8 kernels' scales stay run-time arguments.
  bool floatsInClass = false;
};

// The quantization's output_offset; weights, bias, scratch and the
// quantization tables (bundlefit_kernels_int8.h). Measured on Cortex-M7
// (bench/mcu): MobileNetV1-0.25's five 128-channel blocks share one depthwise
// and one pointwise function (.text -4.8 KB, +1.9% instructions). Not
// bf_conv2d_s8 / bf_conv2d_im2col_s8: ResNet-8's two shared 3x3 convolutions
// came out 1.1 KB larger than their two specialised copies.
const RuntimeField kOutputOffset{"bf_quant_params", "output_offset"};
const ShapeClassPolicy kPolicies[] = {
    {"bf_pointwise_inplace_s8", 13, {kOutputOffset}, {1, 2, 4, 8, 9, 10, 11, 12}},
    {"bf_depthwise_conv2d_s8", 11, {kOutputOffset}, {1, 2, 6, 7, 8, 9, 10}},
    {"bf_depthwise_inplace_s8", 12, {kOutputOffset}, {1, 2, 4, 7, 8, 9, 10, 11}},
};

// The float convolutions, grouped only when their call sites outnumber
// kMaxSpecialisedConvolutions (patch tiles multiply them): all four pointers
// at run time, the C kernel's restrict already says they do not alias.
const ShapeClassPolicy kConvolutionPolicies[] = {
    {"bf_conv2d_f32", 8, {}, {}, true},
    {"bf_conv_transpose2d_f32", 8, {}, {}, true},
};

const ShapeClassPolicy *policyFor(llvm::StringRef name) {
  for (const ShapeClassPolicy &policy : kPolicies)
    if (name == policy.kernel)
      return &policy;
  return nullptr;
}

/// A parameter struct argument: a constant global of a kernel struct type
/// ("struct.bf_*", KernelArg::Params), or null.
llvm::GlobalVariable *paramsGlobal(llvm::Value *arg) {
  auto *global = llvm::dyn_cast<llvm::GlobalVariable>(arg);
  if (!global || !global->isConstant() || !global->hasInitializer())
    return nullptr;
  auto *type = llvm::dyn_cast<llvm::StructType>(global->getValueType());
  return type && type->hasName() && type->getName().startswith("struct.bf_") ? global : nullptr;
}

/// The fields of `global`'s struct that `policy` passes at run time.
std::vector<unsigned> runtimeFieldsOf(const ShapeClassPolicy &policy,
                                      const llvm::GlobalVariable &global) {
  const llvm::StringRef cStruct = global.getValueType()->getStructName().drop_front(7); // struct.
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
/// the same object file.
template <typename PolicyOf>
std::vector<std::pair<ClassKey, std::vector<llvm::CallInst *>>>
groupByClass(const std::vector<llvm::CallInst *> &calls, PolicyOf policyOf) {
  ClassStructs structs;
  std::map<ClassKey, size_t> classIndex;
  std::vector<std::pair<ClassKey, std::vector<llvm::CallInst *>>> classes;
  for (llvm::CallInst *call : calls) {
    llvm::Function *kernel = call->getCalledFunction();
    const ShapeClassPolicy &policy = *policyOf(kernel->getName());
    if (kernel->arg_size() != policy.arity)
      fatalInternal("kernel " + kernel->getName().str() + " takes " +
                    std::to_string(kernel->arg_size()) + " arguments, its shape-class policy " +
                    std::to_string(policy.arity));
    ClassKey key{kernel, classOf(*call, policy, structs)};
    auto [it, added] = classIndex.try_emplace(key, classes.size());
    if (added)
      classes.push_back({key, {}});
    classes[it->second].second.push_back(call);
  }
  return classes;
}

/// Measured on Cortex-M7 (bench/mcu): MobileNetV1-0.25's 13 pointwise
/// layers (9 shapes) shared: .text 33.0 -> 21.6 KB at 0.81x of CMSIS-NN's
/// instructions (0.76x specialised); DS-CNN's four (one shape, one class
/// function) shared: 0.92x instead of 0.87x and 80 bytes more.
constexpr size_t kMinSharedPointwiseShapes = 3;

/// The constant shape of a call of an int8 1x1 stride-1 convolution kernel
/// (empty if it is none), from its bf_conv_params by field name:
/// bf_pointwise_inplace_s8's c, h, w, m and rows (its one integer argument)
/// and bf_conv2d_im2col_s8's n, c, h, w, m, oh, ow when its kernel is 1x1
/// with strides 1 (bundlefit_kernels_int8.h).
std::vector<int64_t> pointwiseShape(const llvm::CallInst &call) {
  const llvm::StringRef name = call.getCalledFunction()->getName();
  const bool inPlace = name == "bf_pointwise_inplace_s8";
  if (!inPlace && name != "bf_conv2d_im2col_s8")
    return {};
  const llvm::ConstantStruct *conv = nullptr;
  std::optional<int64_t> rows;
  for (const llvm::Use &arg : call.args()) {
    if (llvm::GlobalVariable *params = paramsGlobal(arg.get());
        params && params->getValueType()->getStructName() == "struct.bf_conv_params")
      conv = llvm::dyn_cast<llvm::ConstantStruct>(params->getInitializer());
    else if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(arg.get()))
      rows = c->getSExtValue();
  }
  if (!conv)
    return {};
  auto field = [&](const char *fieldName) {
    return llvm::cast<llvm::ConstantInt>(
               conv->getOperand(unsigned(kernelParamsFieldIndex<bf_conv_params>(fieldName))))
        ->getSExtValue();
  };
  if (inPlace)
    return {1, field("c"), field("h"), field("w"), field("m"), rows.value_or(-1)};
  for (const char *one : {"kh", "kw", "stride_h", "stride_w"})
    if (field(one) != 1)
      return {};
  return {0, field("n"), field("c"), field("h"), field("w"), field("m"), field("oh"), field("ow")};
}

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
            if (std::vector<int64_t> shape = pointwiseShape(*call); !shape.empty())
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
              policyFor(callee->getName()))
            calls.push_back(call);
  }
  unsigned index = 0;
  for (auto &[key, members] : groupByClass(calls, policyFor)) {
    if (members.size() < 2) // specialised in its node function, as before
      continue;
    const ShapeClassPolicy &policy = *policyFor(key.first->getName());
    llvm::Function *wrapper = makeWrapper(*key.first, policy, key.second, index++);
    for (llvm::CallInst *call : members)
      callWrapper(*call, *wrapper, policy, key.second);
  }
}

size_t shareConvolutionsByShape(llvm::Module &module) {
  size_t classCount = 0;
  unsigned index = 0;
  for (const ShapeClassPolicy &policy : kConvolutionPolicies) {
    llvm::Function *kernel = module.getFunction(policy.kernel);
    if (!kernel || kernel->isDeclaration() || kernel->getNumUses() <= kMaxSpecialisedConvolutions)
      continue;
    // The graph's call sites: in node functions and patch tiles' functions
    // (conv_pool.c and conv_inplace.c call the kernel with run-time shapes).
    std::vector<llvm::CallInst *> calls;
    for (llvm::User *user : kernel->users())
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(user))
        if (call->getCalledFunction() == kernel &&
            (call->getFunction()->hasFnAttribute(kNodeFunctionAttribute) ||
             call->getFunction()->hasFnAttribute(kTileFunctionAttribute)))
          calls.push_back(call);
    auto classes = groupByClass(calls, [&](llvm::StringRef) { return &policy; });
    // The other uses are kernels calling it with their own run-time shapes
    // (conv_pool.c, conv_inplace.c): specialised where those are inlined.
    if (classes.size() > kMaxSpecialisedConvolutionShapes)
      continue; // Too many shapes: one shared generic copy, as before.
    kernel->addFnAttr(kShapesGroupedAttribute);
    for (auto &[key, members] : classes) {
      ++classCount;
      if (members.size() < 2) // Specialised where it is called.
        continue;
      llvm::Function *wrapper = makeWrapper(*kernel, policy, key.second, index++);
      for (llvm::CallInst *call : members)
        callWrapper(*call, *wrapper, policy, key.second);
    }
  }
  return classCount;
}

} // namespace bundlefit
