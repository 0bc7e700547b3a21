//===- KernelClasses.cpp - Share big kernels by shape class ----------------===//
#include "KernelClasses.h"

#include "LowerGraph.h"
#include "bundlefit/support/Error.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/IR/Constants.h>
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

/// The integer arguments (0-based) a kernel takes at run time although they
/// are constants: the output offset, one add per output either way. Every
/// other constant (shapes, the input offset, flags, clamp bounds, null
/// tables) stays in the class; pointers and tables are passed.
///
/// `noAliasArgs` are the weights, bias and requantization tables (only read,
/// and planned apart from the node's output) and the node's own scratch:
/// noalias in the wrapper, as the node function's distinct constant offsets
/// showed before (the in-place kernels' input and output may be one address,
/// so without it LLVM would reload around every store).
struct ShapeClassPolicy {
  const char *kernel;
  /// The kernel's parameter count: the indices below are positions in its C
  /// signature, so a signature that changed is refused, never guessed at.
  unsigned arity;
  std::vector<unsigned> runtimeArgs;
  std::vector<unsigned> noAliasArgs;
  /// Float constants (clamp bounds of a fused activation) shape the class
  /// too; the int8 kernels' scales stay run-time arguments.
  bool floatsInClass = false;
};

// outputOffset of each kernel; weights, bias, scratch and the quantization
// tables (bundlefit_kernels_int8.h). Measured on Cortex-M7 (bench/mcu):
// MobileNetV1-0.25's five 128-channel blocks share one depthwise and one
// pointwise function (.text -4.8 KB, +1.9% instructions). Not bf_conv2d_s8 /
// bf_conv2d_im2col_s8: ResNet-8's two shared 3x3 convolutions came out 1.1 KB
// larger than their two specialised copies.
const ShapeClassPolicy kPolicies[] = {
    {"bf_pointwise_inplace_s8", 20, {11}, {1, 2, 4, 12, 13, 17, 18, 19}},
    {"bf_depthwise_conv2d_s8", 29, {20}, {1, 2, 21, 22, 26, 27, 28}},
    {"bf_depthwise_inplace_s8", 29, {20}, {1, 2, 4, 21, 22, 26, 27, 28}},
};

// The float convolutions, grouped only when their call sites outnumber
// kMaxSpecialisedConvolutions (patch tiles multiply them): all four pointers
// at run time, the C kernel's restrict already says they do not alias.
const ShapeClassPolicy kConvolutionPolicies[] = {
    {"bf_conv2d_f32", 23, {}, {}, true},
    {"bf_conv_transpose2d_f32", 23, {}, {}, true},
};

const ShapeClassPolicy *policyFor(llvm::StringRef name) {
  for (const ShapeClassPolicy &policy : kPolicies)
    if (name == policy.kernel)
      return &policy;
  return nullptr;
}

/// The call's class: for each argument, its constant if it is a class
/// argument (or a null pointer), else nullptr (passed at run time).
std::vector<llvm::Constant *> classOf(const llvm::CallInst &call, const ShapeClassPolicy &policy) {
  std::vector<llvm::Constant *> key(call.arg_size(), nullptr);
  for (unsigned i = 0; i < call.arg_size(); ++i) {
    auto *constant = llvm::dyn_cast<llvm::Constant>(call.getArgOperand(i));
    if (!constant)
      continue;
    const bool runtime = std::find(policy.runtimeArgs.begin(), policy.runtimeArgs.end(), i) !=
                         policy.runtimeArgs.end();
    if (llvm::isa<llvm::ConstantInt>(constant)  ? !runtime
        : llvm::isa<llvm::ConstantFP>(constant) ? policy.floatsInClass
                                                : llvm::isa<llvm::ConstantPointerNull>(constant))
      key[i] = constant;
  }
  return key;
}

/// `void kernel.class<n>(same parameters)`: calls the kernel with the
/// class's constants in place of their parameters (inlined there later).
llvm::Function *makeWrapper(llvm::Function &kernel, const ShapeClassPolicy &policy,
                            const std::vector<llvm::Constant *> &key, unsigned index) {
  auto *wrapper = llvm::Function::Create(
      kernel.getFunctionType(), llvm::GlobalValue::InternalLinkage,
      kernel.getName() + ".class" + std::to_string(index), kernel.getParent());
  wrapper->setAttributes(kernel.getAttributes());
  wrapper->addFnAttr(llvm::Attribute::NoInline);
  for (unsigned i : policy.noAliasArgs)
    if (i < wrapper->arg_size() && wrapper->getArg(i)->getType()->isPointerTy())
      wrapper->addParamAttr(i, llvm::Attribute::NoAlias);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(kernel.getContext(), "entry", wrapper));
  std::vector<llvm::Value *> args;
  for (unsigned i = 0; i < wrapper->arg_size(); ++i)
    args.push_back(key[i] ? static_cast<llvm::Value *>(key[i]) : wrapper->getArg(i));
  builder.CreateCall(&kernel, args);
  builder.CreateRetVoid();
  return wrapper;
}

using ClassKey = std::pair<llvm::Function *, std::vector<llvm::Constant *>>;

/// The calls grouped by (kernel, class), classes in the order of their first
/// call, not of their keys' addresses, so that the same model always gives
/// the same object file.
template <typename PolicyOf>
std::vector<std::pair<ClassKey, std::vector<llvm::CallInst *>>>
groupByClass(const std::vector<llvm::CallInst *> &calls, PolicyOf policyOf) {
  std::map<ClassKey, size_t> classIndex;
  std::vector<std::pair<ClassKey, std::vector<llvm::CallInst *>>> classes;
  for (llvm::CallInst *call : calls) {
    llvm::Function *kernel = call->getCalledFunction();
    const ShapeClassPolicy &policy = *policyOf(kernel->getName());
    if (kernel->arg_size() != policy.arity)
      fatalInternal("kernel " + kernel->getName().str() + " takes " +
                    std::to_string(kernel->arg_size()) + " arguments, its shape-class policy " +
                    std::to_string(policy.arity));
    ClassKey key{kernel, classOf(*call, policy)};
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
/// (empty if it is none): bf_pointwise_inplace_s8's C, H, W, M, rows and
/// bf_conv2d_im2col_s8's N, C, H, W, M, OH, OW when its kernel is 1x1 with
/// strides 1 (bundlefit_kernels_int8.h).
std::vector<int64_t> pointwiseShape(const llvm::CallInst &call) {
  const llvm::StringRef name = call.getCalledFunction()->getName();
  auto constant = [&](unsigned i) -> std::optional<int64_t> {
    if (i >= call.arg_size())
      return std::nullopt;
    if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(call.getArgOperand(i)))
      return c->getSExtValue();
    return std::nullopt;
  };
  std::vector<unsigned> shapeArgs;
  if (name == "bf_pointwise_inplace_s8") {
    shapeArgs = {5, 6, 7, 8, 9};
  } else if (name == "bf_conv2d_im2col_s8") {
    for (unsigned i : {11u, 12u, 13u, 14u}) // KH, KW, strideH, strideW
      if (constant(i) != 1)
        return {};
    shapeArgs = {4, 5, 6, 7, 8, 9, 10};
  } else {
    return {};
  }
  std::vector<int64_t> shape{name == "bf_pointwise_inplace_s8"};
  for (unsigned i : shapeArgs)
    shape.push_back(constant(i).value_or(-1));
  return shape;
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
    llvm::Function *wrapper =
        makeWrapper(*key.first, *policyFor(key.first->getName()), key.second, index++);
    for (llvm::CallInst *call : members)
      call->setCalledFunction(wrapper);
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
        call->setCalledFunction(wrapper);
    }
  }
  return classCount;
}

} // namespace bundlefit
