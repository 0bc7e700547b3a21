//===- RunCommand.cpp - bundlefit run MODEL --input a.npy --output-dir D ----===//
//
// The command line of driver::Compilation::run (bundlefit/driver/ModelRun.h, shared
// with the Python module's run()): compiles the bundle, links it into a
// small driver (host) or firmware (Cortex-M under QEMU), runs it and writes
// each output as .npy. With --compare, also runs the reference interpreter
// and prints the difference. An input file holding N samples stacked along
// the first dimension runs as a batch. With --load-profile the bundle is
// int8 (QuantOptions.h).
//
//===----------------------------------------------------------------------===//
#include "BundleCompilation.h"
#include "OptionChecks.h"
#include "ReportSupport.h"

#include "bundlefit/bundle/BundleRunner.h"
#include "bundlefit/driver/Compilation.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/support/OptionChecks.h"
#include "bundlefit/support/OutputFile.h"

#include <cstdio>

namespace bundlefit {

namespace {

struct RunOptions {
  driver::CompilationOptions compilation; ///< The model, target and int8 options.
  driver::RunQuery run;                   ///< --compare, --timeout.
  std::vector<std::string> inputs;
  std::string outputDir;
  JsonReportOption json;
  HtmlReportOption html;
};

int runRun(const RunOptions &options) {
  // The inputs are readable .npy and the outputs can be written: checked
  // before the (long) compile, not after it.
  std::vector<driver::RunInput> inputs;
  for (const std::string &path : options.inputs)
    inputs.push_back(driver::npyFileInput(path));
  checkDirectoryCreatable(options.outputDir, "output directory");
  options.json.checkFileWritable();
  options.html.checkFileWritable();

  const driver::Compilation compilation(options.compilation);
  driver::ModelRun run = compilation.run(inputs, options.run);
  std::vector<std::string> files = driver::writeRunOutputs(run, options.outputDir);

  std::vector<std::string> columns = {"output", "type", "file"};
  if (options.run.compare) // vs the reference interpreter
    columns.insert(columns.end(), {"max |diff|", "cosine", "rel. L2", "top-1"});
  TextTable table(columns, {false, false, false, true, true, true, true});
  table.setDropOrder({2}); // the files are in --output-dir, named after the outputs
  for (size_t i = 0; i < run.outputs.size(); ++i) {
    const driver::RunOutput &output = run.outputs[i];
    std::vector<std::string> row = {output.name, output.tensor.type.str(), files[i]};
    if (const std::optional<OutputComparison> &c = output.comparison) {
      char diff[32], cosine[32], l2[32];
      std::snprintf(diff, sizeof diff, "%.3g", c->maxAbsDiff);
      std::snprintf(cosine, sizeof cosine, "%.6f", c->cosine);
      std::snprintf(l2, sizeof l2, "%.3g", c->relativeL2);
      row.insert(row.end(), {diff, cosine, l2, formatTop1(*c)});
    }
    table.addRow(row);
  }
  const std::string &model = compilation.options().model.path;
  std::string ran = "ran " + run.networkName + " on " + run.target +
                    (run.samples > 1 ? " over " + std::to_string(run.samples) + " samples" : "") +
                    " (build " + std::to_string(run.stats.buildSeconds).substr(0, 4) + " s, run " +
                    std::to_string(run.stats.runSeconds).substr(0, 5) + " s)";
  options.html.writeTable(model + ": run", {ran}, "Outputs", table);
  if (options.json.wanted()) {
    options.json.emit(driver::runReportJson(run, files), model);
    if (options.json.replacesText())
      return 0;
  }
  printText(ran + "\n\n" + table.render());
  return 0;
}

} // namespace

void addRunCommand(CLI::App &app, CommandAction &action) {
  auto options = std::make_shared<RunOptions>();
  CLI::App *command = app.add_subcommand(
      "run",
      "Compile, link and run a bundle on the host or a Cortex-M under QEMU; write .npy outputs");
  addModelOptions(*command, options->compilation.model);
  command
      ->add_option("--input", options->inputs,
                   "Input .npy, one per model input in order; N samples stacked along the "
                   "first dimension run as a batch (one build, one QEMU boot)")
      ->required();
  command->add_option("--output-dir", options->outputDir, "Directory for the output .npy files")
      ->required();
  command
      ->add_option(
          "--target", options->compilation.codegen.target,
          "host | cortex-m7 (mps2-an500) | cortex-m33 (mps2-an505) | cortex-m4 (mps2-an386) | "
          "cortex-m55 (mps3-an547)")
      ->check(CLI::IsMember(supportedRunTargets()));
  command->add_option("--opt", options->compilation.codegen.optLevel, "O2 | O3 | Os")
      ->check(CLI::IsMember({"O2", "O3", "Os"}));
  command->add_option("--network-name", options->compilation.codegen.networkName, "Bundle name");
  addQuantOptions(*command, options->compilation.quant);
  command->add_flag("--use-cmsis", options->compilation.codegen.useCmsis,
                    "int8: call CMSIS-NN's s8 functions, linked from --cmsis-nn");
  command->add_option("--cmsis-nn", options->compilation.codegen.cmsisNnDir,
                      "CMSIS-NN source checkout (built per core, cached in ~/.cache/bundlefit) "
                      "or a directory holding libcmsis-nn.a; default $BUNDLEFIT_CMSIS_NN_DIR");
  command->add_flag("--compare", options->run.compare,
                    "Also run the reference interpreter: max |diff|, cosine similarity, relative "
                    "L2 error, top-1 agreement over the batch");
  command
      ->add_option("--timeout", options->run.timeoutSeconds,
                   "Seconds the program may run (default 300)")
      ->check(finiteCheck(0.001, kMaxSeconds));
  options->json.addTo(*command, "bundlefit.run/1");
  options->html.addTo(*command, "the outputs, and how they compare with --compare");
  command->callback([options, &action] { action = [options] { return runRun(*options); }; });
}

} // namespace bundlefit
