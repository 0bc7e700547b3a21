//===- ConvInt8.cpp - Conv in int8: arguments, quantizer rule, CMSIS-NN ---===//
//
// The int8 kernel's arguments (TFLM's Prepare() arithmetic,
// bundlefit/ops/Int8Params.h, computed once from the node's operand types),
// what the quantizer asks of a float Conv, the bundle's kernel call (and its
// in-place forms under --memory-opt), how an int8 Conv calls CMSIS-NN, and
// what a device sizing a build needs to know about it: everything
// registerConvInt8 puts in Conv's definition.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/Int8Params.h"

#include "bundlefit/ir/QuantSymmetry.h"
#include "bundlefit/ops/InPlaceOps.h"
#include "bundlefit/ops/KernelParams.h"
#include "bundlefit/ops/ShapeHelpers.h"
#include "cmsis/CmsisConstants.h"
#include "common/CallArgs.h"
#include "common/Int8Args.h"
#include "conv/Conv.h"

#include <optional>
#include <vector>

namespace bundlefit {

using namespace int8_args;

Int8ConvArgs int8ConvArgs(const Node &node) {
  Int8ConvArgs args;
  const Value &x = operand(node, node.input(0), "input");
  const Value &w = operand(node, node.input(1), "weight");
  const Value &y = operand(node, node.output(0), "output");
  const Affine in = activationParams(node, &x, "input");
  const Affine out = activationParams(node, &y, "output");
  const Shape &xs = x.type.shape, &ys = y.type.shape, &ws = w.type.shape;
  if (ws.size() != xs.size() || xs.size() < 3)
    unsupported(node, "weight rank differs from input rank");
  const Window2D g = window2D(node, xs, ys, Ints(ws.begin() + 2, ws.end()), false);
  const int64_t groups = node.attrs.getInt("group", 1);
  const int64_t C = xs[1], M = ys[1];
  if (groups <= 0 || C % groups != 0 || M % groups != 0 || ws[0] != M || ws[1] != C / groups)
    unsupported(node, "group " + std::to_string(groups) + " does not match the weight " +
                          shapeToString(ws));
  args.N = narrow(node, xs[0]), args.C = narrow(node, C), args.M = narrow(node, M);
  args.H = g.H, args.W = g.W, args.OH = g.OH, args.OW = g.OW, args.KH = g.KH, args.KW = g.KW;
  args.strideH = g.strideH, args.strideW = g.strideW, args.padT = g.padT, args.padL = g.padL;
  args.dilH = g.dilH, args.dilW = g.dilW, args.groups = narrow(node, groups);
  args.depthwise = groups > 1 && groups == C;
  args.chMult = args.depthwise ? narrow(node, M / C) : 1;
  args.inputOffset = -in.zeroPoint, args.outputOffset = out.zeroPoint;
  fusedActivationRange(node, out, args.actMin, args.actMax);
  fillRequantization(node, args, in, weightScales(node, &w, M), out, node.input(2), M);
  return args;
}

namespace conv_int8 {

bf_conv_params convParams(const Int8ConvArgs &a) {
  bf_conv_params p = unsetKernelParams<bf_conv_params>();
  p.n = a.N, p.c = a.C, p.h = a.H, p.w = a.W, p.m = a.M, p.oh = a.OH, p.ow = a.OW;
  p.kh = a.KH, p.kw = a.KW, p.stride_h = a.strideH, p.stride_w = a.strideW;
  p.pad_t = a.padT, p.pad_l = a.padL, p.dil_h = a.dilH, p.dil_w = a.dilW, p.groups = a.groups;
  return p;
}

bf_quant_params quantParams(const Int8ConvArgs &a) {
  bf_quant_params q = unsetKernelParams<bf_quant_params>();
  q.input_offset = a.inputOffset, q.output_offset = a.outputOffset;
  q.quant_flags = a.quantFlags(), q.act_min = a.actMin, q.act_max = a.actMax;
  return q;
}

} // namespace conv_int8

namespace {

/// Whether an activation table in the stores of the call for `p` and `q`
/// costs less than its own pass (KernelCall::lut). The pass costs about 4.2
/// Cortex-M7 instructions per element (qemu-insncount, a per-function
/// profile of MobileNetV3-small and EfficientNet-B0-tiny); in the stores of
/// the shared pointwise copies (bf_i8_pointwise_*_lut) and of the 3x3
/// depthwise rows (bf_dw3_plane_*_lut) it costs +1.7 to +2.7, a net gain of
/// 1.45 to 4 per output. The general depthwise path (5x5 kernels, dilation;
/// bf_i8_conv2d with groups = C) lost 2.7 to 10 per output: its inlined
/// stores keep the table's null test and the table pointer adds stack
/// reloads to a function that already spills. Other convs were not measured
/// to gain, so they keep the separate pass.
bool tablePaysAtStore(const bf_conv_params &p, const bf_quant_params &q, bool depthwise) {
  const bool depthwise3x3 =
      depthwise && p.kh == 3 && p.kw == 3 && p.dil_w == 1 && (p.stride_w == 1 || p.stride_w == 2) &&
      !(q.quant_flags & BF_I8_SINGLE_ROUNDING); // bf_i8_depthwise_conv2d's `fast`
  const bool pointwise = !depthwise && p.kh == 1 && p.kw == 1 && p.stride_h == 1 &&
                         p.stride_w == 1 && p.pad_t == 0 && p.pad_l == 0 && p.groups == 1 &&
                         p.oh == p.h && p.ow == p.w;
  return depthwise3x3 || pointwise;
}

/// bf_conv2d_s8's call (bf_depthwise_conv2d_s8, bf_conv2d_im2col_s8).
KernelCall lowerConv(const Node &node) {
  Int8ConvArgs a = int8ConvArgs(node);
  // Asymmetric weights: the exact plain kernel (the fusions and in-place
  // forms refuse these convs).
  const bool asymmetric = !isSymmetric(node.input(1)->type.quant);
  a.depthwise = a.depthwise && !asymmetric;
  // abi.h's structs: the geometry (a depthwise conv as the grouped conv it
  // is: m = C * chMult, groups = C) and the requantization scalars.
  // The weights, biases and tables are only read: noAlias (KernelCall.h).
  const bf_conv_params geometry = conv_int8::convParams(a);
  const bf_quant_params quant = conv_int8::quantParams(a);
  KernelCall call;
  call.args = {KernelArg::address(node.input(0)),
               KernelArg::address(node.input(1)).unaliased(),
               KernelArg::address(call_args::bias32(node, a)).unaliased(),
               KernelArg::address(node.output(0)),
               kernelParams(node, geometry),
               kernelParams(node, quant),
               call_args::tableOrNull(a.outMult).unaliased(),
               call_args::tableOrNull(a.outShift).unaliased(),
               KernelArg::address(call_args::bias8(node, a)).unaliased(),
               call_args::tableOrNull(a.biasMult).unaliased(),
               call_args::tableOrNull(a.biasShift).unaliased()};
  if (asymmetric) {
    call.kernel = "bf_conv2d_wzp_s8";
    call.args.push_back(call_args::tableOrNull(weightOffsets(*node.input(1), a.M)).unaliased());
    return call;
  }
  // The table of an activation fused into the stores (`lut`): none here;
  // code generation puts one there where the marks allow it
  // (src/codegen/LutFusion.h).
  call.lut.atStore = call.args.size();
  call.lut.paysAtStore = tablePaysAtStore(geometry, quant, a.depthwise);
  call.args.push_back(KernelArg::address(nullptr).unaliased());
  if (a.depthwise) {
    // Measured on Cortex-M7 (bench/mcu): MobileNetV1-0.25's five 128-channel
    // blocks share one depthwise function (with the pointwise one, .text
    // -4.8 KB, +1.9% instructions).
    call.kernel = "bf_depthwise_conv2d_s8";
    call.sharing = CallSharing::ShapeClass;
  } else if (int8ConvIm2colBytes(node)) {
    // Not shared by shape class: ResNet-8's two shared 3x3 convolutions came
    // out 1.1 KB larger than their two specialised copies (as bf_conv2d_s8's).
    call.kernel = "bf_conv2d_im2col_s8";
    call.args.push_back(KernelArg::scratch());
    const bf_conv_params &p = geometry;
    if (p.kh == 1 && p.kw == 1 && p.stride_h == 1 && p.stride_w == 1)
      call.pointwiseShape = {0, p.n, p.c, p.h, p.w, p.m, p.oh, p.ow};
  } else {
    call.kernel = "bf_conv2d_s8";
  }
  return call;
}

std::vector<KernelCall> lower(const Node &node) { return {lowerConv(node)}; }

std::string whyFloat(const Node &node) {
  const Value *w = node.input(1), *b = node.input(2);
  if (node.input(0)->type.rank() != 4)
    return "only 2-D convolutions run in int8";
  if (!w->isConstant() || w->type.dtype != DType::Float32)
    return "weight is not a float constant";
  if (b && (!b->isConstant() || b->type.dtype != DType::Float32))
    return "bias is not a float constant";
  return "";
}

int weightAxis(const Node &) { return 0; }

std::string cmsisChoose(const Node &node, CmsisExtension, std::string *whyNot) {
  const Shape &xs = node.input(0)->type.shape;
  const int64_t groups = node.attrs.getInt("group", 1);
  std::string why;
  if (xs.size() != 4)
    why = "only 2-D convolutions call CMSIS-NN";
  else if (!isSymmetric(node.input(1)->type.quant))
    why = "asymmetric weights (CMSIS-NN takes symmetric ones; bundlefit's exact kernel runs it)";
  else if (groups == 1)
    return "arm_convolve_wrapper_s8";
  else if (groups == xs[1]) // The same wrapper's depthwise form.
    return "arm_depthwise_conv_wrapper_s8";
  else
    why = "grouped convolution (group " + std::to_string(groups) + ")";
  if (whyNot)
    *whyNot = why;
  return "";
}

/// The geometry CMSIS-NN's getters read (cmsis_nn_dims, conv_params).
CmsisConvShape cmsisShape(const Node &node) {
  const Shape &xs = node.input(0)->type.shape, &ws = node.input(1)->type.shape;
  const Shape &ys = node.output(0)->type.shape;
  const shape_helpers::Window w = shape_helpers::resolveWindow(
      node, Ints(xs.begin() + 2, xs.end()), Ints(ws.begin() + 2, ws.end()), false);
  CmsisConvShape s;
  s.n = narrow(node, xs[0]), s.inH = narrow(node, xs[2]), s.inW = narrow(node, xs[3]);
  s.inC = narrow(node, xs[1]), s.kH = narrow(node, ws[2]), s.kW = narrow(node, ws[3]);
  s.outH = narrow(node, ys[2]), s.outW = narrow(node, ys[3]), s.outC = narrow(node, ys[1]);
  s.strideH = narrow(node, w.strides[0]), s.strideW = narrow(node, w.strides[1]);
  s.padH = narrow(node, w.padsBegin[0]), s.padW = narrow(node, w.padsBegin[1]);
  s.dilH = narrow(node, w.dilations[0]), s.dilW = narrow(node, w.dilations[1]);
  return s;
}

int64_t cmsisScratch(const Node &node, const std::string &function, CmsisExtension extension) {
  const CmsisConvShape s = cmsisShape(node);
  return function == "arm_convolve_wrapper_s8" ? cmsisConvBufferSize(s, extension)
                                               : cmsisDepthwiseBufferSize(s, extension);
}

void cmsisPrepare(Graph &graph, Node &node, const std::string &function, CmsisExtension) {
  using namespace cmsis_constants;
  const Int8ConvArgs a = int8ConvArgs(node);
  widenInt8Bias(graph, node, a, a.M);
  Value *w = ownConstant(graph, node, 1);
  const bool dense = function == "arm_convolve_wrapper_s8";
  dense ? repackConvWeights(*w) : repackDepthwiseWeights(*w);
  node.attrs.setString("cmsis_weight_layout", dense ? "OHWI" : "1HWC");
}

/// cmsis_nn_per_channel_quant_params: one multiplier/shift per channel, even
/// for per-tensor weights (CMSIS-NN's convolutions always read M entries).
KernelArg perChannelQuant(const Int8ConvArgs &a, int32_t channels) {
  std::vector<int32_t> mult = a.outMult, shift = a.outShift;
  if (!a.perChannel)
    mult.assign(size_t(channels), a.outMult.at(0)),
        shift.assign(size_t(channels), a.outShift.at(0));
  return KernelArg::structOf({call_args::table(mult), call_args::table(shift)});
}

/// arm_convolve_wrapper_s8 / arm_depthwise_conv_wrapper_s8.
KernelCall cmsisCall(const Node &node, const std::string &function) {
  using namespace call_args;
  const bool depthwise = function == "arm_depthwise_conv_wrapper_s8";
  const Int8ConvArgs a = int8ConvArgs(node);
  std::vector<int32_t> params = {a.inputOffset, a.outputOffset};
  if (depthwise)
    params.push_back(a.chMult);
  params.insert(params.end(),
                {a.strideW, a.strideH, a.padL, a.padT, a.dilW, a.dilH, a.actMin, a.actMax});
  return externalCall(function,
                      {context(node), table(params), perChannelQuant(a, a.M),
                       dims(a.N, a.H, a.W, a.C), address(node.input(0)),
                       depthwise ? dims(1, a.KH, a.KW, a.M) : dims(a.M, a.KH, a.KW, a.C),
                       address(node.input(1)), dims(1, 1, 1, a.M), address(cmsisBias(node, a)),
                       dims(a.N, a.OH, a.OW, a.M), address(node.output(0))});
}

CostClass costClass(const Node &node) {
  return node.attrs.getInt("group", 1) > 1 ? CostClass::Depthwise : CostClass::Conv;
}

uint64_t nnlibScratch(const Node &node) {
  // An approximation of NNLib's xa_nn_conv2d_*_getsize (not the exact
  // formulas): a circular input buffer of kernel-height rows (channels
  // padded to 8) plus, for a standard convolution, one output row of 32-bit
  // accumulators.
  const Value *x = node.input(0), *w = node.input(1), *y = node.output(0);
  if (!x || !w || !y || x->type.rank() != 4 || w->type.rank() != 4 || y->type.rank() != 4)
    return 0;
  const uint64_t cin = uint64_t(x->type.shape[1]), width = uint64_t(x->type.shape[3]);
  const std::vector<int64_t> kernel =
      node.attrs.getInts("kernel_shape", {w->type.shape[2], w->type.shape[3]});
  uint64_t padSum = 0;
  for (int64_t p : node.attrs.getInts("pads"))
    padSum += uint64_t(p);
  const uint64_t rows = (cin + 7) / 8 * 8 * uint64_t(kernel.at(0)) * (width + padSum / 2);
  const bool grouped = node.attrs.getInt("group", 1) > 1;
  return rows + (grouped ? 0 : uint64_t(y->type.shape[3] * y->type.shape[1]) * 4);
}

/// The plan put the conv in place (PlanView::outputOnInput): lower's calls
/// become those of the in-place kernels, the same structs and tables plus
/// the workspace: bf_depthwise_inplace_s8 for a depthwise conv,
/// bf_pointwise_inplace_s8 for a 1x1 conv (InPlaceOps.h sizes both). Other
/// calls are kept.
void lowerInPlace(const Node &node, const PlanView &plan, std::vector<KernelCall> &calls) {
  const std::optional<uint64_t> scratch = plan.scratchBytes(node);
  for (KernelCall &call : calls) {
    if (call.kernel == "bf_conv2d_s8" || call.kernel == "bf_conv2d_im2col_s8") {
      // The same structs and tables (bundlefit_kernels_int8.h); the in-place
      // kernel's scratch comes before the geometry, its row block after it,
      // and the im2col columns (the last argument) become part of its scratch.
      const int64_t rows = pointwiseInPlaceRows(node);
      if (!rows || !scratch || *scratch < pointwiseInPlaceScratch(node))
        fatalInternal(node.describe() + " is in place without the workspace of a 1x1 conv");
      if (call.kernel == "bf_conv2d_im2col_s8")
        call.args.pop_back();
      const size_t conv = kernelParamsArg<bf_conv_params>(call);
      call.kernel = "bf_pointwise_inplace_s8";
      call.sharing = CallSharing::ShapeClass;
      call.pointwiseShape = {1,
                             kernelParamsField<bf_conv_params>(call, "c"),
                             kernelParamsField<bf_conv_params>(call, "h"),
                             kernelParamsField<bf_conv_params>(call, "w"),
                             kernelParamsField<bf_conv_params>(call, "m"),
                             rows};
      call.insertArg(conv + 1, KernelArg::i32(rows));
      call.insertArg(conv, KernelArg::scratch().unaliased());
      continue;
    }
    if (call.kernel != "bf_depthwise_conv2d_s8")
      continue;
    if (!scratch)
      fatalInternal(node.describe() + " runs with a workspace the memory plan did not reserve");
    if (kernelParamsField<bf_conv_params>(call, "m") !=
        kernelParamsField<bf_conv_params>(call, "c"))
      fatalInternal(node.describe() + " is in place with a channel multiplier");
    call.kernel = "bf_depthwise_inplace_s8"; // shared by shape class, as the depthwise call
    call.insertArg(kernelParamsArg<bf_conv_params>(call), KernelArg::scratch().unaliased());
  }
}

} // namespace

void registerConvInt8(OpRegistry &registry) {
  OpDef &conv = registry.at("Conv").quantized(Int8Rule::OwnParams);
  conv.int8.whyFloat = whyFloat;
  conv.int8.weightAxis = weightAxis;
  conv.int8.singleRounding = true;
  conv.int8.lower = lower;
  conv.int8.lowerInPlace = lowerInPlace;
  conv.cmsis.function = "arm_convolve_wrapper_s8";
  conv.cmsis.choose = cmsisChoose;
  conv.cmsis.scratch = cmsisScratch;
  conv.cmsis.prepare = cmsisPrepare;
  conv.cmsis.call = cmsisCall;
  conv.cmsis.prototypes = {
      call_args::s8LayerPrototype("arm_convolve_wrapper_s8", "cmsis_nn_conv_params",
                                  "cmsis_nn_per_channel_quant_params"),
      call_args::s8LayerPrototype("arm_depthwise_conv_wrapper_s8", "cmsis_nn_dw_conv_params",
                                  "cmsis_nn_per_channel_quant_params")};
  conv.device.costClass = costClass;
  conv.device.nnlibScratch = nnlibScratch;
}

} // namespace bundlefit
