//===- Calibration.h - Calibration samples and the profile they record -----===//
//
// `bundlefit profile`, Glow's model-profiler and image-classifier, and
// Python's bundlefit.profile() run the float reference interpreter over
// calibration samples and record each tensor's range (quant/Profile.h), the
// input of --load-profile. compare-quant (QuantComparison.h) reads the same
// samples. Driven through driver::Compilation::profile.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Tensor.h"
#include "bundlefit/quant/Profile.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

namespace bundlefit {

class Graph;

/// INPUTS and the image options of `profile` and `compare-quant`.
struct CalibrationCliOptions {
  std::vector<std::string> inputs;
  std::string imageMode = "0to1";
  std::string imageLayout = "NCHW";
  std::string channelOrder = "RGB";
};

/// The samples for the graph's single float input. Error(Unsupported) for a
/// model with several inputs or a non-float input; Error(BadInputFile) for
/// unusable files.
std::vector<Tensor> loadCalibrationSamples(const Graph &graph,
                                           const CalibrationCliOptions &options);

namespace driver {

/// Reads the samples for the loaded model (its single input): the front
/// end's files, read once the model is loaded so that their shape is known.
using SampleLoader = std::function<std::vector<Tensor>(const Graph &model)>;
/// Told after each sample (`done` of `total`): the front end draws progress,
/// the driver prints nothing.
using SampleDone = std::function<void(size_t done, size_t total)>;

/// Runs the float interpreter over `samples` (the graph's single input) and
/// returns the ranges. First splits table activations off their layers
/// (unfuseTableActivations), as quantizeGraph does. A NaN or infinity is an
/// Error(BadInputFile) naming `modelPath`, the sample and the tensor.
ProfileData recordProfile(Graph &graph, const std::vector<Tensor> &samples,
                          const std::string &modelPath, const SampleDone &onSample);

/// bundlefit.profile/1 (`profile --json`, bundlefit.profile()), before the
/// tool stamp (ToolInfo.h: stampReport). `outputPath`: the YAML written,
/// null when none was.
nlohmann::json profileReportJson(const ProfileData &profile, const std::string &modelPath,
                                 const std::string &outputPath);

} // namespace driver
} // namespace bundlefit
