//===- Int8Kernels.cpp - Quantized nodes on the bundles' own int8 kernels --===//
//
// The interpreter runs int8 nodes with src/kernels/int8_*.c compiled natively
// (library bundlefit_int8) and the arguments quant/Int8Params.h builds, the
// very calls the code generator emits: interpreter int8 == bundle int8 bit
// for bit (docs/quantized-ir.md).
//
//===----------------------------------------------------------------------===//
#include "Int8Kernels.h"

#include "../kernels/bundlefit_kernels_int8.h"

#include "bundlefit/int8/Int8Params.h"
#include "bundlefit/support/Error.h"

#include <unordered_map>

namespace bundlefit {

namespace {

using Inputs = std::vector<const Tensor *>;

const int8_t *i8(const Tensor *t) { return t ? t->data<int8_t>() : nullptr; }
int8_t *i8(Tensor &t) { return t.data<int8_t>(); }

/// Bias pointers: int32 or int8 (with its multipliers), from input `index`.
struct Bias {
  const int32_t *b32 = nullptr;
  const int8_t *b8 = nullptr;
};
Bias biasOf(const Inputs &in, size_t index, const Int8ConvArgs &a) {
  Bias b;
  const Tensor *t = index < in.size() ? in[index] : nullptr;
  if (t)
    (a.int8Bias ? (void)(b.b8 = t->data<int8_t>()) : (void)(b.b32 = t->data<int32_t>()));
  return b;
}
const int32_t *table(const std::vector<int32_t> &v) { return v.empty() ? nullptr : v.data(); }

void runConv(const Node &node, const Inputs &in, std::vector<Tensor> &out) {
  const Int8ConvArgs a = int8ConvArgs(node);
  const Bias b = biasOf(in, 2, a);
  if (a.depthwise) {
    bf_depthwise_conv2d_s8(i8(in[0]), i8(in[1]), b.b32, i8(out[0]), a.N, a.C, a.H, a.W, a.chMult,
                           a.OH, a.OW, a.KH, a.KW, a.strideH, a.strideW, a.padT, a.padL, a.dilH,
                           a.dilW, a.inputOffset, a.outputOffset, table(a.outMult),
                           table(a.outShift), a.quantFlags(), a.actMin, a.actMax, b.b8,
                           table(a.biasMult), table(a.biasShift));
    return;
  }
  bf_conv2d_s8(i8(in[0]), i8(in[1]), b.b32, i8(out[0]), a.N, a.C, a.H, a.W, a.M, a.OH, a.OW, a.KH,
               a.KW, a.strideH, a.strideW, a.padT, a.padL, a.dilH, a.dilW, a.groups, a.inputOffset,
               a.outputOffset, table(a.outMult), table(a.outShift), a.quantFlags(), a.actMin,
               a.actMax, b.b8, table(a.biasMult), table(a.biasShift));
}

void runGemm(const Node &node, const Inputs &in, std::vector<Tensor> &out) {
  const Int8ConvArgs a = int8GemmArgs(node);
  const Bias b = biasOf(in, 2, a);
  bf_fully_connected_s8(i8(in[0]), i8(in[1]), b.b32, i8(out[0]), a.batches, a.accumDepth,
                        a.outDepth, a.transB, a.inputOffset, a.filterOffset, a.outputOffset,
                        table(a.outMult), table(a.outShift), a.quantFlags(), a.actMin, a.actMax,
                        b.b8, table(a.biasMult), table(a.biasShift));
}

void runPool(const Node &node, const Inputs &in, std::vector<Tensor> &out) {
  const Int8PoolArgs a = int8PoolArgs(node);
  if (node.opType == "MaxPool")
    bf_maxpool2d_s8(i8(in[0]), i8(out[0]), a.NC, a.H, a.W, a.OH, a.OW, a.KH, a.KW, a.strideH,
                    a.strideW, a.padT, a.padL, a.dilH, a.dilW, a.actMin, a.actMax);
  else if (node.opType == "AveragePool")
    bf_avgpool2d_s8(i8(in[0]), i8(out[0]), a.NC, a.H, a.W, a.OH, a.OW, a.KH, a.KW, a.strideH,
                    a.strideW, a.padT, a.padL, a.padB, a.padR, a.countIncludePad, a.padValue,
                    a.actMin, a.actMax);
  else
    bf_global_avgpool_s8(i8(in[0]), i8(out[0]), a.NC, a.H * a.W, a.actMin, a.actMax);
}

void runBinary(const Node &node, const Inputs &in, std::vector<Tensor> &out) {
  const Int8BinaryArgs a = int8BinaryArgs(node);
  if (node.opType == "Add")
    bf_add_s8(i8(in[0]), i8(in[1]), i8(out[0]), a.dims.data(), a.aStrides.data(), a.bStrides.data(),
              a.aOffset, a.a.mult, a.a.shift, a.bOffset, a.b.mult, a.b.shift, a.leftShift,
              a.outOffset, a.out.mult, a.out.shift, a.actMin, a.actMax);
  else
    bf_mul_s8(i8(in[0]), i8(in[1]), i8(out[0]), a.dims.data(), a.aStrides.data(), a.bStrides.data(),
              a.aOffset, a.bOffset, a.outOffset, a.out.mult, a.out.shift, a.actMin, a.actMax);
}

void runRescale(const Node &node, const Inputs &in, std::vector<Tensor> &out) {
  const Int8RescaleArgs a = int8RescaleArgs(node);
  if (a.clampOnly)
    bf_clamp_s8(i8(in[0]), i8(out[0]), a.n, a.actMin, a.actMax);
  else
    bf_rescale_s8(i8(in[0]), i8(out[0]), a.n, a.inOffset, a.scale.mult, a.scale.shift, a.outOffset,
                  a.actMin, a.actMax);
}

void runSoftmax(const Node &node, const Inputs &in, std::vector<Tensor> &out) {
  const Int8SoftmaxArgs a = int8SoftmaxArgs(node);
  bf_softmax_s8(i8(in[0]), i8(out[0]), a.outer, a.axis, a.inner, a.mult, a.shift, a.diffMin);
}

void runConcat(const Node &node, const Inputs &in, std::vector<Tensor> &out) {
  const std::vector<Int8ConcatPart> parts = int8ConcatArgs(node);
  size_t next = 0;
  for (const Tensor *t : in) {
    if (!t || t->numElements() == 0)
      continue;
    const Int8ConcatPart &p = parts.at(next++);
    int8_t *dst = i8(out[0]) + p.dstOffset;
    if (p.rescale)
      bf_rescale_strided_s8(i8(t), dst, p.dims.data(), p.srcStrides.data(), p.dstStrides.data(),
                            p.inOffset, p.scale.mult, p.scale.shift, p.outOffset);
    else // The bundle copies bytes with bf_copy_strided_u8: the same result.
      bf_rescale_strided_s8(i8(t), dst, p.dims.data(), p.srcStrides.data(), p.dstStrides.data(), 0,
                            1 << 30, 1, 0);
  }
}

void runQuantize(const Node &node, const Inputs &in, std::vector<Tensor> &out) {
  const Int8ConvertArgs a = int8ConvertArgs(node);
  bf_quantize_f32_s8(in[0]->data<float>(), i8(out[0]), a.n, a.scale, a.zeroPoint);
}

void runDequantize(const Node &node, const Inputs &in, std::vector<Tensor> &out) {
  const Int8ConvertArgs a = int8ConvertArgs(node);
  bf_dequantize_s8_f32(i8(in[0]), out[0].data<float>(), a.n, a.scale, a.zeroPoint);
}

} // namespace

KernelFn findInt8Kernel(const Node &node) {
  if (!needsInt8Kernel(node))
    return nullptr;
  // ConvPool maps to nullptr: FusedKernels.cpp runs its int8 parts.
  static const std::unordered_map<std::string, KernelFn> kernels = {{"Conv", runConv},
                                                                    {"Gemm", runGemm},
                                                                    {"MaxPool", runPool},
                                                                    {"AveragePool", runPool},
                                                                    {"GlobalAveragePool", runPool},
                                                                    {"Add", runBinary},
                                                                    {"Mul", runBinary},
                                                                    {"Relu", runRescale},
                                                                    {"Clip", runRescale},
                                                                    {"Rescale", runRescale},
                                                                    {"Softmax", runSoftmax},
                                                                    {"Concat", runConcat},
                                                                    {"Quantize", runQuantize},
                                                                    {"Dequantize", runDequantize},
                                                                    {"ConvPool", nullptr}};
  if (auto it = kernels.find(node.opType); it != kernels.end())
    return it->second;
  throw Error(ExitCode::Unsupported, node.describe() + ": no int8 kernel for this operator");
}

} // namespace bundlefit
