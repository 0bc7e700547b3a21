//===- KernelClasses.h - Share big kernels by shape class (internal) -------===//
//
// Why: every kernel call is inlined into its node function and specialised
// for all its constant arguments, so layers of one shape but their own
// requantization tables (MobileNetV1's five 128-channel blocks) were five
// copies of the same loop nest: the node-function pool (NodeFunctions.h)
// cannot merge them, their tables differ. Calls of one kernel that its
// operator family marked CallSharing::ShapeClass (KernelCall.h, CallMarks.h)
// and that agree on every constant shaping the code (sizes, strides, padding, the
// input offset, flags, clamp bounds, null optional tables) share one
// noinline function specialised for those, and pass what only feeds
// arithmetic (tensor and table pointers, the output offset) at run time.
// A class with one call stays specialised in its node function.
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>

namespace llvm {
class Module;
} // namespace llvm

namespace bundlefit {

/// Routes each call marked CallSharing::ShapeClass through one
/// noinline wrapper per class (the kernel inlined into it with the class's
/// constants), instead of the call being specialised on its own.
void shareKernelsByShapeClass(llvm::Module &module);

/// Sets the int8 kernels' `bf_pointwise_shared` (int8_conv_im2col.c): 1 when
/// the node functions' calls carry at least kMinSharedPointwiseShapes
/// distinct pointwise shapes (KernelCall::pointwiseShape: int8 1x1 stride-1
/// convolutions), which then run one shared
/// function with their sizes at run time (smaller; slower per MAC), else 0:
/// each shape specialised (one shape, as DS-CNN's, is one copy anyway). Call
/// before shareKernelsByShapeClass, while the calls are in node functions.
void choosePointwiseSharing(llvm::Module &module);

/// Convolutions are big loop nests; their hot loops (depthwise rows, the
/// pointwise GEMM tiles) are noinline helpers in conv.c compiled once per
/// bundle, so specialising a call mostly folds the dispatch and the general
/// direct-convolution path: MobileNetV2 (52 convolutions) compiles in about
/// the same CPU time either way (3.4 s, measured). Up to this many call sites
/// O2 specialises each call where it is made.
inline constexpr unsigned kMaxSpecialisedConvolutions = 64;

/// Past kMaxSpecialisedConvolutions call sites (--memory-opt 2's patch tiles
/// repeat each layer per tile kind), O2 specialises one copy per distinct
/// shape, up to this many shapes; beyond, one shared generic copy bounds
/// compile time and code. Measured at --memory-opt 2 (host, CPU time, shared
/// machine): MobileNetV2-0.35 96x96 (89 calls, 71 shapes) and MobileNetV2
/// 224x224 (174 calls, 137 shapes) ran 1.39x and 1.19x faster than with the
/// generic copy, for +1.0 s and +2.0 s of compile time and .text +15% and
/// +48% on Cortex-M7 (59,322 -> 68,094 and 88,714 -> 130,946 bytes); `--opt Os`
/// keeps code small.
inline constexpr unsigned kMaxSpecialisedConvolutionShapes = 256;

/// When a kernel whose calls are marked CallSharing::ByShape (the float
/// convolutions) has more call sites than kMaxSpecialisedConvolutions,
/// routes the calls of each distinct shape (every integer and float
/// constant, null bias) through one noinline function specialised for it,
/// so the kernel is specialised once per shape instead of running one
/// generic copy. More shapes than kMaxSpecialisedConvolutionShapes: nothing
/// changes. A grouped kernel carries kShapesGroupedAttribute. Returns the
/// number of shapes grouped (0 if none).
size_t shareConvolutionsByShape(llvm::Module &module);

/// String attribute of a convolution kernel whose calls
/// shareConvolutionsByShape grouped: specialise it whatever its use count.
inline constexpr const char *kShapesGroupedAttribute = "bundlefit-shapes-grouped";

} // namespace bundlefit
