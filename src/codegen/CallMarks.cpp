//===- CallMarks.cpp - What a kernel call's family said about it ----------===//
#include "CallMarks.h"

#include "bundlefit/support/Error.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/IR/Attributes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

#include <string>

namespace bundlefit {
namespace {

// String attributes of the call instruction (never of the kernel: its other
// calls may say otherwise). Names, not flags, so the IR reads as it means.
constexpr const char *kSharingMark = "bundlefit-sharing";
constexpr const char *kPointwiseShapeMark = "bundlefit-pointwise-shape";
constexpr const char *kNoAliasMark = "bundlefit-noalias";
constexpr const char *kShapeClassValue = "shape-class";
constexpr const char *kByShapeValue = "by-shape";

} // namespace

void markCall(llvm::CallInst &call, const KernelCall &kernelCall,
              const std::vector<unsigned> &noAliasArgs) {
  switch (kernelCall.sharing) {
  case CallSharing::Specialise:
    break;
  case CallSharing::ShapeClass:
    call.addFnAttr(llvm::Attribute::get(call.getContext(), kSharingMark, kShapeClassValue));
    break;
  case CallSharing::ByShape:
    call.addFnAttr(llvm::Attribute::get(call.getContext(), kSharingMark, kByShapeValue));
    break;
  }
  if (!kernelCall.pointwiseShape.empty()) {
    std::string shape;
    for (int64_t extent : kernelCall.pointwiseShape)
      shape += (shape.empty() ? "" : ",") + std::to_string(extent);
    call.addFnAttr(llvm::Attribute::get(call.getContext(), kPointwiseShapeMark, shape));
  }
  for (unsigned arg : noAliasArgs)
    call.addParamAttr(arg, llvm::Attribute::get(call.getContext(), kNoAliasMark));
}

CallSharing sharingOf(const llvm::CallInst &call) {
  const llvm::Attribute mark = call.getAttributes().getFnAttr(kSharingMark);
  if (!mark.isValid())
    return CallSharing::Specialise;
  if (mark.getValueAsString() == kShapeClassValue)
    return CallSharing::ShapeClass;
  if (mark.getValueAsString() == kByShapeValue)
    return CallSharing::ByShape;
  fatalInternal("call sharing mark " + mark.getValueAsString().str() + " is unknown");
}

bool isNoAliasArg(const llvm::CallInst &call, unsigned arg) {
  return call.getAttributes().hasParamAttr(arg, kNoAliasMark);
}

std::vector<int64_t> pointwiseShapeOf(const llvm::CallInst &call) {
  const llvm::Attribute mark = call.getAttributes().getFnAttr(kPointwiseShapeMark);
  if (!mark.isValid())
    return {};
  llvm::SmallVector<llvm::StringRef, 8> extents;
  mark.getValueAsString().split(extents, ',');
  std::vector<int64_t> shape;
  for (llvm::StringRef extent : extents) {
    int64_t value = 0;
    if (extent.getAsInteger(10, value))
      fatalInternal("pointwise shape mark " + mark.getValueAsString().str() + " is malformed");
    shape.push_back(value);
  }
  return shape;
}

bool hasCallMarked(const llvm::Function &fn, CallSharing sharing) {
  for (const llvm::User *user : fn.users())
    if (const auto *call = llvm::dyn_cast<llvm::CallInst>(user))
      if (call->getCalledFunction() == &fn && sharingOf(*call) == sharing)
        return true;
  return false;
}

void stripCallMarks(llvm::Module &module) {
  for (llvm::Function &fn : module)
    for (llvm::BasicBlock &block : fn)
      for (llvm::Instruction &inst : block)
        if (auto *call = llvm::dyn_cast<llvm::CallInst>(&inst)) {
          llvm::LLVMContext &context = call->getContext();
          llvm::AttributeList attrs = call->getAttributes()
                                          .removeFnAttribute(context, kSharingMark)
                                          .removeFnAttribute(context, kPointwiseShapeMark);
          for (unsigned arg = 0; arg < call->arg_size(); ++arg)
            attrs = attrs.removeParamAttribute(context, arg, kNoAliasMark);
          call->setAttributes(attrs);
        }
}

} // namespace bundlefit
