//===- LinearQuantInterp.cpp - Reference QuantizeLinear / DequantizeLinear ---===//
//
// ONNX's definitions, per tensor or per axis, for the reference interpreter
// (conformance tests). Models compiled by the driver never reach these: the
// Q/DQ pairs become int8 IR first (quant/FoldQdq.h).
//
//===----------------------------------------------------------------------===//
#include "quant/Quant.h"

#include "conv/Conv.h"

#include "bundlefit/ir/LinearQuant.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Error.h"

#include <algorithm>

namespace bundlefit {

namespace linear_quant_interp {

using Inputs = std::vector<const Tensor *>;

const Tensor *optional(const Inputs &inputs, size_t index) {
  return index < inputs.size() ? inputs[index] : nullptr;
}

void quantizeLinearKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  const Tensor &x = *inputs[0];
  Tensor &y = outputs[0];
  LinearQuant q =
      readLinearQuant(node, x.type.shape, DType::Float32, inputs[1], optional(inputs, 2));
  for (int64_t i = 0; i < x.numElements(); ++i) {
    size_t c = q.channelOf(i, x.type.shape);
    int64_t v = quantizeLinear(x.data<float>()[i], q.scales[c], q.zeroPoints[c], y.type.dtype);
    if (y.type.dtype == DType::Int8)
      y.data<int8_t>()[i] = int8_t(v);
    else
      y.data<uint8_t>()[i] = uint8_t(v);
  }
}

void dequantizeLinearKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  const Tensor &x = *inputs[0];
  LinearQuant q = readLinearQuant(node, x.type.shape, x.type.dtype, inputs[1], optional(inputs, 2));
  float *y = outputs[0].data<float>();
  for (int64_t i = 0; i < x.numElements(); ++i) {
    size_t c = q.channelOf(i, x.type.shape);
    // (x - zp) in int64, then one float multiply, as onnxruntime does.
    y[i] = float(int64_t(x.at(i)) - q.zeroPoints[c]) * q.scales[c];
  }
}

/// Element `index` of a zero point: a scalar, or one per row of A (`along`
/// = the row) / column of B; absent: 0.
int64_t zeroPointAt(const Tensor *zp, int64_t along) {
  if (!zp || zp->numElements() == 0)
    return 0;
  return int64_t(zp->at(zp->numElements() == 1 ? 0 : along));
}

/// sum_k (a[.., i, k] - aZp) * (b[.., k, j] - bZp) for every element of
/// `out` (numpy.matmul's shape and batch broadcasting), exact in int64.
template <typename Store>
void integerMatMul(const Tensor &a, const Tensor *aZp, const Tensor &b, const Tensor *bZp,
                   const Shape &out, Store store) {
  Shape as = a.type.shape, bs = b.type.shape;
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  const size_t batchRank = std::max(as.size(), bs.size()) - 2;
  const int64_t count = numElements(out);
  for (int64_t index = 0; index < count; ++index) {
    const int64_t j = index % N, i = index / N % M;
    // Offsets of this batch in A and B: size-1 (or missing) dims broadcast.
    int64_t batch = index / (M * N), aOff = 0, bOff = 0, aStride = M * K, bStride = K * N;
    // Batch dims from the innermost out; a missing dim has size 1.
    for (size_t d = 0; d < batchRank; ++d) {
      const size_t fromA = as.size() - 3, fromB = bs.size() - 3; // innermost batch dims
      const int64_t sizeA = d <= fromA && as.size() >= 3 ? as[fromA - d] : 1;
      const int64_t sizeB = d <= fromB && bs.size() >= 3 ? bs[fromB - d] : 1;
      const int64_t position = batch % std::max(sizeA, sizeB);
      batch /= std::max(sizeA, sizeB);
      aOff += sizeA == 1 ? 0 : position * aStride;
      bOff += sizeB == 1 ? 0 : position * bStride;
      aStride *= sizeA;
      bStride *= sizeB;
    }
    int64_t acc = 0;
    for (int64_t k = 0; k < K; ++k)
      acc += (int64_t(a.at(aOff + i * K + k)) - zeroPointAt(aZp, i)) *
             (int64_t(b.at(bOff + k * N + j)) - zeroPointAt(bZp, j));
    store(index, acc);
  }
}

void matMulIntegerKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  Tensor &y = outputs[0];
  integerMatMul(*inputs[0], optional(inputs, 2), *inputs[1], optional(inputs, 3), y.type.shape,
                [&](int64_t i, int64_t acc) { y.data<int32_t>()[i] = int32_t(acc); });
}

/// ONNX QLinearMatMul: the int32 product requantized with the float factor
/// aScale * bScale / yScale, rounded half to even, saturated.
void qlinearMatMulKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  Tensor &y = outputs[0];
  const Shape none;
  LinearQuant a = readLinearQuant(node, none, inputs[0]->type.dtype, inputs[1], inputs[2]);
  auto scalarOf = [&](size_t scale, size_t zp) {
    Node view = node; // readLinearQuant names operands 1 and 2 of its node
    view.inputs = {node.inputs[scale - 1], node.inputs[scale], node.inputs[zp]};
    return readLinearQuant(view, none, inputs[zp]->type.dtype, inputs[scale], inputs[zp]);
  };
  LinearQuant b = scalarOf(4, 5), out = scalarOf(6, 7);
  if (a.scales.size() != 1 || b.scales.size() != 1 || out.scales.size() != 1)
    throw Error(ExitCode::Unsupported,
                node.describe() + ": per-row / per-column scales are not supported");
  const float factor = a.scales[0] * b.scales[0] / out.scales[0];
  integerMatMul(
      *inputs[0], inputs[2], *inputs[3], inputs[5], y.type.shape, [&](int64_t i, int64_t acc) {
        int64_t q = quantizeLinear(float(acc) * factor, 1.0f, out.zeroPoints[0], y.type.dtype);
        if (y.type.dtype == DType::Int8)
          y.data<int8_t>()[i] = int8_t(q);
        else
          y.data<uint8_t>()[i] = uint8_t(q);
      });
}

/// `t - zeroPoint` as int32 (exact); a zero point of several elements is per
/// index of axis 0 (a weight's output channel).
Tensor shifted(const Tensor &t, const Tensor *zeroPoint) {
  Tensor out(TensorType{DType::Int32, t.type.shape, {}});
  const int64_t count = t.numElements();
  const int64_t inner = t.type.shape.empty() || t.type.shape[0] == 0 ? 1 : count / t.type.shape[0];
  for (int64_t i = 0; i < count; ++i)
    out.data<int32_t>()[i] = int32_t(int64_t(t.at(i)) - zeroPointAt(zeroPoint, i / inner));
  return out;
}

/// The convolution of integers: Conv's reference kernel, which accumulates
/// in double (exact below 2^53) and stores int32 rounded.
void integerConv(const Node &node, const Tensor &x, const Tensor &w, const Tensor *bias,
                 Tensor &acc) {
  std::vector<Tensor> out(1);
  out[0] = Tensor(acc.type);
  std::vector<const Tensor *> operands = {&x, &w};
  if (bias)
    operands.push_back(bias);
  conv_interp::convKernel(node, operands, out);
  acc = std::move(out[0]);
}

void convIntegerKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  integerConv(node, shifted(*inputs[0], optional(inputs, 2)),
              shifted(*inputs[1], optional(inputs, 3)), nullptr, outputs[0]);
}

/// ONNX QLinearConv: the int32 convolution plus bias, requantized per output
/// channel with xScale * wScale[m] / yScale, rounded half to even.
void qlinearConvKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  Tensor &y = outputs[0];
  const Tensor &x = *inputs[0], &w = *inputs[3]; // w_scale per output channel m
  Tensor acc(TensorType{DType::Int32, y.type.shape, {}});
  integerConv(node, shifted(x, inputs[2]), shifted(w, inputs[5]), optional(inputs, 8), acc);
  const int64_t channels = y.type.shape[1];
  const int64_t spatial = acc.numElements() / (y.type.shape[0] * channels);
  const float xScale = inputs[1]->data<float>()[0], yScale = inputs[6]->data<float>()[0];
  const int64_t yZp = zeroPointAt(inputs[7], 0);
  for (int64_t i = 0; i < acc.numElements(); ++i) {
    const int64_t m = i / spatial % channels;
    const float wScale = inputs[4]->data<float>()[inputs[4]->numElements() == 1 ? 0 : m];
    int64_t q = quantizeLinear(float(acc.data<int32_t>()[i]) * (xScale * wScale / yScale), 1.0f,
                               yZp, y.type.dtype);
    if (y.type.dtype == DType::Int8)
      y.data<int8_t>()[i] = int8_t(q);
    else
      y.data<uint8_t>()[i] = uint8_t(q);
  }
}

} // namespace linear_quant_interp

} // namespace bundlefit
