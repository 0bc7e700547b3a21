//===- QuantComparison.h - int8 against float, tensor by tensor ------------===//
//
// `bundlefit compare-quant` and Python's bundlefit.compare_quant() run the
// float graph and its int8 rewrite side by side in the interpreter and
// report, per tensor present in both, the signal-to-noise ratio of the int8
// values (dequantized) against the float ones over all samples:
//   SNR = 10 log10( sum f^2 / sum (f - dq)^2 )  dB
// worst first, so the layer that loses accuracy stands out. The graph
// outputs also get top-1 agreement (argmax of int8 == argmax of float).
// Driven through driver::Compilation::compareQuant.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/driver/Calibration.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace bundlefit::driver {

struct TensorError {
  std::string name, op, type; ///< type: the int8 type with scale and zero point
  double signal = 0, noise = 0;
  /// +inf when exact, -inf when the float tensor is all zero and int8 is not.
  double snrDb() const;
};

struct OutputAgreement {
  std::string name;
  size_t agreeing = 0; ///< Samples whose int8 argmax is float's.
};

struct QuantComparison {
  size_t samples = 0;
  std::vector<TensorError> tensors;     ///< Worst SNR first.
  std::vector<OutputAgreement> outputs; ///< The int8 graph's outputs, in order.
  /// agreeing / samples (0 without samples).
  double top1Agreement(const OutputAgreement &output) const;
};

/// Runs both graphs (one float input, fed the same samples) and compares.
QuantComparison compareQuantized(const Graph &floatGraph, const Graph &int8Graph,
                                 const std::vector<Tensor> &samples, const SampleDone &onSample);

/// bundlefit.compare-quant/1 (`compare-quant --json`, compare_quant()),
/// before the tool stamp (ToolInfo.h: stampReport).
nlohmann::json quantComparisonJson(const QuantComparison &comparison, const std::string &modelPath,
                                   const std::string &profilePath, const std::string &schema);

} // namespace bundlefit::driver
