//===- QuantizeWeights.cpp - Int8 weights and int32/int8 biases -----------===//
//
// The constant operands of an int8 layer. Weights are symmetric in
// [-127, 127] (power-of-two scales with symmetric_with_power2_scale), per
// tensor or per output channel; a pre-quantized model's own integers and
// parameters are kept while they still describe the (possibly folded) float
// values. The bias is int32 at the accumulator's scale, so the kernel adds it
// without rescaling, or int8 with its own symmetric scale.
//
//===----------------------------------------------------------------------===//
#include "QuantizeRules.h"

#include "bundlefit/support/Bytes.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace bundlefit {

namespace {

template <typename T> std::vector<uint8_t> toBytes(const std::vector<T> &values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!values.empty())
    copyBytes(bytes.data(), values.data(), bytes.size());
  return bytes;
}

/// The model's scales and zero points for `weight` when they suit the
/// kernel (per tensor, or per `axis`); with a preset, a weight it lacks or
/// gives along another axis is requantized symmetric, with a warning (the
/// model's float weight has no integers to keep, or the kernel's channels
/// differ from the model's).
bool presetWeightParams(const Node &node, const Value &weight, int axis,
                        const QuantizationOptions &options, std::vector<std::string> &warnings,
                        QuantParams &quant) {
  if (!options.preset)
    return false;
  auto it = options.preset->weights.find(weight.name);
  if (it == options.preset->weights.end()) {
    warnings.push_back(node.describe() + ": weight '" + weight.name +
                       "' is not int8 in the model; requantized symmetric" +
                       (options.channelwise ? " per channel" : ""));
    return false;
  }
  if (it->second.axis >= 0 && it->second.axis != axis) {
    warnings.push_back(node.describe() + ": weight '" + weight.name + "' is quantized along axis " +
                       std::to_string(it->second.axis) + ", the kernel's channels are axis " +
                       std::to_string(axis) + "; requantized symmetric");
    return false;
  }
  // A pass may have changed the weight since (a folded BatchNormalization):
  // the model's scales then no longer cover it.
  std::vector<float> values = weight.toFloats();
  const Shape &shape = weight.type.shape;
  int64_t inner = numElements(Shape(shape.begin() + axis + 1, shape.end()));
  for (size_t i = 0; i < values.size(); ++i) {
    size_t c = it->second.axis >= 0 ? size_t(int64_t(i) / inner % shape[size_t(axis)]) : 0;
    const float zp = float(it->second.zeroPoints.size() > 1 ? it->second.zeroPoints[c]
                                                            : it->second.zeroPoints.at(0));
    const float q = values[i] / it->second.scales[c] + zp;
    if (!(q >= -128.5f && q <= 127.5f)) {
      warnings.push_back(node.describe() + ": weight '" + weight.name +
                         "' no longer fits the model's int8 scale (changed by a graph "
                         "pass); requantized symmetric");
      return false;
    }
  }
  quant = it->second;
  return true;
}

/// The model's int32 bias integers when its bias scale is the
/// accumulator's (inputScale * weightScale, per channel); otherwise
/// nullptr, with a warning when the model had an int32 bias: it is then
/// requantized to the accumulator's scale.
const std::vector<int64_t> *presetBiasIntegers(const Node &node, const Value &bias,
                                               const std::vector<float> &values,
                                               const std::vector<float> &scales, int64_t channels,
                                               const QuantizationOptions &options,
                                               std::vector<std::string> &warnings) {
  if (!options.preset)
    return nullptr;
  auto it = options.preset->biasScales.find(bias.name);
  auto integers = options.preset->biasIntegers.find(bias.name);
  if (it == options.preset->biasScales.end() || integers == options.preset->biasIntegers.end())
    return nullptr;
  for (int64_t c = 0; c < channels; ++c) {
    float have = it->second[it->second.size() == 1 ? 0 : size_t(c)];
    float want = scales[scales.size() == 1 ? 0 : size_t(c)];
    if (std::abs(have - want) > 1e-6f * want) {
      warnings.push_back(
          node.describe() + ": bias '" + bias.name + "' scale " + std::to_string(have) +
          " is not input scale x weight scale; requantized to " + std::to_string(want));
      return nullptr;
    }
  }
  const std::vector<int64_t> &exact = integers->second;
  if (exact.size() != 1 && exact.size() != size_t(channels))
    return nullptr;
  // A graph pass may have changed the bias since (a folded BatchNormalization):
  // then the float values, not the model's integers, are the bias.
  for (int64_t c = 0; c < channels; ++c) {
    double scale = it->second[it->second.size() == 1 ? 0 : size_t(c)];
    double value = values[values.size() == 1 ? 0 : size_t(c)];
    if (std::abs(value - double(exact[exact.size() == 1 ? 0 : size_t(c)]) * scale) >
        0.5 * scale + 1e-6 * std::abs(value))
      return nullptr;
  }
  return &exact;
}

} // namespace

QuantizedConstant quantizeWeightValues(const Node &node, const Value &weight, int axis,
                                       const QuantizationOptions &options,
                                       std::vector<std::string> &warnings) {
  std::vector<float> values = weight.toFloats();
  const Shape &shape = weight.type.shape;
  int64_t channels = shape[size_t(axis)];
  int64_t inner = numElements(Shape(shape.begin() + axis + 1, shape.end()));
  QuantParams quant;
  bool preset = presetWeightParams(node, weight, axis, options, warnings, quant);
  bool perChannel = preset ? quant.axis >= 0 : options.channelwise;
  auto channelOf = [&](size_t i) { return perChannel ? int64_t(i) / inner % channels : 0; };
  if (!preset) {
    std::vector<float> maxAbs(perChannel ? size_t(channels) : 1, 0.0f);
    for (size_t i = 0; i < values.size(); ++i)
      if (std::isfinite(values[i]))
        maxAbs[size_t(channelOf(i))] = std::max(maxAbs[size_t(channelOf(i))], std::abs(values[i]));
    bool power2 = options.schema == QuantSchema::SymmetricWithPower2Scale;
    for (float m : maxAbs) {
      quant.scales.push_back(chooseWeightParams(m, power2).scale);
      quant.zeroPoints.push_back(0);
    }
    quant.axis = perChannel ? axis : -1;
  }
  std::vector<int8_t> q(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    // The model's integers as they are (-128 included); our own in [-127, 127].
    const size_t c = size_t(channelOf(i));
    const int32_t zp = quant.zeroPoints.size() > 1 ? quant.zeroPoints[c] : quant.zeroPoints[0];
    q[i] = int8_t(quantizeValue(values[i], {quant.scales[c], zp}, preset ? -128 : -127, 127));
  }
  return {TensorType{DType::Int8, shape, quant}, toBytes(q)};
}

QuantizedConstant quantizeBiasValues(const Node &node, const Value &bias, int64_t channels,
                                     float inputScale, const std::vector<float> &weightScales,
                                     const QuantizationOptions &options,
                                     std::vector<std::string> &warnings) {
  std::vector<float> values = bias.toFloats();
  auto valueAt = [&](int64_t c) { return values.size() == 1 ? values[0] : values[size_t(c)]; };
  QuantParams quant;
  if (options.biasPrecision == BiasPrecision::Int32) {
    // At accumulator scale, so the kernel adds it without rescaling.
    for (float w : weightScales) {
      quant.scales.push_back(float(double(inputScale) * double(w)));
      quant.zeroPoints.push_back(0);
    }
    quant.axis = weightScales.size() > 1 ? 0 : -1;
    const std::vector<int64_t> *exact =
        presetBiasIntegers(node, bias, values, quant.scales, channels, options, warnings);
    std::vector<int32_t> q(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c)
      q[size_t(c)] =
          exact ? int32_t(std::clamp<int64_t>((*exact)[exact->size() == 1 ? 0 : size_t(c)],
                                              std::numeric_limits<int32_t>::min(),
                                              std::numeric_limits<int32_t>::max()))
                : int32_t(quantizeValue(
                      valueAt(c), {quant.scales[weightScales.size() > 1 ? size_t(c) : 0], 0},
                      std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
    return {TensorType{DType::Int32, {channels}, quant}, toBytes(q)};
  }
  float maxAbs = 0;
  for (int64_t c = 0; c < channels; ++c)
    if (std::isfinite(valueAt(c)))
      maxAbs = std::max(maxAbs, std::abs(valueAt(c)));
  ScaleZeroPoint params =
      chooseWeightParams(maxAbs, options.schema == QuantSchema::SymmetricWithPower2Scale);
  std::vector<int8_t> q(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c)
    q[size_t(c)] = int8_t(quantizeValue(valueAt(c), params, -127, 127));
  return {TensorType{DType::Int8, {channels}, perTensor(params)}, toBytes(q)};
}

} // namespace bundlefit
