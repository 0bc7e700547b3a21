//===- OutputComparison.h - How close a bundle's output is to the reference -===//
//
// `run --compare` measures each output against the reference interpreter the
// way validation tools for MCU models report it (ST's stedgeai validate,
// TFLM's comparisons): largest absolute difference, cosine similarity, relative
// L2 error, and top-1 agreement over the samples of a batch.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Tensor.h"

#include <cstdint>
#include <string>

namespace bundlefit {

struct OutputComparison {
  double maxAbsDiff = 0;
  double maxAbsReference = 0;
  /// <out, ref> / (|out| |ref|) over all elements; 1 when both are zero.
  double cosine = 1;
  /// |out - ref| / |ref| over all elements; 0 when both are zero.
  double relativeL2 = 0;
  /// Samples whose arg-max (first on ties) agrees, of `samples`; only
  /// meaningful for outputs with more than one element per sample.
  uint64_t top1Agree = 0;
  uint64_t samples = 0;
  bool hasTop1 = false;
};

/// Compares `output` with `reference` (same element count), each holding
/// `samples` samples back to back.
OutputComparison compareOutputs(const Tensor &output, const Tensor &reference, uint64_t samples);

/// "1.2e-07", "0.999998", "3.4e-06", "8/8" columns of the --compare table.
std::string formatTop1(const OutputComparison &comparison);

} // namespace bundlefit
