//===- Calibration.cpp - Calibration samples and the profile they record ---===//
#include "bundlefit/driver/Calibration.h"

#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/quant/ImageInput.h"
#include "bundlefit/quant/UnfuseActivations.h"
#include "bundlefit/support/Error.h"

#include <cmath>
#include <cstdio>

namespace bundlefit {

std::vector<Tensor> loadCalibrationSamples(const Graph &graph,
                                           const CalibrationCliOptions &options) {
  if (graph.inputs().size() != 1)
    throw Error(ExitCode::Unsupported,
                "calibration inputs feed models with exactly one input; this model has " +
                    std::to_string(graph.inputs().size()));
  const Value &input = *graph.inputs()[0];
  if (input.type.dtype != DType::Float32)
    throw Error(ExitCode::Unsupported, "graph input '" + input.name + "' is " + input.type.str() +
                                           "; calibration needs a float32 input");
  ImageOptions image;
  parseImageMode(options.imageMode, image.mode);
  image.nhwc = options.imageLayout == "NHWC";
  image.bgr = options.channelOrder == "BGR";
  return loadAllSamples(options.inputs, input.type.shape, image);
}

namespace driver {

namespace {

std::string fileName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

ProfileData recordProfile(Graph &graph, const std::vector<Tensor> &samples,
                          const std::string &modelPath, const SampleDone &onSample) {
  const std::string &inputName = graph.inputs()[0]->name;
  // The ranges an int8 build needs where it runs a fused activation as a
  // table after its layer (quantizeGraph splits it off the same way).
  unfuseTableActivations(graph, [](const std::string &) { return true; });
  ProfileRecorder recorder;
  Interpreter interpreter(graph);
  size_t sampleIndex = 0;
  // A NaN or infinity has no range: a profile without the tensor (the
  // recorder skips such values) would quantize it with a made-up scale.
  auto checkFinite = [&](const std::string &name, const Tensor &tensor) {
    if (tensor.type.dtype != DType::Float32)
      return;
    const float *values = tensor.data<float>();
    for (int64_t i = 0; i < tensor.numElements(); ++i)
      if (!std::isfinite(values[i]))
        throw Error(ExitCode::BadInputFile,
                    modelPath + ": calibration sample " + std::to_string(sampleIndex + 1) + " of " +
                        std::to_string(samples.size()) + ": tensor '" + name + "' holds " +
                        (std::isnan(values[i]) ? "NaN" : "an infinity") + " at element " +
                        std::to_string(i) + "; a profile needs finite values (check the inputs)");
  };
  interpreter.setObserver([&](const Value &value, const Tensor &tensor) {
    checkFinite(value.name, tensor);
    recorder.observe(value.name, tensor);
  });
  for (const Tensor &sample : samples) {
    checkFinite(inputName, sample);
    interpreter.run({{inputName, sample}});
    ++sampleIndex;
    recorder.finishSample();
    if (onSample)
      onSample(sampleIndex, samples.size());
  }
  return recorder.result(hashModelFile(modelPath), fileName(modelPath));
}

nlohmann::json profileReportJson(const ProfileData &profile, const std::string &modelPath,
                                 const std::string &outputPath) {
  char hash[24];
  std::snprintf(hash, sizeof hash, "0x%016llx", (unsigned long long)profile.modelHash);
  nlohmann::json tensors = nlohmann::json::array();
  for (const TensorProfile &tensor : profile.tensors)
    tensors.push_back({{"name", tensor.name},
                       {"min", tensor.min},
                       {"max", tensor.max},
                       {"histogram", tensor.histogram}});
  return {{"schema", "bundlefit.profile/1"},
          {"model", modelPath},
          {"model_hash", hash},
          {"profile", outputPath.empty() ? nlohmann::json() : nlohmann::json(outputPath)},
          {"samples", profile.samples},
          {"tensors", tensors}};
}

} // namespace driver
} // namespace bundlefit
