//===- QuantizeRules.h - Rules of the int8 rewrite, one file each ---------===//
//
// Private to bundlefit_quant: the parts of quantizeGraph (QuantizeGraph.cpp)
// that stand on their own, each in the file named at its declaration.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/quant/QuantizeGraph.h"

#include <set>
#include <string>
#include <vector>

namespace bundlefit {

/// One scale and zero point for a whole tensor.
inline QuantParams perTensor(ScaleZeroPoint params) {
  QuantParams quant;
  quant.scales = {params.scale};
  quant.zeroPoints = {params.zeroPoint};
  return quant;
}

/// The float graph inputs that are quantized once, whole, before the views
/// that read them (InputsQuantizedOnce.cpp): the per-step Slices of an
/// unrolled LSTM/GRU/RNN then run in int8 instead of one Quantize per step.
/// Profile-guided builds only; empty with a preset.
std::set<const Value *> inputsQuantizedOnce(const Graph &graph, const ProfileData &profile,
                                            const QuantizationOptions &options);

/// A constant quantized for an int8 kernel: its type (with parameters) and
/// bytes.
struct QuantizedConstant {
  TensorType type;
  std::vector<uint8_t> bytes;
};

/// Weight `weight` of `node` quantized along `axis` (QuantizeWeights.cpp):
/// with a preset model's scales and zero points when they still fit, else
/// symmetric in [-127, 127], per channel with options.channelwise. A preset
/// that cannot be kept adds a line to `warnings`.
QuantizedConstant quantizeWeightValues(const Node &node, const Value &weight, int axis,
                                       const QuantizationOptions &options,
                                       std::vector<std::string> &warnings);

/// Bias `bias` of `node` quantized to `channels` values (QuantizeWeights.cpp):
/// int32 at the accumulator's scale (inputScale * weightScales[c]; a preset
/// model's integers kept when its scales agree), or int8 symmetric.
QuantizedConstant quantizeBiasValues(const Node &node, const Value &bias, int64_t channels,
                                     float inputScale, const std::vector<float> &weightScales,
                                     const QuantizationOptions &options,
                                     std::vector<std::string> &warnings);

} // namespace bundlefit
