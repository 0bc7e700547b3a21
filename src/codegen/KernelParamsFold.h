//===- KernelParamsFold.h - Fields every call of a kernel shares -----------===//
//
// Why: a kernel taking positional integers had each one folded into its
// body by interprocedural constant propagation when every call passed the
// same value (before inlining, so the noinline helpers it calls, compiled
// once per bundle, were specialised for it). A parameter struct is a pointer
// per call (one constant global per distinct value), which that propagation
// does not look through: MobileNetV1-0.25 int8 lost 2.4 KB of Cortex-M7
// .text that way. This pass gives it the fields back.
//===----------------------------------------------------------------------===//
#pragma once

namespace llvm {
class Module;
} // namespace llvm

namespace bundlefit {

/// In each internal function, replaces every load of a parameter-struct
/// field (abi.h; a constant offset from a pointer argument) by the constant
/// that all its direct calls pass in that field: constant globals, the
/// caller's own such argument (a shape-class wrapper), or a struct the
/// caller builds in a local from a constant and run-time fields. Returns the
/// number of loads replaced. Run after the kernels become internal (no
/// unknown callers) and before the optimisation pipeline.
unsigned foldSharedKernelParams(llvm::Module &module);

} // namespace bundlefit
