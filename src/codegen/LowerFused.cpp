//===- LowerFused.cpp - ConvPool and in-place depthwise kernel calls --------===//
#include "LowerFused.h"

#include "bundlefit/kernels/abi.h" // the parameter structs
#include "bundlefit/ops/KernelParams.h"
#include "bundlefit/ops/ShapeHelpers.h"

#include "bundlefit/support/Error.h"

namespace bundlefit {

namespace {

using Ints = std::vector<int64_t>;

KernelArg address(const Value *value) { return KernelArg::address(value); }
KernelArg scratch() { return KernelArg::scratch(); }
KernelArg i32(int64_t v) { return KernelArg::i32(v); }
KernelArg activation(const Node &node) { return KernelArg::activation(node); }

[[noreturn]] void unsupported(const Node &node, const std::string &what) {
  throw Error(ExitCode::Unsupported, node.describe() + ": " + what);
}

shape_helpers::Window windowOf(const Node &node, const Shape &in, const Ints &kernel) {
  bool ceilMode = node.attrs.getInt("ceil_mode", 0) != 0;
  return shape_helpers::resolveWindow(node, Ints(in.begin() + 2, in.end()), kernel, ceilMode);
}

void requireScratch(const Node &node, const MemoryPlan &plan) {
  if (!plan.scratchOf(&node))
    fatalInternal(node.describe() + " runs with a workspace the memory plan did not reserve");
}

KernelCall convPoolCall(const Node &node, const MemoryPlan &plan) {
  KernelCall call;
  call.parts = splitConvPool(node);
  const ConvPoolParts &p = *call.parts;
  for (const Value *v : {&p.x, &p.w, &p.convOut, &p.y})
    if (v->type.dtype != DType::Float32)
      unsupported(node,
                  "only float32 ConvPool has a kernel (" + v->name + " is " + v->type.str() + ")");
  requireScratch(node, plan);
  const Shape &xs = p.x.type.shape, &cs = p.convOut.type.shape, &ys = p.y.type.shape;
  const Ints kernel(p.w.type.shape.begin() + 2, p.w.type.shape.end());
  const shape_helpers::Window cw = windowOf(p.conv, xs, kernel);
  const shape_helpers::Window pw = windowOf(p.pool, cs, p.pool.attrs.getInts("kernel_shape"));
  const bool isMax = p.pool.opType == "MaxPool";
  if (!isMax && (pw.dilations[0] != 1 || pw.dilations[1] != 1))
    unsupported(node, "AveragePool with dilations");
  const Node &n = node;
  bf_conv_params conv = unsetKernelParams<bf_conv_params>();
  conv.n = paramI32(n, xs[0]), conv.c = paramI32(n, xs[1]), conv.h = paramI32(n, xs[2]);
  conv.w = paramI32(n, xs[3]), conv.m = paramI32(n, cs[1]), conv.oh = paramI32(n, cs[2]);
  conv.ow = paramI32(n, cs[3]), conv.kh = paramI32(n, kernel[0]), conv.kw = paramI32(n, kernel[1]);
  conv.stride_h = paramI32(n, cw.strides[0]), conv.stride_w = paramI32(n, cw.strides[1]);
  conv.pad_t = paramI32(n, cw.padsBegin[0]), conv.pad_l = paramI32(n, cw.padsBegin[1]);
  conv.dil_h = paramI32(n, cw.dilations[0]), conv.dil_w = paramI32(n, cw.dilations[1]);
  conv.groups = paramI32(n, p.conv.attrs.getInt("group", 1));
  bf_pool_params pool = unsetKernelParams<bf_pool_params>();
  pool.oh = paramI32(n, ys[2]), pool.ow = paramI32(n, ys[3]);
  pool.kh = paramI32(n, pw.kernel[0]), pool.kw = paramI32(n, pw.kernel[1]);
  pool.stride_h = paramI32(n, pw.strides[0]), pool.stride_w = paramI32(n, pw.strides[1]);
  pool.pad_t = paramI32(n, pw.padsBegin[0]), pool.pad_l = paramI32(n, pw.padsBegin[1]);
  pool.pad_b = paramI32(n, pw.padsEnd[0]), pool.pad_r = paramI32(n, pw.padsEnd[1]);
  pool.dil_h = paramI32(n, pw.dilations[0]), pool.dil_w = paramI32(n, pw.dilations[1]);
  pool.is_max = isMax;
  pool.count_include_pad = paramI32(n, p.pool.attrs.getInt("count_include_pad", 0));
  pool.pad_value = 0, pool.act_min = 0, pool.act_max = 0; // int8 only
  pool.chunk = paramI32(n, node.attrs.getInt("channel_chunk", cs[1]));
  call.kernel = "bf_conv_pool2d_f32";
  call.args = {address(node.input(0)),
               address(node.input(1)),
               address(node.input(2)),
               address(node.output()),
               scratch(),
               kernelParams(n, conv),
               kernelParams(n, pool),
               activation(p.conv)};
  return call;
}

/// A Conv whose output the plan placed on its input (MemoryPlan.cpp only does
/// so for depthwise convs that bf_depthwise_inplace_* can run and 1x1 convs
/// that bf_pointwise_inplace_* can run).
bool isInPlaceConv(const Node &node, const MemoryPlan &plan) {
  if (node.opType != "Conv" || !node.input(0) || !node.output())
    return false;
  auto x = plan.placements.find(node.input(0)), y = plan.placements.find(node.output());
  if (x == plan.placements.end() || y == plan.placements.end())
    return false;
  return x->second.region == y->second.region && x->second.offset == y->second.offset &&
         x->second.size > 0 && y->second.size > 0;
}

KernelCall inPlaceDepthwiseCall(const Node &node, const MemoryPlan &plan) {
  requireScratch(node, plan);
  const Value *x = node.input(0), *w = node.input(1), *y = node.output();
  const Shape &xs = x->type.shape, &ys = y->type.shape;
  const Ints kernel(w->type.shape.begin() + 2, w->type.shape.end());
  const shape_helpers::Window cw = windowOf(node, xs, kernel);
  KernelCall call;
  call.kernel = "bf_depthwise_inplace_f32";
  call.args = {address(x),
               address(w),
               address(node.input(2)),
               address(y),
               scratch(),
               i32(xs[0]),
               i32(xs[1]),
               i32(xs[2]),
               i32(xs[3]),
               i32(ys[2]),
               i32(ys[3]),
               i32(kernel[0]),
               i32(kernel[1]),
               i32(cw.strides[0]),
               i32(cw.strides[1]),
               i32(cw.padsBegin[0]),
               i32(cw.padsBegin[1]),
               i32(cw.dilations[0]),
               i32(cw.dilations[1]),
               activation(node)};
  return call;
}

/// The plan's workspace for a 1x1 conv in place must be the one the kernel
/// will use: pointwiseInPlaceRows rows of output, every channel.
int64_t pointwiseRows(const Node &node, const MemoryPlan &plan) {
  requireScratch(node, plan);
  const int64_t rows = pointwiseInPlaceRows(node);
  if (!rows || plan.scratchOf(&node)->size < pointwiseInPlaceScratch(node))
    fatalInternal(node.describe() + " is in place without the workspace of a 1x1 conv");
  return rows;
}

KernelCall inPlacePointwiseCall(const Node &node, const MemoryPlan &plan) {
  const Shape &xs = node.input(0)->type.shape, &ys = node.output()->type.shape;
  KernelCall call;
  call.kernel = "bf_pointwise_inplace_f32";
  call.args = {address(node.input(0)),
               address(node.input(1)),
               address(node.input(2)),
               address(node.output()),
               scratch(),
               i32(xs[1]),
               i32(xs[2]),
               i32(xs[3]),
               i32(ys[1]),
               i32(pointwiseRows(node, plan)),
               activation(node)};
  return call;
}

} // namespace

void rewriteInt8InPlaceCalls(const Node &node, const MemoryPlan &plan,
                             std::vector<KernelCall> &calls) {
  if (!isInPlaceConv(node, plan))
    return;
  for (KernelCall &call : calls) {
    if (call.kernel == "bf_conv2d_s8" || call.kernel == "bf_conv2d_im2col_s8") {
      // The same structs and tables (bundlefit_kernels_int8.h); the in-place
      // kernel's scratch comes before the geometry, its row block after it,
      // and the im2col columns (the last argument) become part of its scratch.
      if (call.kernel == "bf_conv2d_im2col_s8")
        call.args.pop_back();
      const size_t conv = kernelParamsArg<bf_conv_params>(call);
      call.kernel = "bf_pointwise_inplace_s8";
      call.args.insert(call.args.begin() + conv + 1, i32(pointwiseRows(node, plan)));
      call.args.insert(call.args.begin() + conv, scratch());
      continue;
    }
    if (call.kernel != "bf_depthwise_conv2d_s8")
      continue;
    requireScratch(node, plan);
    if (kernelParamsField<bf_conv_params>(call, "m") !=
        kernelParamsField<bf_conv_params>(call, "c"))
      fatalInternal(node.describe() + " is in place with a channel multiplier");
    call.kernel = "bf_depthwise_inplace_s8";
    call.args.insert(call.args.begin() + kernelParamsArg<bf_conv_params>(call), scratch());
  }
}

std::optional<KernelCall> describeMemoryOptCall(const Node &node, const MemoryPlan &plan) {
  if (node.opType == kConvPoolOp)
    return convPoolCall(node, plan);
  if (isInPlaceConv(node, plan))
    return node.attrs.getInt("group", 1) == 1 ? inPlacePointwiseCall(node, plan)
                                              : inPlaceDepthwiseCall(node, plan);
  return std::nullopt;
}

} // namespace bundlefit
