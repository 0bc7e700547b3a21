//===- OutputComparison.cpp - How close a bundle's output is to the reference ===//
#include "bundlefit/driver/OutputComparison.h"

#include <algorithm>
#include <cmath>

namespace bundlefit {

OutputComparison compareOutputs(const Tensor &output, const Tensor &reference, uint64_t samples) {
  OutputComparison result;
  const int64_t count = std::min(output.numElements(), reference.numElements());
  double dot = 0, outSquares = 0, refSquares = 0, diffSquares = 0;
  for (int64_t i = 0; i < count; ++i) {
    const double out = output.at(i), ref = reference.at(i);
    result.maxAbsDiff = std::max(result.maxAbsDiff, std::fabs(out - ref));
    result.maxAbsReference = std::max(result.maxAbsReference, std::fabs(ref));
    dot += out * ref;
    outSquares += out * out;
    refSquares += ref * ref;
    diffSquares += (out - ref) * (out - ref);
  }
  if (outSquares > 0 && refSquares > 0)
    result.cosine = dot / std::sqrt(outSquares * refSquares);
  else if (outSquares != refSquares)
    result.cosine = 0; // one is all zeros, the other not
  if (refSquares > 0)
    result.relativeL2 = std::sqrt(diffSquares / refSquares);
  else if (diffSquares > 0)
    result.relativeL2 = INFINITY;

  result.samples = samples == 0 ? 1 : samples;
  const int64_t perSample = count / int64_t(result.samples);
  result.hasTop1 = perSample > 1 && perSample * int64_t(result.samples) == count;
  if (!result.hasTop1)
    return result;
  for (uint64_t n = 0; n < result.samples; ++n) {
    const int64_t first = int64_t(n) * perSample;
    int64_t outBest = first, refBest = first;
    for (int64_t i = first + 1; i < first + perSample; ++i) {
      if (output.at(i) > output.at(outBest))
        outBest = i;
      if (reference.at(i) > reference.at(refBest))
        refBest = i;
    }
    result.top1Agree += outBest == refBest;
  }
  return result;
}

std::string formatTop1(const OutputComparison &comparison) {
  if (!comparison.hasTop1)
    return "-";
  return std::to_string(comparison.top1Agree) + "/" + std::to_string(comparison.samples);
}

} // namespace bundlefit
