//===- PoolInt8.cpp - Pooling in int8: arguments, quantizer rule, CMSIS-NN ===//
//
// MaxPool, AveragePool and GlobalAveragePool: the int8 kernels' arguments
// (bundlefit/ops/Int8Params.h), what the quantizer asks of a float pool,
// how an int8 pool calls CMSIS-NN, and the device sizing of NNLib's pools.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/Int8Params.h"

#include "bundlefit/ops/ShapeHelpers.h"
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
  if (!(in == out))
    unsupported(node, "int8 pooling needs equal input and output quantization parameters");
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
  if (node.opType == "AveragePool") {
    if (g.dilH != 1 || g.dilW != 1)
      unsupported(node, "dilated AveragePool has no int8 kernel");
    args.countIncludePad = node.attrs.getInt("count_include_pad", 0) != 0;
  }
  return args;
}

namespace pool_int8 {

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

std::string cmsisChoose(const Node &node, std::string *whyNot) {
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

} // namespace pool_int8

} // namespace bundlefit
