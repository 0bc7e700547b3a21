//===- PlanCommand.cpp - bundlefit plan MODEL [--json FILE] ----------------===//
//
// Plans memory without generating code: the quickest answer to "how much
// Flash and RAM does this model need".
//
//===----------------------------------------------------------------------===//
#include "Command.h"

#include "bundlefit/ir/Graph.h"
#include "bundlefit/reports/MemoryReport.h"
#include "bundlefit/schedule/MemoryPlan.h"
#include "bundlefit/support/Names.h"

#include <iostream>

namespace bundlefit {

namespace {

struct PlanCommandOptions {
  ModelOptions model;
  std::string jsonPath;
  std::string networkName;
  double timeLimit = 5.0;
  bool keepModelOrder = false;
  bool noInPlace = false;
};

int runPlan(const PlanCommandOptions &options) {
  std::unique_ptr<Graph> graph = loadModel(options.model);
  std::string network = options.networkName.empty() ? networkNameFromPath(options.model.path)
                                                     : legalizeName(options.networkName);
  PlanOptions planOptions;
  planOptions.exactTimeBudgetSeconds = options.timeLimit;
  planOptions.reorderForMemory = !options.keepModelOrder;
  planOptions.allowInPlace = !options.noInPlace;
  MemoryPlan plan = planGraphMemory(*graph, planOptions);

  if (options.jsonPath == "-") {
    std::cout << memoryReportJson(*graph, plan, network).dump(2) << "\n";
    return 0;
  }
  if (!options.jsonPath.empty())
    writeFileAtomically(options.jsonPath, memoryReportJson(*graph, plan, network).dump(2) + "\n");
  std::cout << memoryReportText(*graph, plan, network);
  return 0;
}

} // namespace

void addPlanCommand(CLI::App &app, CommandAction &action) {
  auto options = std::make_shared<PlanCommandOptions>();
  CLI::App *command = app.add_subcommand(
      "plan", "Plan constant, mutable and activation memory and print the report");
  addModelOptions(*command, options->model);
  command->add_option("--json", options->jsonPath,
                      "Also write the JSON memory report (bundlefit.memory/1) to FILE ('-': stdout only)");
  command->add_option("--network-name", options->networkName, "Network name (default: model file name)");
  command->add_option("--time-limit", options->timeLimit,
                      "Seconds the exact allocator may search (default 5)")
      ->check(CLI::NonNegativeNumber);
  command->add_flag("--keep-model-order", options->keepModelOrder,
                    "Run nodes in the model's order instead of a memory-aware order");
  command->add_flag("--no-in-place", options->noInPlace,
                    "Never let an elementwise result overwrite its input");
  command->callback([options, &action] { action = [options] { return runPlan(*options); }; });
}

} // namespace bundlefit
