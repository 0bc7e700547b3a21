//===- CmsisConstants.cpp - Constants in CMSIS-NN's layouts ---------------===//
#include "cmsis/CmsisConstants.h"

#include "bundlefit/ops/Cmsis.h"
#include "bundlefit/support/Bytes.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <climits>
#include <vector>

namespace bundlefit::cmsis_constants {

namespace {

/// bf_i8_scale_bias (int8_util.h): round-half-away(b * mult * 2^(shift-31)),
/// saturated; the portable kernels add exactly this to the accumulator.
int32_t scaleBias(int32_t b, int32_t mult, int32_t shift) {
  int64_t p = int64_t(b) * int64_t(mult);
  const int32_t right = 31 - shift;
  if (right > 0) {
    const int64_t half = int64_t(1) << (right - 1);
    p = p >= 0 ? (p + half) >> right : -((-p + half) >> right);
  } else if (right < 0) {
    const int32_t left = -right > 24 ? 24 : -right;
    p = p >= 0 ? p << left : -((-p) << left);
  }
  return int32_t(std::max<int64_t>(INT32_MIN, std::min<int64_t>(INT32_MAX, p)));
}

} // namespace

/// The constant `node` reads at `index`, cloned first when another node
/// reads it too (repacking must not change what the others see).
Value *ownConstant(Graph &graph, Node &node, size_t index) {
  Value *value = node.inputs[index];
  for (const Node *user : graph.users(value))
    if (user != &node) {
      Value *copy = graph.addConstant(graph.uniqueValueName(value->name + "_cmsis"), value->type,
                                      value->data);
      node.inputs[index] = copy;
      return copy;
    }
  return value;
}

/// [M, C, KH, KW] -> OHWI [M, KH, KW, C] (the logical shape stays).
void repackConvWeights(Value &w) {
  const Shape &s = w.type.shape;
  const int64_t M = s[0], C = s[1], KH = s[2], KW = s[3];
  std::vector<uint8_t> out(w.data.size());
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < KH; ++y)
        for (int64_t x = 0; x < KW; ++x)
          out[size_t(((m * KH + y) * KW + x) * C + c)] =
              w.data[size_t(((m * C + c) * KH + y) * KW + x)];
  w.data = std::move(out);
}

/// Depthwise [M, 1, KH, KW] -> 1HWC [1, KH, KW, M].
void repackDepthwiseWeights(Value &w) {
  const Shape &s = w.type.shape;
  const int64_t M = s[0], KH = s[2], KW = s[3];
  std::vector<uint8_t> out(w.data.size());
  for (int64_t m = 0; m < M; ++m)
    for (int64_t k = 0; k < KH * KW; ++k)
      out[size_t(k * M + m)] = w.data[size_t(m * KH * KW + k)];
  w.data = std::move(out);
}

/// Gemm B [K, N] (transB = 0) -> [N, K], transB = 1: CMSIS-NN's [out, in].
void transposeGemmWeights(Node &node, Value &b) {
  const int64_t K = b.type.shape[0], N = b.type.shape[1];
  std::vector<uint8_t> out(b.data.size());
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n)
      out[size_t(n * K + k)] = b.data[size_t(k * N + n)];
  b.data = std::move(out);
  b.type.shape = {N, K};
  if (b.type.quant.axis >= 0)
    b.type.quant.axis = 1 - b.type.quant.axis;
  node.attrs.setInt("transB", 1);
}

/// An int8 bias becomes the int32 bias at the accumulator scale CMSIS-NN
/// takes, computed once here (bit-identical to what the kernels compute).
void widenInt8Bias(Graph &graph, Node &node, const Int8ConvArgs &a, int64_t channels) {
  if (!a.int8Bias)
    return;
  const Value *bias8 = node.input(2);
  std::vector<int32_t> values(size_t(channels), 0);
  for (int64_t c = 0; c < channels; ++c) {
    const size_t k = a.biasMult.size() > 1 ? size_t(c) : 0;
    values[size_t(c)] = scaleBias(bias8->dataAs<int8_t>()[c], a.biasMult[k], a.biasShift[k]);
  }
  TensorType type;
  type.dtype = DType::Int32;
  type.shape = {channels};
  const float inScale = node.input(0)->type.quant.scales.at(0);
  for (float ws : node.input(1)->type.quant.scales)
    type.quant.scales.push_back(inScale * ws);
  type.quant.zeroPoints.assign(type.quant.scales.size(), 0);
  type.quant.axis = type.quant.scales.size() > 1 ? 0 : -1;
  std::vector<uint8_t> bytes(values.size() * 4);
  copyBytes(bytes.data(), values.data(), bytes.size());
  node.inputs[2] = graph.addConstant(graph.uniqueValueName(bias8->name + "_i32"), type, bytes);
}

/// Helium's arm_fully_connected_s8 starts each row's accumulator from
/// kernel_sum[r] = bias[r] + input_offset * (sum_k w[r][k] + K * filter_offset)
/// (arm_vector_sum_s8), read from its context buffer. Computed here once, in
/// the int32 arithmetic the library uses (wrapping), and stored as a constant
/// read by the node at kCmsisKernelSumsInput: weights.bin holds it, CONSTANT
/// counts it, and no arena scratch is needed.
void addKernelSums(Graph &graph, Node &node, const Int8ConvArgs &a) {
  const Value *w = node.input(1);
  const Value *bias = node.inputs.size() > 2 ? node.inputs[2] : nullptr;
  const int64_t rows = a.outDepth, cols = a.accumDepth;
  if (int64_t(w->data.size()) != rows * cols)
    fatalInternal(node.describe() + ": fully connected weights are not [out, in]");
  std::vector<int32_t> sums(size_t(rows), 0);
  const int8_t *wd = w->dataAs<int8_t>();
  for (int64_t r = 0; r < rows; ++r) {
    uint32_t rowSum = 0; // int32 arithmetic as CMSIS-NN's, without signed overflow
    for (int64_t k = 0; k < cols; ++k)
      rowSum += uint32_t(int32_t(wd[r * cols + k]));
    rowSum += uint32_t(int32_t(cols)) * uint32_t(a.filterOffset);
    uint32_t sum = rowSum * uint32_t(a.inputOffset);
    if (bias)
      sum += uint32_t(bias->dataAs<int32_t>()[r]);
    sums[size_t(r)] = int32_t(sum);
  }
  TensorType type;
  type.dtype = DType::Int32;
  type.shape = {rows};
  std::vector<uint8_t> bytes(sums.size() * 4);
  copyBytes(bytes.data(), sums.data(), bytes.size());
  Value *value = graph.addConstant(graph.uniqueValueName(node.name + "_kernel_sums"), type, bytes);
  while (node.inputs.size() < size_t(kCmsisKernelSumsInput))
    node.inputs.push_back(nullptr);
  node.inputs.push_back(value);
}

/// Gemm weights [out, C*H*W] re-ordered to [out, H*W*C]: the columns a
/// flattened NHWC vector meets (TFLM-style), so no layout copy is needed.
void permuteColumnsToHwc(Value &w, int64_t C, int64_t H, int64_t W) {
  const int64_t outs = w.type.shape[0], depth = C * H * W;
  std::vector<uint8_t> out(w.data.size());
  for (int64_t o = 0; o < outs; ++o)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x)
          out[size_t(o * depth + (y * W + x) * C + c)] =
              w.data[size_t(o * depth + (c * H + y) * W + x)];
  w.data = std::move(out);
}

} // namespace bundlefit::cmsis_constants
