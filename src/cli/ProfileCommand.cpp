//===- ProfileCommand.cpp - bundlefit profile MODEL INPUTS... -o P ---------===//
//
// Runs the float reference interpreter over calibration samples and writes
// the per-tensor ranges as Glow's profile YAML (quant/Profile.h), the input
// of `compile --load-profile`. With --json, prints what it recorded
// (bundlefit.profile/1) instead of the one-line summary. Glow's
// model-profiler and image-classifier front ends (ModelProfilerMain.cpp)
// record through profileSamples too.
//
//===----------------------------------------------------------------------===//
#include "Command.h"
#include "QuantOptions.h"
#include "ReportSupport.h"

#include "bundlefit/driver/Compilation.h"
#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/quant/Profile.h"
#include "bundlefit/quant/UnfuseActivations.h"
#include "bundlefit/support/Error.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>

namespace bundlefit {

namespace {

struct ProfileCommandOptions {
  ModelOptions model;
  CalibrationCliOptions calibration;
  std::string outputPath;
  std::string schema; ///< Accepted as in Glow's doc; the profile holds ranges only.
  JsonReportOption json;
  HtmlReportOption html;
};

std::string fileName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

ProfileData recordProfileOf(Graph &graph, const std::vector<Tensor> &samples,
                            const std::string &modelPath, const std::string &outputPath) {
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
  {
    SampleProgress progress("profiling", samples.size());
    for (const Tensor &sample : samples) {
      checkFinite(inputName, sample);
      interpreter.run({{inputName, sample}});
      ++sampleIndex;
      recorder.finishSample();
      progress.advance();
    }
  }
  ProfileData profile = recorder.result(hashModelFile(modelPath), fileName(modelPath));
  writeFileAtomically(outputPath, renderProfile(profile));
  return profile;
}

namespace {

int runProfile(const ProfileCommandOptions &options) {
  if (!options.schema.empty()) {
    QuantCliOptions schemaOnly;
    schemaOnly.schema = options.schema;
    resolveQuantOptions(schemaOnly); // a misspelt schema fails here, as at compile
  }
  checkWritable(options.outputPath, "-o");
  options.json.checkFileWritable();
  options.html.checkFileWritable();
  std::unique_ptr<Graph> graph = driver::Compilation(options.model).loadGraph();
  std::vector<Tensor> samples = loadCalibrationSamples(*graph, options.calibration);
  ProfileData profile = recordProfileOf(*graph, samples, options.model.path, options.outputPath);
  std::string written = "profile of " + std::to_string(profile.tensors.size()) + " tensors over " +
                        std::to_string(samples.size()) + " sample" +
                        (samples.size() == 1 ? "" : "s") + " written to " + options.outputPath;
  if (options.html.wanted()) {
    TextTable ranges({"tensor", "min", "max"}, {false, true, true});
    for (const TensorProfile &tensor : profile.tensors)
      ranges.addRow({tensor.name, std::to_string(tensor.min), std::to_string(tensor.max)});
    options.html.writeTable(options.model.path + ": profile", {written}, "Value ranges", ranges);
  }
  if (options.json.wanted()) {
    char hash[24];
    std::snprintf(hash, sizeof hash, "0x%016llx", (unsigned long long)profile.modelHash);
    nlohmann::json tensors = nlohmann::json::array();
    for (const TensorProfile &tensor : profile.tensors)
      tensors.push_back({{"name", tensor.name},
                         {"min", tensor.min},
                         {"max", tensor.max},
                         {"histogram", tensor.histogram}});
    options.json.emit({{"schema", "bundlefit.profile/1"},
                       {"model", options.model.path},
                       {"model_hash", hash},
                       {"profile", options.outputPath},
                       {"samples", profile.samples},
                       {"tensors", tensors}},
                      options.model.path);
    if (options.json.replacesText())
      return 0;
  }
  printText(written + "\n");
  return 0;
}

} // namespace

void addProfileCommand(CLI::App &app, CommandAction &action) {
  auto options = std::make_shared<ProfileCommandOptions>();
  CLI::App *command = app.add_subcommand(
      "profile", "Record per-tensor value ranges on calibration inputs (Glow's profile YAML), "
                 "for compile --load-profile");
  addModelOptions(*command, options->model);
  addCalibrationOptions(*command, options->calibration);
  command->add_option("-o,--output", options->outputPath, "Profile file to write (YAML)")
      ->required();
  command->add_option("--quantization-schema", options->schema,
                      "Accepted as Glow's doc passes it while profiling: the profile holds "
                      "ranges only; give the schema to compile");
  options->json.addTo(*command, "bundlefit.profile/1, the recorded ranges");
  options->html.addTo(*command, "each tensor's recorded range");
  command->callback([options, &action] { action = [options] { return runProfile(*options); }; });
}

} // namespace bundlefit
