//===- QuantReference.cpp - The int8 reference Quantize, Dequantize, Rescale ===//
//
// bundlefit's conversion nodes (docs/quantized-ir.md), as TFLite defines them:
//   Quantize    q = clamp(round_half_away(x / scale) + zeroPoint)  (float
//               division; NaN gives the zero point); an ONNX model's
//               (kInt8RoundingAttr "single") rounds half to even instead,
//               as QuantizeLinear defines it
//   Dequantize  x = scale * (q - zeroPoint)                        (float)
//   Rescale     q' = clamp(MultiplyByQuantizedMultiplier(q - zp, scale / scale') + zp')
//
//===----------------------------------------------------------------------===//
#include "quant/Quant.h"

#include "bundlefit/ops/ShapeHelpers.h"
#include "common/Int8Reference.h"
#include "common/RequantizeTable.h"

#include <cmath>

namespace bundlefit::quant_reference {

using namespace int8_ref;

void quantize(const Node &node, const std::vector<const Tensor *> &inputs,
              std::vector<Tensor> &outputs) {
  if (node.input(0)->type.dtype != DType::Float32)
    shape_helpers::unsupported(node, "Quantize needs a float32 input");
  const Affine out = activationOf(node, node.output(0), "output");
  const float scale = float(out.scale);
  const float *x = inputs[0]->data<float>();
  int8_t *y = outputs[0].data<int8_t>();
  const bool halfEven = singleRoundingOf(node);
  for (int64_t i = 0; i < outputs[0].numElements(); ++i) {
    const float quotient = x[i] / scale;
    if (std::isnan(quotient)) {
      y[i] = clampToInt8(out.zeroPoint);
      continue;
    }
    const double q = double(quotient);
    const double away = std::round(q);
    const double even = std::fabs(q - std::trunc(q)) == 0.5 ? 2.0 * std::round(q / 2.0) : away;
    const double rounded = halfEven ? even : away;
    const double bounded = rounded < -1.0e6 ? -1.0e6 : rounded > 1.0e6 ? 1.0e6 : rounded;
    y[i] = clampToInt8(int64_t(bounded) + out.zeroPoint);
  }
}

void dequantize(const Node &node, const std::vector<const Tensor *> &inputs,
                std::vector<Tensor> &outputs) {
  if (node.output(0)->type.dtype != DType::Float32)
    shape_helpers::unsupported(node, "Dequantize needs a float32 output");
  const Affine in = activationOf(node, node.input(0), "input");
  const float scale = float(in.scale);
  const int8_t *x = inputs[0]->data<int8_t>();
  float *y = outputs[0].data<float>();
  for (int64_t i = 0; i < outputs[0].numElements(); ++i)
    y[i] = scale * float(int32_t(x[i]) - in.zeroPoint);
}

void rescale(const Node &node, const std::vector<const Tensor *> &inputs,
             std::vector<Tensor> &outputs) {
  const Affine in = activationOf(node, node.input(0), "input");
  const Affine out = activationOf(node, node.output(0), "output");
  const std::array<int8_t, 256> table =
      requantizeTable(float(in.scale), in.zeroPoint, float(out.scale), out.zeroPoint);
  const int8_t *x = inputs[0]->data<int8_t>();
  int8_t *y = outputs[0].data<int8_t>();
  for (int64_t i = 0; i < outputs[0].numElements(); ++i)
    y[i] = in == out ? x[i] : table[size_t(x[i] + 128)];
}

} // namespace bundlefit::quant_reference

namespace bundlefit {

void registerQuantInt8Reference(OpRegistry &registry) {
  registry.at("Quantize").int8Runs(quant_reference::quantize);
  registry.at("Dequantize").int8Runs(quant_reference::dequantize);
  registry.at("Rescale").int8Runs(quant_reference::rescale);
}

} // namespace bundlefit
