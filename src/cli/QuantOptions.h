//===- QuantOptions.h - The int8 option group shared by commands -----------===//
//
// `compile`, `run`, `plan`, `fit`, `pick` and `compare-quant` take the same options
// (Glow's names with two dashes; model-compiler maps Glow's own spellings):
//   --load-profile P  --quantization-schema S  --quantization-precision-bias B
//   --keep-original-precision-for-nodes K1,K2  --channelwise
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Command.h"

#include "bundlefit/driver/Calibration.h"
#include "bundlefit/driver/Pipeline.h"
#include "bundlefit/ir/Tensor.h"
#include "bundlefit/quant/ImageInput.h"
#include "bundlefit/quant/Profile.h"
#include "bundlefit/quant/QuantizeGraph.h"

#include <memory>
#include <string>
#include <vector>

namespace bundlefit {

/// Adds the option group. `requireProfile`: --load-profile is mandatory.
void addQuantOptions(CLI::App &command, QuantCliOptions &options, bool requireProfile = false);

/// INPUTS and the image options of `profile` and `compare-quant`
/// (driver/Calibration.h reads them).
void addCalibrationOptions(CLI::App &command, CalibrationCliOptions &options);

/// "profiling [#####.....] 120/200" on one self-erasing stderr line, when
/// progress output is enabled (a terminal, not --quiet; Progress.h). The
/// driver reports each sample through callback(); the line is erased when
/// this goes out of scope.
class SampleProgress {
public:
  explicit SampleProgress(std::string label);
  ~SampleProgress();
  /// `done` of `total` samples were run.
  void advance(size_t done, size_t total);
  driver::SampleDone callback() {
    return [this](size_t done, size_t total) { advance(done, total); };
  }

private:
  std::string label_;
  size_t done_ = 0;
  bool enabled_;
};

} // namespace bundlefit
