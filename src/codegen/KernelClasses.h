//===- KernelClasses.h - Share big kernels by shape class (internal) -------===//
//
// Why: every kernel call is inlined into its node function and specialised
// for all its constant arguments, so layers of one shape but their own
// requantization tables (MobileNetV1's five 128-channel blocks) were five
// copies of the same loop nest: the node-function pool (NodeFunctions.h)
// cannot merge them, their tables differ. Calls of a listed kernel that
// agree on every constant shaping the code (sizes, strides, padding, the
// input offset, flags, clamp bounds, null optional tables) share one
// noinline function specialised for those, and pass what only feeds
// arithmetic (tensor and table pointers, the output offset) at run time.
// A class with one call stays specialised in its node function.
//===----------------------------------------------------------------------===//
#pragma once

namespace llvm {
class Module;
} // namespace llvm

namespace bundlefit {

/// Routes each call of a kernel with a shape-class policy through one
/// noinline wrapper per class (the kernel inlined into it with the class's
/// constants), instead of the call being specialised on its own.
void shareKernelsByShapeClass(llvm::Module &module);

/// Sets the int8 kernels' `bf_pointwise_shared` (int8_conv_im2col.c): 1 when
/// the node functions call int8 1x1 stride-1 convolutions of at least
/// kMinSharedPointwiseShapes distinct shapes, which then run one shared
/// function with their sizes at run time (smaller; slower per MAC), else 0:
/// each shape specialised (one shape, as DS-CNN's, is one copy anyway). Call
/// before shareKernelsByShapeClass, while the calls are in node functions.
void choosePointwiseSharing(llvm::Module &module);

} // namespace bundlefit
