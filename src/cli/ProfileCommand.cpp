//===- ProfileCommand.cpp - bundlefit profile MODEL INPUTS... -o P ---------===//
//
// Runs the float reference interpreter over calibration samples and writes
// the per-tensor ranges as Glow's profile YAML (quant/Profile.h), the input
// of `compile --load-profile`. With --json, prints what it recorded
// (bundlefit.profile/1) instead of the one-line summary.
//
//===----------------------------------------------------------------------===//
#include "Command.h"
#include "QuantOptions.h"

#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/quant/Profile.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <iostream>

namespace bundlefit {

namespace {

struct ProfileCommandOptions {
  ModelOptions model;
  CalibrationCliOptions calibration;
  std::string outputPath;
  bool json = false;
};

std::string fileName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int runProfile(const ProfileCommandOptions &options) {
  std::unique_ptr<Graph> graph = loadModel(options.model);
  std::vector<Tensor> samples = loadCalibrationSamples(*graph, options.calibration);
  const std::string &inputName = graph->inputs()[0]->name;

  ProfileRecorder recorder;
  Interpreter interpreter(*graph);
  interpreter.setObserver(
      [&](const Value &value, const Tensor &tensor) { recorder.observe(value.name, tensor); });
  {
    SampleProgress progress("profiling", samples.size());
    for (const Tensor &sample : samples) {
      interpreter.run({{inputName, sample}});
      recorder.finishSample();
      progress.advance();
    }
  }
  ProfileData profile =
      recorder.result(hashModelFile(options.model.path), fileName(options.model.path));
  writeFileAtomically(options.outputPath, renderProfile(profile));
  if (options.json) {
    char hash[24];
    std::snprintf(hash, sizeof hash, "0x%016llx", (unsigned long long)profile.modelHash);
    nlohmann::json tensors = nlohmann::json::array();
    for (const TensorProfile &tensor : profile.tensors)
      tensors.push_back({{"name", tensor.name},
                         {"min", tensor.min},
                         {"max", tensor.max},
                         {"histogram", tensor.histogram}});
    std::cout << nlohmann::json{{"schema", "bundlefit.profile/1"},
                                {"model", options.model.path},
                                {"model_hash", hash},
                                {"profile", options.outputPath},
                                {"samples", profile.samples},
                                {"tensors", tensors}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << "profile of " << profile.tensors.size() << " tensors over " << samples.size()
            << " sample" << (samples.size() == 1 ? "" : "s") << " written to "
            << options.outputPath << "\n";
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
  command->add_flag("--json", options->json,
                    "Print the recorded ranges as JSON (bundlefit.profile/1) instead of the summary");
  command->callback([options, &action] { action = [options] { return runProfile(*options); }; });
}

} // namespace bundlefit
