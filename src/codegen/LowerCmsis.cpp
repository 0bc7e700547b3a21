//===- LowerCmsis.cpp - CMSIS-NN s8 calls of prepared int8 nodes -----------===//
//
// Nodes quant/CmsisLayout.h marked call CMSIS-NN's s8 wrapper API
// (arm_nnfunctions.h), which the user links from their SDK. Argument values
// come from quant/Int8Params.h (the portable kernels' own numbers, so the
// results agree bit for bit); the structs are CMSIS-NN's (arm_nn_types.h):
//
//   cmsis_nn_context          {void *buf; int32_t size;}
//   cmsis_nn_tile             {int32_t w, h;}
//   cmsis_nn_activation       {int32_t min, max;}
//   cmsis_nn_dims             {int32_t n, h, w, c;}
//   cmsis_nn_conv_params      {input_offset, output_offset, stride, padding, dilation, activation}
//   cmsis_nn_dw_conv_params   {input_offset, output_offset, ch_mult, stride, padding, dilation,
//   activation} cmsis_nn_pool_params      {stride, padding, activation} cmsis_nn_fc_params
//   {input_offset, filter_offset, output_offset, activation} cmsis_nn_per_channel_quant_params
//   {int32_t *multiplier, *shift;} cmsis_nn_per_tensor_quant_params  {int32_t multiplier, shift;}
//
// Structs made of int32 fields only are read-only tables (private constants);
// the context (a pointer into the activation arena) and the per-channel
// quant params (two pointers) are built on the stack.
//
//===----------------------------------------------------------------------===//
#include "LowerInt8.h"

#include "bundlefit/ops/Cmsis.h"
#include "bundlefit/ops/Int8Params.h"
#include "bundlefit/support/Error.h"

#include <map>
#include <string>

namespace bundlefit {

namespace {

KernelArg address(const Value *value) { return KernelArg::address(value); }
KernelArg i32(int64_t v) { return KernelArg::i32(v); }
KernelArg table(std::vector<int32_t> values) { return KernelArg::i32Table(std::move(values)); }
KernelArg dims(int32_t n, int32_t h, int32_t w, int32_t c) { return table({n, h, w, c}); }

/// cmsis_nn_context {buf, size}: the node's workspace in the arena.
KernelArg context(const Node &node) {
  return KernelArg::structOf(
      {KernelArg::scratch(), i32(node.attrs.getInt(kCmsisScratchAttribute, 0))});
}

/// cmsis_nn_per_channel_quant_params: one multiplier/shift per channel, even
/// for per-tensor weights (CMSIS-NN's convolutions always read M entries).
KernelArg perChannelQuant(const Int8ConvArgs &a, int32_t channels) {
  std::vector<int32_t> mult = a.outMult, shift = a.outShift;
  if (!a.perChannel)
    mult.assign(size_t(channels), a.outMult.at(0)),
        shift.assign(size_t(channels), a.outShift.at(0));
  return KernelArg::structOf({table(mult), table(shift)});
}

KernelCall call(const std::string &function, std::vector<KernelArg> args) {
  KernelCall c;
  c.kernel = function, c.args = std::move(args), c.external = true;
  return c;
}

const Value *int32Bias(const Node &node, const Int8ConvArgs &a) {
  if (a.int8Bias)
    fatalInternal(node.describe() + ": int8 bias left for a CMSIS-NN call");
  return node.input(2);
}

KernelCall convCall(const Node &node, bool depthwise) {
  const Int8ConvArgs a = int8ConvArgs(node);
  std::vector<int32_t> params = {a.inputOffset, a.outputOffset};
  if (depthwise)
    params.push_back(a.chMult);
  params.insert(params.end(),
                {a.strideW, a.strideH, a.padL, a.padT, a.dilW, a.dilH, a.actMin, a.actMax});
  return call(depthwise ? "arm_depthwise_conv_wrapper_s8" : "arm_convolve_wrapper_s8",
              {context(node), table(params), perChannelQuant(a, a.M), dims(a.N, a.H, a.W, a.C),
               address(node.input(0)),
               depthwise ? dims(1, a.KH, a.KW, a.M) : dims(a.M, a.KH, a.KW, a.C),
               address(node.input(1)), dims(1, 1, 1, a.M), address(int32Bias(node, a)),
               dims(a.N, a.OH, a.OW, a.M), address(node.output(0))});
}

/// Helium: the context buffer is the kernel sums constant (CmsisLayout.h).
KernelArg kernelSumsContext(const Node &node, const Int8ConvArgs &a) {
  KernelArg ctx;
  ctx.kind = KernelArg::Struct;
  ctx.fields = {address(node.input(kCmsisKernelSumsInput)), i32(int64_t(a.outDepth) * 4)};
  return ctx;
}

KernelCall fullyConnectedCall(const Node &node) {
  const Int8ConvArgs a = int8GemmArgs(node);
  if (!a.transB || a.perChannel)
    fatalInternal(node.describe() + ": not prepared for arm_fully_connected_s8");
  const bool kernelSums = node.inputs.size() > size_t(kCmsisKernelSumsInput) &&
                          node.inputs[kCmsisKernelSumsInput] != nullptr;
  return call("arm_fully_connected_s8",
              {kernelSums ? kernelSumsContext(node, a) : context(node),
               table({a.inputOffset, a.filterOffset, a.outputOffset, a.actMin, a.actMax}),
               table({a.outMult.at(0), a.outShift.at(0)}), dims(a.batches, 1, 1, a.accumDepth),
               address(node.input(0)), dims(a.accumDepth, 1, 1, a.outDepth), address(node.input(1)),
               dims(1, 1, 1, a.outDepth), address(int32Bias(node, a)),
               dims(a.batches, 1, 1, a.outDepth), address(node.output(0))});
}

KernelCall poolCall(const Node &node, const std::string &function) {
  const Int8PoolArgs a = int8PoolArgs(node);
  const Shape &xs = node.input(0)->type.shape, &ys = node.output(0)->type.shape;
  const int32_t C = int32_t(xs[1]), H = int32_t(xs[2]), W = int32_t(xs[3]);
  const int32_t OH = int32_t(ys[2]), OW = int32_t(ys[3]);
  // GlobalAveragePool: one H x W window.
  const bool global = node.opType == "GlobalAveragePool";
  const int32_t KH = global ? H : a.KH, KW = global ? W : a.KW;
  const int32_t strideH = global ? H : a.strideH, strideW = global ? W : a.strideW;
  const int32_t padT = global ? 0 : a.padT, padL = global ? 0 : a.padL;
  return call(function, {context(node), table({strideW, strideH, padL, padT, a.actMin, a.actMax}),
                         dims(1, H, W, C), address(node.input(0)), dims(1, KH, KW, 1),
                         dims(1, OH, OW, C), address(node.output(0))});
}

KernelCall softmaxCall(const Node &node, const std::string &function) {
  const Int8SoftmaxArgs a = int8SoftmaxArgs(node);
  KernelCall c = call(function, {address(node.input(0)), i32(a.outer), i32(a.axis), i32(a.mult),
                                 i32(a.shift), i32(a.diffMin), address(node.output(0))});
  c.returnsVoid = true;
  return c;
}

} // namespace

KernelCall describeCmsisCall(const Node &node) {
  // One emitter per CMSIS-NN function the op schema names (cmsisFunction),
  // looked up by the function CmsisLayout chose for this node.
  using Emitter = KernelCall (*)(const Node &, const std::string &);
  static const std::map<std::string, Emitter> emitters = {
      {"arm_convolve_wrapper_s8",
       [](const Node &n, const std::string &) { return convCall(n, false); }},
      {"arm_depthwise_conv_wrapper_s8",
       [](const Node &n, const std::string &) { return convCall(n, true); }},
      {"arm_fully_connected_s8",
       [](const Node &n, const std::string &) { return fullyConnectedCall(n); }},
      {"arm_max_pool_s8", poolCall},
      {"arm_avgpool_s8", poolCall},
      {"arm_softmax_s8", softmaxCall},
  };
  const std::string function = node.attrs.getString(kCmsisAttribute, "");
  auto it = emitters.find(function);
  if (it == emitters.end())
    throw Error(ExitCode::Unsupported,
                node.describe() + ": no CMSIS-NN call for '" + function + "'");
  return it->second(node, function);
}

KernelCall describeLayoutCopy(const Node &node) {
  const Shape &s = node.input(0)->type.shape;
  const int32_t N = int32_t(s[0]), C = int32_t(s[1]), H = int32_t(s[2]), W = int32_t(s[3]);
  // Walk the logical [N, C, H, W] index space; strides of each layout.
  const std::vector<int32_t> nchw = {0, 0, C * H * W, H * W, W, 1};
  const std::vector<int32_t> nhwc = {0, 0, H * W * C, 1, W * C, C};
  const bool toNhwc = node.attrs.getString("to", "") == "NHWC";
  KernelCall c;
  c.kernel = "bf_copy_strided_u8";
  c.args = {address(node.input(0)), address(node.output(0)), table({1, 1, N, C, H, W}),
            table(toNhwc ? nchw : nhwc), table(toNhwc ? nhwc : nchw)};
  return c;
}

} // namespace bundlefit
