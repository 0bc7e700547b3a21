//===- ConvLower.cpp - The bundle's float Conv and ConvTranspose calls -----===//
//
// 1-D and 2-D: bf_conv2d_f32 / bf_conv_transpose2d_f32 with a bf_conv_params
// (common/WindowParams.h). A Conv the memory plan put in place (--memory-opt,
// InPlaceOps.h) runs bf_depthwise_inplace_f32 (depthwise) or
// bf_pointwise_inplace_f32 (1x1) over its own input. 3-D: the direct-loop
// kernels taking {D, H, W} tables.
//
//===----------------------------------------------------------------------===//
#include "common/WindowParams.h"
#include "conv/Conv.h"

#include "bundlefit/ops/InPlaceOps.h"
#include "bundlefit/ops/KernelParams.h"
#include "bundlefit/ops/LowerHelpers.h"
#include "bundlefit/support/Error.h"

namespace bundlefit {

namespace {

using namespace lowering; // Ints, input, requireFloat, call

/// The in-place kernels' workspace must be the plan's: at least `bytes`.
void requireScratch(const Node &node, const PlanView &plan, uint64_t bytes) {
  const std::optional<uint64_t> reserved = plan.scratchBytes(node);
  if (!reserved || *reserved < bytes)
    fatalInternal(node.describe() + " runs in place without the workspace its kernel needs");
}

/// Conv in place: a depthwise conv one plane at a time, a 1x1 conv a block
/// of pixels at a time (MemoryPlan.cpp only places those two on their input).
KernelCall inPlaceCall(const Node &node, const PlanView &plan, const bf_conv_params &conv) {
  KernelCall call;
  call.args = {KernelArg::address(node.input(0)), KernelArg::address(node.input(1)),
               KernelArg::address(node.input(2)), KernelArg::address(node.output()),
               KernelArg::scratch()};
  if (conv.groups == 1) {
    const int64_t block = pointwiseInPlacePixels(node);
    if (!block)
      fatalInternal(node.describe() + " is in place but is no 1x1 convolution");
    requireScratch(node, plan, pointwiseInPlaceScratch(node));
    call.kernel = "bf_pointwise_inplace_f32";
    call.args.push_back(kernelParams(node, conv));
    call.args.push_back(KernelArg::i32(block));
  } else {
    if (conv.m != conv.c || conv.groups != conv.c)
      fatalInternal(node.describe() + " is in place but is no depthwise convolution");
    requireScratch(node, plan, depthwiseInPlaceScratch(node));
    call.kernel = "bf_depthwise_inplace_f32";
    call.args.push_back(kernelParams(node, conv));
  }
  call.args.push_back(KernelArg::activation(node));
  return call;
}

std::vector<KernelCall> lowerConvF32(const Node &node, const PlanView &plan, bool transposed) {
  const Value *x = input(node, 0), *w = input(node, 1), *b = node.input(2), *y = node.output(0);
  requireFloat(node, x), requireFloat(node, w), requireFloat(node, y);
  if (b)
    requireFloat(node, b);
  const Shape &xs = x->type.shape, &ws = w->type.shape, &ys = y->type.shape;
  if (ws.size() != xs.size())
    unsupported(node, "weight rank differs from input rank");
  const Ints kernel(ws.begin() + 2, ws.end()); // the weight's spatial dims (as the interpreter)
  if (xs.size() == 5) {
    const bf_window3d_params conv = window_params::conv3dParams(node, xs, ys, kernel, transposed);
    return {call(transposed ? "bf_conv_transpose3d_f32" : "bf_conv3d_f32",
                 {KernelArg::address(x), KernelArg::address(w), KernelArg::address(b),
                  KernelArg::address(y), kernelParams(node, conv), KernelArg::activation(node)})};
  }
  const bf_conv_params conv = window_params::convParams(node, xs, ys, kernel, transposed);
  if (!transposed && plan.outputOnInput(node))
    return {inPlaceCall(node, plan, conv)};
  // Big loop nests: past kMaxSpecialisedConvolutions call sites (patch
  // tiles repeat each layer), specialised once per shape (KernelClasses.h).
  KernelCall c =
      call(transposed ? "bf_conv_transpose2d_f32" : "bf_conv2d_f32",
           {KernelArg::address(x), KernelArg::address(w), KernelArg::address(b),
            KernelArg::address(y), kernelParams(node, conv), KernelArg::activation(node)});
  c.sharing = CallSharing::ByShape;
  return {c};
}

} // namespace

namespace conv_float {
std::vector<KernelCall> lowerConv(const Node &node, const PlanView &plan) {
  return lowerConvF32(node, plan, false);
}
std::vector<KernelCall> lowerConvTranspose(const Node &node, const PlanView &plan) {
  return lowerConvF32(node, plan, true);
}
} // namespace conv_float

} // namespace bundlefit
