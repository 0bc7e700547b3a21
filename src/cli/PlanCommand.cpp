//===- PlanCommand.cpp - bundlefit plan MODEL [--json FILE] ----------------===//
//
// Plans memory without generating code: the quickest answer to "how much
// Flash and RAM does this model need".
//
//===----------------------------------------------------------------------===//
#include "Command.h"
#include "OptionChecks.h"
#include "Progress.h"
#include "QuantOptions.h"
#include "ReportSupport.h"

#include "bundlefit/ir/Graph.h"
#include "bundlefit/reports/MemoryReport.h"
#include "bundlefit/reports/PatchStageReport.h"
#include "bundlefit/reports/PeakLayers.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/schedule/MemoryPlan.h"
#include "bundlefit/support/Names.h"

#include <iostream>

namespace bundlefit {

namespace {

struct PlanCommandOptions {
  driver::CompilationOptions compilation; ///< The model, int8, time limit, capacity, in-place.
  JsonReportOption json;
  HtmlReportOption html;
  std::string device;
  std::vector<std::string> deviceFiles;
  std::string networkName;
  bool noInPlace = false;
};

int runPlan(const PlanCommandOptions &options) {
  options.json.checkFileWritable();
  options.html.checkFileWritable();
  const ModelOptions &model = options.compilation.model;
  std::string network = options.networkName.empty() ? networkNameFromPath(model.path)
                                                    : legalizeName(options.networkName);
  driver::CompilationOptions compilationOptions = options.compilation;
  compilationOptions.allowInPlace = !options.noInPlace;
  driver::Compilation compilation(std::move(compilationOptions));
  const PlannedModel &planned = compilation.plan();
  const std::unique_ptr<Graph> &graph = planned.graph;
  const MemoryPlan &plan = planned.plan;
  std::unique_ptr<DeviceFitReport> onDevice;
  if (!options.device.empty())
    onDevice = fitForReport(compilation, options.device, options.deviceFiles);
  const LayerTiming *timing = onDevice ? &onDevice->timing : nullptr;
  if (options.html.wanted()) {
    HtmlReport html;
    html.title = network + ": memory plan";
    html.summary = {model.path + ": CONSTANT " + withThousands(plan.constantSize) + ", MUTABLE " +
                    withThousands(plan.mutableSize) + ", ACTIVATIONS " +
                    withThousands(plan.activationsSize)};
    html.plan = &plan;
    if (onDevice) {
      html.timing = timing;
      addDeviceToHtml(*onDevice, html);
    }
    options.html.write(html);
  }

  if (options.json.wanted()) {
    options.json.emit(memoryReportJson(*graph, plan, network, timing), model.path);
    if (options.json.replacesText())
      return 0;
  }
  if (verbosity() == Verbosity::Quiet) { // -q: the summary line alone
    std::string line = network + ": CONSTANT " + withThousands(plan.constantSize) + ", MUTABLE " +
                       withThousands(plan.mutableSize) + ", ACTIVATIONS " +
                       withThousands(plan.activationsSize) + " (lower bound " +
                       withThousands(plan.activationsLowerBound) + ")";
    if (onDevice)
      line += "; on " + onDevice->device->id + ": Flash " +
              withThousands(onDevice->fit.totals.flash) + " of " +
              withThousands(onDevice->fit.flashCapacity) + ", RAM " +
              withThousands(onDevice->fit.totals.ram) + " of " +
              withThousands(onDevice->fit.ramCapacity);
    std::cout << line << "\n";
    return 0;
  }
  std::string text = memoryReportText(*graph, plan, network, timing);
  if (onDevice) {
    const device::ModelFootprint &fp = onDevice->footprint;
    const device::FitResult &fit = onDevice->fit;
    text += "\nbuild on " + onDevice->device->id + " (" + fit.variant.name + "): CONSTANT " +
            withThousands(fp.constantBytes) + ", MUTABLE " + withThousands(fp.mutableBytes) +
            ", ACTIVATIONS " + withThousands(fp.activationsBytes) + ", code " +
            withThousands(fit.terms.code) + " (" + onDevice->code + ")\n" + "Flash " +
            withThousands(fit.totals.flash) + " of " + withThousands(fit.flashCapacity) + ", RAM " +
            withThousands(fit.totals.ram) + " of " + withThousands(fit.ramCapacity) + " (" +
            fit.baselineSource + ")\n" + "predicted inference time on " + onDevice->device->id +
            " (" + fit.variant.name + ", weights " + device::weightsPolicyName(fit.weights) +
            "): " + formatMs(fit.time.ms) + "\n";
  }
  printText(text);
  if (verbosity() == Verbosity::Verbose) { // What keeps the arena where it is.
    for (const PeakLayer &layer : explainPeakLayers(plan, model.memoryOpt))
      status(peakLayerLine(layer));
    const std::vector<PatchStageSummary> stages = summarizePatchStages(plan);
    for (const PatchStageSummary &stage : stages) // And what tiles cost.
      status(patchStageLine(stage));
    if (!stages.empty())
      status(patchBudgetLine(stages, model.patchRecomputeBudget));
  }
  return 0;
}

} // namespace

void addPlanCommand(CLI::App &app, CommandAction &action) {
  auto options = std::make_shared<PlanCommandOptions>();
  CLI::App *command = app.add_subcommand(
      "plan", "Plan constant, mutable and activation memory and print the report");
  addModelOptions(*command, options->compilation.model);
  addQuantOptions(*command, options->compilation.quant);
  options->json.addTo(*command, "bundlefit.memory/1");
  options->html.addTo(*command, "memory timeline, layers");
  command->add_option(
      "--device", options->device,
      "Add the predicted time per layer and Flash/RAM use on this part (bundlefit devices)");
  command->add_option("--device-file", options->deviceFiles,
                      "Add a part from a JSON file (repeatable)");
  command->add_option("--network-name", options->networkName,
                      "Network name (default: model file name)");
  command
      ->add_option("--time-limit", options->compilation.timeLimitSeconds,
                   "Seconds the command may spend before its memory plan is done: loading, "
                   "ordering and planning (default 5; the planner's work is counted, " +
                       workUnitsPerSecondText() +
                       " units a second, so its plan does not depend on the load)")
      ->check(secondsCheck());
  command
      ->add_option("--arena-capacity", options->compilation.arenaCapacity,
                   "Bytes the activation arena must fit in: a plan within it first, then lower")
      ->check(byteCountCheck());
  command->add_flag("--no-in-place", options->noInPlace,
                    "Never let an elementwise result overwrite its input");
  command->callback([options, &action] { action = [options] { return runPlan(*options); }; });
}

} // namespace bundlefit
