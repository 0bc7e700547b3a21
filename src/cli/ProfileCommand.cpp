//===- ProfileCommand.cpp - bundlefit profile MODEL INPUTS... -o P ---------===//
//
// Runs the float reference interpreter over calibration samples and writes
// the per-tensor ranges as Glow's profile YAML (quant/Profile.h), the input
// of `compile --load-profile`. With --json, prints what it recorded
// (bundlefit.profile/1) instead of the one-line summary. The recording is
// the driver's (Compilation::profile, driver/Calibration.h), shared with
// Glow's model-profiler and image-classifier (ModelProfilerMain.cpp) and
// Python's bundlefit.profile().
//
//===----------------------------------------------------------------------===//
#include "Command.h"
#include "QuantOptions.h"
#include "ReportSupport.h"

#include "bundlefit/driver/Compilation.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/quant/Profile.h"

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

int runProfile(const ProfileCommandOptions &options) {
  if (!options.schema.empty()) {
    QuantCliOptions schemaOnly;
    schemaOnly.schema = options.schema;
    resolveQuantOptions(schemaOnly); // a misspelt schema fails here, as at compile
  }
  checkWritable(options.outputPath, "-o");
  options.json.checkFileWritable();
  options.html.checkFileWritable();
  ProfileData profile;
  {
    SampleProgress progress("profiling");
    profile = driver::Compilation(options.model)
                  .profile(
                      [&](const Graph &graph) {
                        return loadCalibrationSamples(graph, options.calibration);
                      },
                      options.outputPath, progress.callback());
  }
  std::string written = "profile of " + std::to_string(profile.tensors.size()) + " tensors over " +
                        std::to_string(profile.samples) + " sample" +
                        (profile.samples == 1 ? "" : "s") + " written to " + options.outputPath;
  if (options.html.wanted()) {
    TextTable ranges({"tensor", "min", "max"}, {false, true, true});
    for (const TensorProfile &tensor : profile.tensors)
      ranges.addRow({tensor.name, std::to_string(tensor.min), std::to_string(tensor.max)});
    options.html.writeTable(options.model.path + ": profile", {written}, "Value ranges", ranges);
  }
  if (options.json.wanted()) {
    options.json.emit(driver::profileReportJson(profile, options.model.path, options.outputPath),
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
