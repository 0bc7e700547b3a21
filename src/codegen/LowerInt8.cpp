//===- LowerInt8.cpp - Kernel calls of int8-quantized nodes ----------------===//
//
// Argument order is bundlefit_kernels_int8.h's; the values come from
// ops/Int8Params.h.
//
//===----------------------------------------------------------------------===//
#include "LowerInt8.h"

#include "bundlefit/ops/Cmsis.h"
#include "bundlefit/ops/FusedOps.h"
#include "bundlefit/ops/InPlaceOps.h"
#include "bundlefit/ops/Int8Params.h"
#include "bundlefit/support/Error.h"

#include <array>

#include <unordered_map>

namespace bundlefit {

namespace {

/// Builds one call's argument list.
class Args {
public:
  Args &addr(const Value *value, int64_t byteOffset = 0) {
    args_.push_back(KernelArg::address(value, byteOffset));
    return *this;
  }
  Args &i32(int64_t v) {
    args_.push_back(KernelArg::i32(v));
    return *this;
  }
  Args &f32(float v) {
    args_.push_back(KernelArg::f32(v));
    return *this;
  }
  Args &scratch() {
    args_.push_back(KernelArg::scratch());
    return *this;
  }
  /// A table, or a null pointer when empty.
  Args &table(const std::vector<int32_t> &v) {
    if (v.empty())
      return addr(nullptr);
    args_.push_back(KernelArg::i32Table(v));
    return *this;
  }
  Args &table(const std::array<int32_t, 6> &v) {
    return table(std::vector<int32_t>(v.begin(), v.end()));
  }
  KernelCall call(const std::string &kernel) {
    KernelCall c;
    c.kernel = kernel, c.args = std::move(args_);
    return c;
  }

private:
  std::vector<KernelArg> args_;
};

/// Bias arguments: the int32 pointer, then (at the end) the int8 one.
const Value *bias32(const Node &node, const Int8ConvArgs &a) {
  return a.int8Bias ? nullptr : node.input(2);
}
const Value *bias8(const Node &node, const Int8ConvArgs &a) {
  return a.int8Bias ? node.input(2) : nullptr;
}

/// `grouped`: a depthwise conv as the grouped conv it is (bf_conv2d_s8 with
/// groups = C: the same sums, bit for bit), for the fused ConvPool kernels
/// (which place the im2col columns in their own scratch). Otherwise a conv
/// with group 1 gets bf_conv2d_im2col_s8 and its planned columns.
KernelCall lowerConv(const Node &node, bool grouped = false) {
  Int8ConvArgs a = int8ConvArgs(node);
  a.depthwise = a.depthwise && !grouped;
  Args args;
  args.addr(node.input(0)).addr(node.input(1)).addr(bias32(node, a)).addr(node.output(0));
  args.i32(a.N).i32(a.C).i32(a.H).i32(a.W).i32(a.depthwise ? a.chMult : a.M);
  args.i32(a.OH).i32(a.OW).i32(a.KH).i32(a.KW).i32(a.strideH).i32(a.strideW);
  args.i32(a.padT).i32(a.padL).i32(a.dilH).i32(a.dilW);
  if (!a.depthwise)
    args.i32(a.groups);
  args.i32(a.inputOffset).i32(a.outputOffset).table(a.outMult).table(a.outShift);
  args.i32(a.quantFlags()).i32(a.actMin).i32(a.actMax);
  args.addr(bias8(node, a)).table(a.biasMult).table(a.biasShift);
  if (a.depthwise)
    return args.call("bf_depthwise_conv2d_s8");
  if (!grouped && int8ConvIm2colBytes(node))
    return args.scratch().call("bf_conv2d_im2col_s8");
  return args.call("bf_conv2d_s8");
}

KernelCall lowerGemm(const Node &node) {
  const Int8ConvArgs a = int8GemmArgs(node);
  Args args;
  args.addr(node.input(0)).addr(node.input(1)).addr(bias32(node, a)).addr(node.output(0));
  args.i32(a.batches).i32(a.accumDepth).i32(a.outDepth).i32(a.transB);
  args.i32(a.inputOffset).i32(a.filterOffset).i32(a.outputOffset);
  args.table(a.outMult).table(a.outShift).i32(a.quantFlags()).i32(a.actMin).i32(a.actMax);
  args.addr(bias8(node, a)).table(a.biasMult).table(a.biasShift);
  return args.call("bf_fully_connected_s8");
}

KernelCall lowerPool(const Node &node) {
  const Int8PoolArgs a = int8PoolArgs(node);
  Args args;
  args.addr(node.input(0)).addr(node.output(0)).i32(a.NC);
  if (node.opType == "GlobalAveragePool")
    return args.i32(int64_t(a.H) * a.W).i32(a.actMin).i32(a.actMax).call("bf_global_avgpool_s8");
  args.i32(a.H).i32(a.W).i32(a.OH).i32(a.OW).i32(a.KH).i32(a.KW).i32(a.strideH).i32(a.strideW);
  args.i32(a.padT).i32(a.padL);
  if (node.opType == "MaxPool")
    return args.i32(a.dilH).i32(a.dilW).i32(a.actMin).i32(a.actMax).call("bf_maxpool2d_s8");
  args.i32(a.padB).i32(a.padR).i32(a.countIncludePad).i32(a.padValue);
  return args.i32(a.actMin).i32(a.actMax).call("bf_avgpool2d_s8");
}

KernelCall lowerBinary(const Node &node) {
  const Int8BinaryArgs a = int8BinaryArgs(node);
  Args args;
  args.addr(node.input(0)).addr(node.input(1)).addr(node.output(0));
  args.table(a.dims).table(a.aStrides).table(a.bStrides);
  if (node.opType == "Add") {
    args.i32(a.aOffset).i32(a.a.mult).i32(a.a.shift).i32(a.bOffset).i32(a.b.mult);
    args.i32(a.b.shift).i32(a.leftShift).i32(a.outOffset).i32(a.out.mult).i32(a.out.shift);
    return args.i32(a.actMin).i32(a.actMax).call("bf_add_s8");
  }
  args.i32(a.aOffset).i32(a.bOffset).i32(a.outOffset).i32(a.out.mult).i32(a.out.shift);
  return args.i32(a.actMin).i32(a.actMax).call("bf_mul_s8");
}

/// ConvPool (int8): bf_conv2d_s8's arguments of the conv part with the fused
/// node's operands, its scratch, then the pool's (bf_maxpool2d_s8's or
/// bf_avgpool2d_s8's geometry: bf_conv_pool2d_s8 / bf_conv_avgpool2d_s8).
KernelCall lowerConvPool(const Node &node) {
  std::unique_ptr<ConvPoolParts> parts = splitConvPool(node);
  const bool isMax = parts->pool.opType == "MaxPool";
  KernelCall conv = lowerConv(parts->conv, true), pool = lowerPool(parts->pool);
  for (KernelArg &a : conv.args)
    if (a.kind == KernelArg::Address && a.value)
      a.value = a.value == &parts->x   ? node.input(0)
                : a.value == &parts->w ? node.input(1)
                : a.value == &parts->b ? node.input(2)
                                       : a.value;
  KernelCall call;
  call.kernel = isMax ? "bf_conv_pool2d_s8" : "bf_conv_avgpool2d_s8";
  call.args.assign(conv.args.begin(), conv.args.begin() + 3); // in, w, bias
  call.args.push_back(KernelArg::address(node.output(0)));
  call.args.push_back(KernelArg::scratch());
  call.args.insert(call.args.end(), conv.args.begin() + 4, conv.args.end()); // N .. biasShift
  call.args.push_back(
      KernelArg::i32(node.attrs.getInt("channel_chunk", parts->convOut.type.shape[1])));
  call.args.insert(call.args.end(), pool.args.begin() + 5, pool.args.end()); // PH .. max
  return call;
}

KernelCall lowerRescale(const Node &node) {
  const Int8RescaleArgs a = int8RescaleArgs(node);
  Args args;
  args.addr(node.input(0)).addr(node.output(0)).i32(a.n);
  if (a.clampOnly)
    return args.i32(a.actMin).i32(a.actMax).call("bf_clamp_s8");
  args.i32(a.inOffset).i32(a.scale.mult).i32(a.scale.shift).i32(a.outOffset);
  return args.i32(a.actMin).i32(a.actMax).call("bf_rescale_s8");
}

std::vector<KernelCall> lowerConcat(const Node &node) {
  std::vector<KernelCall> calls;
  const std::vector<Int8ConcatPart> parts = int8ConcatArgs(node);
  size_t next = 0;
  for (const Value *input : node.inputs) {
    if (!input || input->type.numElements() == 0)
      continue;
    const Int8ConcatPart &p = parts.at(next++);
    Args args;
    args.addr(input).addr(node.output(0), p.dstOffset);
    args.table(p.dims).table(p.srcStrides).table(p.dstStrides);
    if (p.rescale)
      calls.push_back(args.i32(p.inOffset)
                          .i32(p.scale.mult)
                          .i32(p.scale.shift)
                          .i32(p.outOffset)
                          .call("bf_rescale_strided_s8"));
    else
      calls.push_back(args.call("bf_copy_strided_u8"));
  }
  return calls;
}

KernelCall lowerSoftmax(const Node &node) {
  const Int8SoftmaxArgs a = int8SoftmaxArgs(node);
  Args args;
  args.addr(node.input(0)).addr(node.output(0)).i32(a.outer).i32(a.axis).i32(a.inner);
  return args.i32(a.mult).i32(a.shift).i32(a.diffMin).call("bf_softmax_s8");
}

KernelCall lowerConvert(const Node &node) {
  const Int8ConvertArgs a = int8ConvertArgs(node);
  Args args;
  args.addr(node.input(0)).addr(node.output(0)).i32(a.n).f32(a.scale).i32(a.zeroPoint);
  return args.call(node.opType == "Quantize" ? "bf_quantize_f32_s8" : "bf_dequantize_s8_f32");
}

KernelCall lowerPlainConv(const Node &node) { return lowerConv(node); }

/// A describer that emits one call.
template <KernelCall (*Lower)(const Node &)> std::vector<KernelCall> one(const Node &node) {
  return {Lower(node)};
}

} // namespace

std::vector<KernelCall> describeInt8Calls(const Node &node) {
  const std::string &op = node.opType;
  if (node.attrs.has(kCmsisAttribute))
    return {describeCmsisCall(node)};
  if (op == kCmsisLayoutOp)
    return {describeLayoutCopy(node)};
  using Describe = std::vector<KernelCall> (*)(const Node &);
  static const std::unordered_map<std::string, Describe> describers = {
      {"Conv", one<lowerPlainConv>},    {kConvPoolOp, one<lowerConvPool>},
      {"Gemm", one<lowerGemm>},         {"MaxPool", one<lowerPool>},
      {"AveragePool", one<lowerPool>},  {"GlobalAveragePool", one<lowerPool>},
      {"Add", one<lowerBinary>},        {"Mul", one<lowerBinary>},
      {"Relu", one<lowerRescale>},      {"Clip", one<lowerRescale>},
      {"Rescale", one<lowerRescale>},   {"Softmax", one<lowerSoftmax>},
      {"Concat", lowerConcat},          {"Quantize", one<lowerConvert>},
      {"Dequantize", one<lowerConvert>}};
  if (auto it = describers.find(op); it != describers.end())
    return it->second(node);
  throw Error(ExitCode::Unsupported, node.describe() + ": no int8 bundle kernel for this operator");
}

} // namespace bundlefit
