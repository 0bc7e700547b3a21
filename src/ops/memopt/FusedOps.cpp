//===- FusedOps.cpp - ConvPool: Conv (+activation) fused with the pool after it ===//
//
// Type inference and MACs reuse the Conv and pool schemas on the split parts,
// so the fused node can never disagree with the two nodes it replaced.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/FusedOps.h"
#include "memopt/MemOpt.h"

#include "bundlefit/ops/InPlaceOps.h"
#include "bundlefit/ops/KernelParams.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/PatchStage.h"
#include "bundlefit/support/CheckedMath.h"

#include "bundlefit/ops/ShapeHelpers.h"
#include "common/CallArgs.h"
#include "common/WindowParams.h"
#include "conv/Conv.h"
#include "pool/Pool.h"
#include "recurrent/TfliteLstm.h"

namespace bundlefit {

namespace {

const std::string kConvPrefix = "conv.";
const std::string kPoolPrefix = "pool.";

void copyOperand(const Value *from, Value &to, const std::string &name) {
  to.name = from ? from->name : name;
  to.type = from ? from->type : TensorType{};
  to.kind = ValueKind::GraphInput; // Types only: no bytes, no producer.
  to.typeKnown = from && from->typeKnown;
}

void inferConvPool(Node &node) {
  if (node.inputs.size() < 2 || !node.input(0) || !node.input(1))
    shape_helpers::unsupported(node, "ConvPool needs inputs X and W");
  if (node.input(0)->type.rank() != 4)
    shape_helpers::unsupported(node,
                               "ConvPool is 2-D only (input " + node.input(0)->type.str() + ")");
  std::unique_ptr<ConvPoolParts> parts = splitConvPool(node);
  node.output(0)->type = parts->y.type;
}

uint64_t convPoolMacs(const Node &node) {
  std::unique_ptr<ConvPoolParts> parts = splitConvPool(node);
  return countNodeMacs(parts->conv);
}

} // namespace

std::unique_ptr<ConvPoolParts> splitConvPool(const Node &fused) {
  auto parts = std::make_unique<ConvPoolParts>();
  copyOperand(fused.input(0), parts->x, "X");
  copyOperand(fused.input(1), parts->w, "W");
  parts->hasBias = fused.input(2) != nullptr;
  if (parts->hasBias)
    copyOperand(fused.input(2), parts->b, "B");
  parts->convOut.name = fused.name + ".conv";
  parts->y.name = fused.output(0) ? fused.output(0)->name : fused.name + ".pool";

  parts->conv.name = fused.name + ".conv";
  parts->conv.opType = "Conv";
  parts->conv.inputs = {&parts->x, &parts->w};
  if (parts->hasBias)
    parts->conv.inputs.push_back(&parts->b);
  parts->conv.outputs = {&parts->convOut};
  parts->pool.name = fused.name + ".pool";
  parts->pool.opType = fused.attrs.getString(kPoolPrefix + "op", "MaxPool");
  parts->pool.inputs = {&parts->convOut};
  parts->pool.outputs = {&parts->y};
  for (const auto &[name, attribute] : fused.attrs.all()) {
    if (name.compare(0, kConvPrefix.size(), kConvPrefix) == 0)
      parts->conv.attrs.set(name.substr(kConvPrefix.size()), attribute);
    else if (name.compare(0, kPoolPrefix.size(), kPoolPrefix) == 0 && name != kPoolPrefix + "op")
      parts->pool.attrs.set(name.substr(kPoolPrefix.size()), attribute);
  }
  if (parts->x.typeKnown && parts->w.typeKnown) {
    inferNodeTypes(parts->conv);
    // int8: the conv output's parameters (not inferable from the operands).
    if (fused.attrs.has("conv_out_scales")) {
      parts->convOut.type.dtype = DType::Int8;
      parts->convOut.type.quant.scales = fused.attrs.getFloats("conv_out_scales");
      for (int64_t zp : fused.attrs.getInts("conv_out_zero_points"))
        parts->convOut.type.quant.zeroPoints.push_back(int32_t(zp));
    }
    inferNodeTypes(parts->pool);
    if (fused.attrs.has("conv_out_scales")) // MaxPool keeps its input's parameters.
      parts->y.type.quant = parts->convOut.type.quant;
  }
  return parts;
}

Attributes makeConvPoolAttributes(const Node &conv, const Node &pool, int64_t channelChunk) {
  Attributes attrs;
  for (const auto &[name, attribute] : conv.attrs.all())
    attrs.set(kConvPrefix + name, attribute);
  for (const auto &[name, attribute] : pool.attrs.all())
    attrs.set(kPoolPrefix + name, attribute);
  attrs.setString(kPoolPrefix + "op", pool.opType);
  attrs.setInt("channel_chunk", channelChunk);
  return attrs;
}

uint64_t nodeScratchBytes(const Node &node) {
  if (node.opType == kPatchStageOp) // The arena of its tile buffers.
    return buildPatchProgram(node)->arenaBytes;
  // A CMSIS-NN call's context buffer (set by quant/CmsisLayout.h).
  if (node.attrs.has("cmsis_scratch"))
    return uint64_t(std::max<int64_t>(0, node.attrs.getInt("cmsis_scratch", 0)));
  if (node.opType == kTfliteLstmOp) // its int16 cell state
    return tfliteLstmScratchBytes(node);
  if (node.opType == "Conv") // int8, group 1: bf_conv2d_im2col_s8's columns
    return int8ConvIm2colBytes(node);
  if (node.opType != kConvPoolOp || !node.input(0) || !node.input(0)->typeKnown)
    return 0;
  std::unique_ptr<ConvPoolParts> parts = splitConvPool(node);
  const Shape &conv = parts->convOut.type.shape; // [N, M, CH, CW]
  int64_t chunk = node.attrs.getInt("channel_chunk", conv[1]);
  chunk = std::max<int64_t>(1, std::min<int64_t>(chunk, conv[1]));
  const uint64_t row = uint64_t(chunk * conv[3]) * dtypeSize(parts->convOut.type.dtype);
  if (parts->convOut.type.dtype != DType::Int8)
    return row;
  // int8: an average's int32 sums of one pooled row (bf_conv_avgpool2d_s8),
  // then the conv's im2col columns (group 1), each from a multiple of 4.
  uint64_t bytes = row;
  if (parts->pool.opType == "AveragePool")
    bytes = alignUp(bytes, 4) + uint64_t(chunk * parts->y.type.shape[3]) * 4;
  if (const uint64_t im2col = int8ConvIm2colBytes(parts->conv))
    bytes = alignUp(bytes, 4) + im2col;
  return bytes;
}

namespace {

/// int8: the conv part's parameters and tables (bf_conv2d_s8's) with the
/// fused node's operands, its scratch, then the pool's (bf_maxpool2d_s8's or
/// bf_avgpool2d_s8's geometry and clamp): bf_conv_pool2d_s8 /
/// bf_conv_avgpool2d_s8.
std::vector<KernelCall> lowerConvPoolInt8(const Node &node) {
  std::unique_ptr<ConvPoolParts> parts = splitConvPool(node);
  const Int8ConvArgs a = int8ConvArgs(parts->conv);
  const Int8PoolArgs pa = int8PoolArgs(parts->pool);
  bf_pool_params pool = pool_int8::poolParams(parts->pool, pa); // its input: the conv's output
  pool.chunk = paramI32(node, node.attrs.getInt("channel_chunk", parts->convOut.type.shape[1]));
  KernelCall call;
  call.kernel = pool.is_max ? "bf_conv_pool2d_s8" : "bf_conv_avgpool2d_s8";
  // The conv part's bias is the fused node's third operand (bias32/bias8).
  call.args = {KernelArg::address(node.input(0)),
               KernelArg::address(node.input(1)),
               KernelArg::address(call_args::bias32(node, a)),
               KernelArg::address(node.output(0)),
               KernelArg::scratch(),
               kernelParams(node, conv_int8::convParams(a)),
               kernelParams(node, conv_int8::quantParams(a)),
               call_args::tableOrNull(a.outMult),
               call_args::tableOrNull(a.outShift),
               KernelArg::address(call_args::bias8(node, a)),
               call_args::tableOrNull(a.biasMult),
               call_args::tableOrNull(a.biasShift),
               kernelParams(node, pool)};
  return {call};
}

/// float: the conv's and the pool's parameters as their unfused kernels
/// take them (pool: the conv output in, channel_chunk at a time):
/// bf_conv_pool2d_f32, max and average.
std::vector<KernelCall> lowerConvPoolF32(const Node &node, const PlanView &plan) {
  KernelCall call;
  call.parts = splitConvPool(node);
  const ConvPoolParts &p = *call.parts;
  for (const Value *v : {&p.x, &p.w, &p.convOut, &p.y})
    if (v->type.dtype != DType::Float32)
      shape_helpers::unsupported(node, "only float32 ConvPool has a kernel (" + v->name + " is " +
                                           v->type.str() + ")");
  if (!plan.scratchBytes(node))
    fatalInternal(node.describe() + " runs with a workspace the memory plan did not reserve");
  const Shape &xs = p.x.type.shape, &cs = p.convOut.type.shape, &ys = p.y.type.shape;
  const std::vector<int64_t> kernel(p.w.type.shape.begin() + 2, p.w.type.shape.end());
  const bf_conv_params conv = window_params::convParams(p.conv, xs, cs, kernel, false);
  const bool isMax = p.pool.opType == "MaxPool";
  bf_pool_params pool = window_params::poolParams(p.pool, cs, ys, isMax);
  if (!isMax && (pool.dil_h != 1 || pool.dil_w != 1))
    shape_helpers::unsupported(node, "AveragePool with dilations");
  pool.chunk = paramI32(node, node.attrs.getInt("channel_chunk", cs[1]));
  call.kernel = "bf_conv_pool2d_f32";
  call.args = {KernelArg::address(node.input(0)),
               KernelArg::address(node.input(1)),
               KernelArg::address(node.input(2)),
               KernelArg::address(node.output()),
               KernelArg::scratch(),
               kernelParams(node, conv),
               kernelParams(node, pool),
               KernelArg::activation(p.conv)};
  return {call};
}

} // namespace

void registerFusedOps(OpRegistry &registry) {
  // Evaluated as the Conv and pool it replaced, int8 or float alike.
  OpDef &convPool = registry.add({kConvPoolOp, inferConvPool, convPoolMacs})
                        .runs(memopt_interp::convPoolKernel)
                        .int8Runs(memopt_interp::convPoolKernel);
  convPool.lower = lowerConvPoolF32;
  convPool.int8.lower = lowerConvPoolInt8;
  registerPatchStageOp(registry);
}

} // namespace bundlefit
