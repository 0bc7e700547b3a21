//===- LinearQuantKernels.cpp - Reference QuantizeLinear / DequantizeLinear -===//
//
// ONNX's definitions, per tensor or per axis, for the reference interpreter
// (conformance tests). Models compiled by the driver never reach these: the
// Q/DQ pairs become int8 IR first (quant/FoldQdq.h).
//
//===----------------------------------------------------------------------===//
#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/ir/LinearQuant.h"

namespace bundlefit {

namespace {

using Inputs = std::vector<const Tensor *>;

const Tensor *optional(const Inputs &inputs, size_t index) {
  return index < inputs.size() ? inputs[index] : nullptr;
}

void quantizeLinearKernel(const Node &node, const Inputs &inputs, std::vector<Tensor> &outputs) {
  const Tensor &x = *inputs[0];
  Tensor &y = outputs[0];
  LinearQuant q = readLinearQuant(node, x.type.shape, DType::Float32, inputs[1], optional(inputs, 2));
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

} // namespace

void registerLinearQuantKernels(KernelTable &table) {
  table.add("QuantizeLinear", quantizeLinearKernel);
  table.add("DequantizeLinear", dequantizeLinearKernel);
}

} // namespace bundlefit
