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

#include "bundlefit/interp/Tensor.h"
#include "bundlefit/quant/ImageInput.h"
#include "bundlefit/quant/Profile.h"
#include "bundlefit/quant/QuantizeGraph.h"

#include <memory>
#include <string>
#include <vector>

namespace bundlefit {

struct QuantCliOptions {
  std::string profilePath; ///< Empty: the model stays float.
  std::string schema = "asymmetric";
  std::string biasPrecision = "Int32";
  std::vector<std::string> keepOriginal; ///< Op kinds, Glow's or ONNX names.
  bool channelwise = false;

  bool enabled() const { return !profilePath.empty(); }
};

/// Adds the option group. `requireProfile`: --load-profile is mandatory.
void addQuantOptions(CLI::App &command, QuantCliOptions &options, bool requireProfile = false);

/// Validates the option values (Error(Usage) naming the option at fault).
QuantizationOptions resolveQuantOptions(const QuantCliOptions &options);

/// When --load-profile is given: loads the profile, checks it was recorded
/// for `modelPath`, and quantizes `graph` (a loadModel result) in place.
/// Prints one status line. Returns false (graph untouched) without a profile.
bool quantizeLoadedModel(Graph &graph, const std::string &modelPath,
                         const QuantCliOptions &options);

/// The model as `compile` would quantize it, for sizing int8 builds (`fit`,
/// `pick`): loaded, quantized with --load-profile when given, else with a
/// synthetic profile (every float tensor in [-1, 1]: the sizes depend on which
/// nodes become int8, the schema and the bias precision, not on the ranges).
/// Not yet through the --memory-opt transforms: footprintOfQuantized runs them
/// after CMSIS-NN preparation, as compile does (PlanOptions::memoryOpt).
std::unique_ptr<Graph> quantizedGraphForSizing(const ModelOptions &model,
                                               const QuantCliOptions &options);

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
std::vector<Tensor> loadCalibrationSamples(const Graph &graph, const CalibrationCliOptions &options);

/// Runs the float interpreter over `samples` (the graph's single input),
/// writes the profile YAML to `outputPath` and returns it (ProfileCommand.cpp;
/// also Glow's model-profiler and image-classifier front ends).
ProfileData recordProfileOf(const Graph &graph, const std::vector<Tensor> &samples,
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
