//===- PoolInt8.cpp - Pooling in int8: arguments, quantizer rule, CMSIS-NN ===//
//
// MaxPool, AveragePool and GlobalAveragePool: the int8 kernels' arguments
// (bundlefit/ops/Int8Params.h), what the quantizer asks of a float pool, the
// bundle's kernel call, how an int8 pool calls CMSIS-NN, and the device
// sizing of NNLib's pools.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/Int8Params.h"

#include "bundlefit/ops/ShapeHelpers.h"
#include "common/CallArgs.h"
#include "common/Int8Args.h"
#include "pool/Pool.h"

namespace bundlefit {

using namespace int8_args;

Int8PoolArgs int8PoolArgs(const Node &node) {
  Int8PoolArgs args;
  const Value &x = operand(node, node.input(0), "input");
  const Value &y = operand(node, node.output(0), "output");
  const Affine in = activationParams(node, &x, "input");
  const Affine out = activationParams(node, &y, "output");
  if (!(in == out)) {
    if (node.opType != "AveragePool")
      unsupported(node, "int8 pooling needs equal input and output quantization parameters");
    args.requant = true;
    args.inScale = in.scale, args.inZeroPoint = in.zeroPoint;
    args.outScale = out.scale, args.outZeroPoint = out.zeroPoint;
  }
  const Shape &xs = x.type.shape, &ys = y.type.shape;
  if (xs.size() < 3)
    unsupported(node, "input rank below 3");
  args.NC = narrow(node, xs[0] * xs[1]);
  args.padValue = in.zeroPoint;
  if (node.opType == "GlobalAveragePool") {
    int64_t hw = 1;
    for (size_t i = 2; i < xs.size(); ++i)
      hw *= xs[i];
    args.H = 1, args.W = narrow(node, hw), args.KH = 1, args.KW = args.W;
    return args;
  }
  if (node.outputs.size() > 1 && node.output(1) && !node.output(1)->name.empty())
    unsupported(node, "MaxPool's Indices output has no int8 kernel");
  const Window2D g = window2D(node, xs, ys, node.attrs.getInts("kernel_shape"),
                              node.attrs.getInt("ceil_mode", 0) != 0);
  args.H = g.H, args.W = g.W, args.OH = g.OH, args.OW = g.OW, args.KH = g.KH, args.KW = g.KW;
  args.strideH = g.strideH, args.strideW = g.strideW, args.padT = g.padT, args.padL = g.padL;
  args.padB = g.padB, args.padR = g.padR, args.dilH = g.dilH, args.dilW = g.dilW;
  if (args.requant && xs.size() != 4)
    unsupported(node, "only a 2-D AveragePool may change the quantization parameters");
  if (node.opType == "AveragePool") {
    if (g.dilH != 1 || g.dilW != 1)
      unsupported(node, "dilated AveragePool has no int8 kernel");
    args.countIncludePad = node.attrs.getInt("count_include_pad", 0) != 0;
  }
  return args;
}

namespace pool_int8 {

bf_pool_params poolParams(const Node &node, const Int8PoolArgs &a) {
  const Shape &xs = operand(node, node.input(0), "input").type.shape; // rank >= 3 (int8PoolArgs)
  bf_pool_params pool = unsetKernelParams<bf_pool_params>();
  pool.n = paramI32(node, xs[0]), pool.c = paramI32(node, xs[1]);
  pool.h = a.H, pool.w = a.W, pool.oh = a.OH, pool.ow = a.OW, pool.kh = a.KH, pool.kw = a.KW;
  pool.stride_h = a.strideH, pool.stride_w = a.strideW;
  pool.pad_t = a.padT, pool.pad_l = a.padL, pool.pad_b = a.padB, pool.pad_r = a.padR;
  pool.dil_h = a.dilH, pool.dil_w = a.dilW, pool.is_max = node.opType == "MaxPool";
  pool.count_include_pad = a.countIncludePad, pool.pad_value = a.padValue;
  pool.act_min = a.actMin, pool.act_max = a.actMax, pool.chunk = 0;
  return pool;
}

KernelCall lowerPool(const Node &node) {
  const Int8PoolArgs a = int8PoolArgs(node);
  call_args::Args args;
  args.addr(node.input(0)).addr(node.output(0));
  const char *kernel = a.requant                            ? "bf_avgpool2d_requant_s8"
                       : node.opType == "MaxPool"           ? "bf_maxpool2d_s8"
                       : node.opType == "GlobalAveragePool" ? "bf_global_avgpool_s8"
                                                            : "bf_avgpool2d_s8";
  KernelCall call = args.call(kernel);
  call.args.push_back(kernelParams(node, poolParams(node, a)));
  if (a.requant) { // the input's zero point is the struct's pad_value
    call.args.push_back(KernelArg::f32(a.inScale));
    call.args.push_back(KernelArg::f32(a.outScale));
    call.args.push_back(KernelArg::i32(a.outZeroPoint));
  }
  return call;
}

} // namespace pool_int8

namespace {

std::vector<KernelCall> lower(const Node &node) { return {pool_int8::lowerPool(node)}; }

std::string whyFloat(const Node &node) {
  if (node.input(0)->type.rank() != 4)
    return "only 2-D pooling runs in int8";
  for (int64_t d : node.attrs.getInts("dilations", {}))
    if (d != 1)
      return "dilated pooling has no int8 kernel";
  if (node.opType == "AveragePool" && node.attrs.getInt("count_include_pad", 0) != 0)
    for (int64_t p : node.attrs.getInts("pads", {}))
      if (p != 0)
        return "count_include_pad=1 with padding has no int8 kernel";
  return "";
}

std::string cmsisChoose(const Node &node, CmsisExtension, std::string *whyNot) {
  auto portable = [&](const std::string &reason) {
    if (whyNot)
      *whyNot = reason;
    return std::string();
  };
  const Shape &xs = node.input(0)->type.shape;
  if (xs.size() != 4 || xs[0] != 1)
    return portable("only single-batch 2-D pooling calls CMSIS-NN");
  if (node.opType == "GlobalAveragePool")
    return "arm_avgpool_s8";
  if (!(node.input(0)->type.quant.scales == node.output(0)->type.quant.scales &&
        node.input(0)->type.quant.zeroPoints == node.output(0)->type.quant.zeroPoints))
    return portable("output quantization parameters differ from the input's");
  const shape_helpers::Window w = shape_helpers::resolveWindow(
      node, Ints(xs.begin() + 2, xs.end()), node.attrs.getInts("kernel_shape"),
      node.attrs.getInt("ceil_mode", 0) != 0);
  if (node.opType == "MaxPool")
    return w.dilations[0] == 1 && w.dilations[1] == 1 ? "arm_max_pool_s8"
                                                      : portable("dilated max pooling");
  const bool padded = w.padsBegin[0] || w.padsBegin[1] || w.padsEnd[0] || w.padsEnd[1];
  if (node.attrs.getInt("count_include_pad", 0) != 0 && padded)
    return portable("count_include_pad with padding (arm_avgpool_s8 divides by valid elements)");
  return "arm_avgpool_s8";
}

int64_t cmsisAvgPoolScratch(const Node &node, const std::string &, CmsisExtension extension) {
  return cmsisAvgPoolBufferSize(narrow(node, node.output(0)->type.shape.at(3)),
                                narrow(node, node.input(0)->type.shape.at(1)), extension);
}

uint64_t nnlibScratch(const Node &node) {
  // An approximation of NNLib's xa_nn_*pool_getsize: one output row of
  // 32-bit accumulators.
  const Value *x = node.input(0), *y = node.output(0);
  if (!x || !y || x->type.rank() != 4 || y->type.rank() != 4)
    return 0;
  return uint64_t(y->type.shape[3] * x->type.shape[1]) * 4;
}

/// arm_max_pool_s8 / arm_avgpool_s8 (a global average: one H x W window).
KernelCall cmsisCall(const Node &node, const std::string &function) {
  using namespace call_args;
  const Int8PoolArgs a = int8PoolArgs(node);
  const Shape &xs = node.input(0)->type.shape, &ys = node.output(0)->type.shape;
  const int32_t C = int32_t(xs[1]), H = int32_t(xs[2]), W = int32_t(xs[3]);
  const int32_t OH = int32_t(ys[2]), OW = int32_t(ys[3]);
  const bool global = node.opType == "GlobalAveragePool";
  const int32_t KH = global ? H : a.KH, KW = global ? W : a.KW;
  const int32_t strideH = global ? H : a.strideH, strideW = global ? W : a.strideW;
  const int32_t padT = global ? 0 : a.padT, padL = global ? 0 : a.padL;
  return externalCall(function,
                      {context(node), table({strideW, strideH, padL, padT, a.actMin, a.actMax}),
                       dims(1, H, W, C), address(node.input(0)), dims(1, KH, KW, 1),
                       dims(1, OH, OW, C), address(node.output(0))});
}

} // namespace

void registerPoolInt8(OpRegistry &registry) {
  // The input's parameters; CMSIS-NN's pooling functions.
  for (const char *op : {"MaxPool", "AveragePool", "GlobalAveragePool"}) {
    OpDef &def = registry.at(op).quantized(Int8Rule::SameParams);
    def.int8.whyFloat = whyFloat;
    def.int8.lower = lower;
    def.cmsis.function = std::string(op) == "MaxPool" ? "arm_max_pool_s8" : "arm_avgpool_s8";
    def.cmsis.choose = cmsisChoose;
    def.cmsis.call = cmsisCall;
    def.cmsis.prototypes = {call_args::poolPrototype(def.cmsis.function, "int8_t")};
  }
  registry.at("AveragePool").int8.requantizes = true;
  registry.at("AveragePool").cmsis.scratch = cmsisAvgPoolScratch;
  registry.at("GlobalAveragePool").cmsis.scratch = cmsisAvgPoolScratch;
  registry.at("MaxPool").device.nnlibScratch = nnlibScratch;
  registry.at("AveragePool").device.nnlibScratch = nnlibScratch;
}

} // namespace bundlefit
