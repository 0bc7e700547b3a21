//===- CompareQuantCommand.cpp - bundlefit compare-quant MODEL --load-profile P INPUTS ===//
//
// Prints, worst first, the signal-to-noise ratio of each int8 tensor against
// float on sample inputs, and each output's top-1 agreement. The comparison
// is the driver's (Compilation::compareQuant, driver/QuantComparison.h),
// shared with Python's bundlefit.compare_quant(); this formats it.
//
//===----------------------------------------------------------------------===//
#include "Command.h"
#include "QuantOptions.h"
#include "ReportSupport.h"

#include "bundlefit/driver/Compilation.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/support/Format.h"

#include <cmath>
#include <cstdio>
#include <iostream>

namespace bundlefit {

namespace {

struct CompareQuantOptions {
  ModelOptions model;
  QuantCliOptions quant;
  CalibrationCliOptions calibration;
  JsonReportOption json;
  HtmlReportOption html;
};

std::string formatDb(double db) {
  if (std::isinf(db))
    return db > 0 ? "exact" : "-inf";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", db);
  return text;
}

int runCompareQuant(const CompareQuantOptions &options) {
  options.json.checkFileWritable();
  options.html.checkFileWritable();
  driver::QuantComparison comparison;
  {
    SampleProgress progress("comparing");
    comparison = driver::Compilation(options.model, options.quant)
                     .compareQuant(
                         [&](const Graph &graph) {
                           return loadCalibrationSamples(graph, options.calibration);
                         },
                         progress.callback());
  }
  const size_t samples = comparison.samples;

  TextTable table({"tensor", "op", "int8 type", "SNR dB"}, {false, false, false, true});
  for (const driver::TensorError &row : comparison.tensors)
    table.addRow({row.name, row.op, row.type, formatDb(row.snrDb())});
  std::string heading = "int8 (" + options.quant.schema + ") vs float on " +
                        std::to_string(samples) + " sample" + (samples == 1 ? "" : "s") +
                        ", worst first";
  options.html.writeTable(options.model.path + ": int8 against float", {heading},
                          "Signal-to-noise ratio per tensor", table);
  if (options.json.wanted()) {
    options.json.emit(driver::quantComparisonJson(comparison, options.model.path,
                                                  options.quant.profilePath, options.quant.schema),
                      options.model.path);
    if (options.json.replacesText())
      return 0;
  }

  printText(heading + "\n\n" + table.render());
  for (const driver::OutputAgreement &output : comparison.outputs) {
    char line[64];
    std::snprintf(line, sizeof line, "%.1f%%",
                  samples == 0 ? 0.0 : 100.0 * double(output.agreeing) / double(samples));
    std::cout << "\noutput " << escapeInvalidUtf8(output.name) << ": top-1 agrees with float on "
              << line << " of samples";
  }
  std::cout << "\n";
  return 0;
}

} // namespace

void addCompareQuantCommand(CLI::App &app, CommandAction &action) {
  auto options = std::make_shared<CompareQuantOptions>();
  CLI::App *command = app.add_subcommand(
      "compare-quant", "Per-tensor SNR of the int8 model against float on sample inputs, worst "
                       "first (needs --load-profile)");
  addModelOptions(*command, options->model);
  addQuantOptions(*command, options->quant, /*requireProfile=*/true);
  addCalibrationOptions(*command, options->calibration);
  options->json.addTo(*command, "bundlefit.compare-quant/1");
  options->html.addTo(*command, "each tensor's SNR, worst first");
  command->callback(
      [options, &action] { action = [options] { return runCompareQuant(*options); }; });
}

} // namespace bundlefit
