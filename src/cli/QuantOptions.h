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

/// INPUTS and the image options of `profile` and `compare-quant`.
struct CalibrationCliOptions {
  std::vector<std::string> inputs;
  std::string imageMode = "0to1";
  std::string imageLayout = "NCHW";
  std::string channelOrder = "RGB";
};

void addCalibrationOptions(CLI::App &command, CalibrationCliOptions &options);

/// The samples for the graph's single float input. Error(Unsupported) for a
/// model with several inputs or a non-float input; Error(BadInputFile) for
/// unusable files.
std::vector<Tensor> loadCalibrationSamples(const Graph &graph,
                                           const CalibrationCliOptions &options);

/// Runs the float interpreter over `samples` (the graph's single input),
/// writes the profile YAML to `outputPath` and returns it (ProfileCommand.cpp;
/// first splits table activations off their layers: unfuseTableActivations;
/// also Glow's model-profiler and image-classifier front ends).
ProfileData recordProfileOf(Graph &graph, const std::vector<Tensor> &samples,
                            const std::string &modelPath, const std::string &outputPath);

/// "profiling [#####.....] 120/200" on one self-erasing stderr line, when
/// progress output is enabled (a terminal, not --quiet; Progress.h).
class SampleProgress {
public:
  SampleProgress(std::string label, size_t total);
  ~SampleProgress();
  void advance();

private:
  std::string label_;
  size_t total_, done_ = 0;
  bool enabled_;
};

} // namespace bundlefit
