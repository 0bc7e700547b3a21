//===- PickCommand.cpp - bundlefit pick MODEL --device PART ----------------===//
//
// Every build the part supports (float / int8 x portable / CMSIS-NN / HiFi4) x
// weights in Flash or RAM, with Flash, RAM, fit and predicted time; the fastest
// build that fits is marked, with the reason.
//
//===----------------------------------------------------------------------===//
#include "Command.h"
#include "Progress.h"
#include "QuantOptions.h"
#include "ReportSupport.h"

#include "bundlefit/device/Fit.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/reports/DeviceReports.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/support/Error.h"

#include <cstdio>
#include <iostream>

namespace bundlefit {

namespace {

using namespace bundlefit::device;

struct PickOptions {
  ModelOptions model;
  std::string device;
  std::vector<std::string> deviceFiles;
  uint64_t staticBytes = 0;
  JsonReportOption json;
  std::string htmlPath;
  QuantCliOptions quant; ///< Sizes the int8 rows (QuantOptions.h).
};

/// The page shows the comparison, then the chosen build (or the first
/// candidate when none fits): its Flash/RAM bars and per-layer times over
/// the float plan's timeline.
void writePickHtml(const std::string &path, const PickOptions &options, const Device &device,
                   const Graph &graph, const PickResult &pick, const std::vector<std::string> &notes) {
  MemoryPlan plan;
  {
    Stage stage("plan memory");
    PlanOptions planOptions;
    planOptions.memoryOpt = options.model.memoryOpt;
    plan = planGraphMemory(graph, planOptions);
  }
  HtmlReport html;
  html.title = options.model.path + " on " + device.id + ": build variants";
  html.summary = {device.name};
  html.variants = variantRowsOf(pick);
  html.pickReason = pick.reason;
  html.plan = &plan;
  LayerTiming timing;
  if (!pick.candidates.empty()) {
    const Candidate &shown = pick.candidates[pick.best >= 0 ? size_t(pick.best) : 0];
    timing = layerTimingOf(device, shown.result);
    html.timing = &timing;
    html.regionsTitle = device.id + ": Flash and RAM of " +
                        (pick.best >= 0 ? std::string("the chosen build, ") : std::string()) +
                        shown.variant.name + ", weights " + weightsPolicyName(shown.weights);
    html.regions = regionBarsOf(shown.result);
    html.verdict = shown.result.fits ? "FITS" : "DOES NOT FIT";
  }
  html.notes = notes;
  writeHtmlReport(path, html);
}

int runPick(const PickOptions &options) {
  DeviceDatabase db = DeviceDatabase::loadDefault();
  for (const std::string &file : options.deviceFiles)
    db.addFile(file);
  const Device &device = db.get(options.device);
  std::unique_ptr<Graph> graph = loadModel(options.model);
  applyMemoryOptPasses(*graph, options.model);
  PlanOptions planOptions; // Every build is planned at the model's --memory-opt.
  planOptions.memoryOpt = options.model.memoryOpt;
  planOptions.patchRecomputeBudget = options.model.patchRecomputeBudget;
  std::unique_ptr<Graph> int8Graph;
  {
    Stage stage("quantize for int8 sizes");
    int8Graph = quantizedGraphForSizing(options.model, options.quant);
  }
  FitRequest request;
  request.extraStaticBytes = options.staticBytes;
  PickResult pick;
  {
    Stage stage("compare builds on " + device.id);
    pick = pickBuild(device, *graph, request, planOptions, int8Graph.get());
  }
  bool anyHifi = false, anyInt8 = false;
  for (const Candidate &c : pick.candidates) {
    anyHifi = anyHifi || c.variant.kernels == Kernels::HiFi4 || c.variant.kernels == Kernels::HiFi4WithCmsis;
    anyInt8 = anyInt8 || c.variant.precision == Precision::Int8;
  }
  std::vector<std::string> notes;
  if (anyHifi)
    notes.push_back("HiFi4: DSP code generation is not produced; HiFi4 rows are planning and cost "
                    "estimates (NNLib footprint 676 KB Flash + 676 KB RAM, scratch, throughput)");
  if (anyInt8)
    notes.push_back(std::string("int8 sizes are the memory plan of the model quantized ") +
                    (options.quant.enabled() ? "with " + options.quant.profilePath
                                             : std::string("as compile would (a synthetic profile: "
                                                           "sizes do not depend on the ranges)")) +
                    "; code sizes are the device file's per-library figures (AN13001)");

  if (!options.htmlPath.empty())
    writePickHtml(options.htmlPath, options, device, *graph, pick, notes);
  if (options.json.wanted()) {
    nlohmann::json rows = nlohmann::json::array();
    for (const Candidate &c : pick.candidates)
      rows.push_back({{"variant", c.variant.name}, {"weights", weightsPolicyName(c.weights)},
                      {"flash", c.result.totals.flash}, {"ram", c.result.totals.ram},
                      {"fits", c.result.fits}, {"predicted_ms", c.result.time.ms},
                      {"best", c.best}, {"problems", c.result.problems}});
    options.json.emit({{"schema", "bundlefit.pick/1"}, {"model", options.model.path},
                       {"device", device.id}, {"candidates", rows},
                       {"best", pick.best >= 0 ? nlohmann::json(pick.best) : nlohmann::json()},
                       {"reason", pick.reason}, {"notes", notes}},
                      options.model.path);
    if (options.json.replacesText())
      return pick.best >= 0 ? 0 : int(ExitCode::DoesNotFit);
  }
  std::cout << options.model.path << " on " << device.id << " (" << device.name << ")\n\n";
  TextTable table({"", "variant", "weights", "Flash", "RAM", "fits", "predicted"},
                  {false, false, false, true, true, false, true});
  for (const Candidate &c : pick.candidates) {
    char time[32];
    std::snprintf(time, sizeof time, "%.2f ms", c.result.time.ms);
    table.addRow({c.best ? "*" : "", c.variant.name, weightsPolicyName(c.weights),
                  withThousands(c.result.totals.flash), withThousands(c.result.totals.ram),
                  c.result.fits ? "yes" : "no", time});
  }
  std::cout << table.render() << "\n" << (pick.best >= 0 ? "* " : "") << pick.reason << "\n";
  for (const std::string &note : notes)
    std::cout << "note: " << note << "\n";
  return pick.best >= 0 ? 0 : int(ExitCode::DoesNotFit);
}

} // namespace

void addPickCommand(CLI::App &app, CommandAction &action) {
  auto options = std::make_shared<PickOptions>();
  CLI::App *command = app.add_subcommand(
      "pick", "Compare float/int8 x plain/CMSIS-NN/HiFi4 x weights Flash/RAM on a part and pick the best that fits");
  addModelOptions(*command, options->model);
  command->add_option("--device", options->device, "Part or board id (bundlefit devices)")->required();
  command->add_option("--device-file", options->deviceFiles,
                      "Add a part from a JSON file (repeatable)");
  command->add_option("--static-bytes", options->staticBytes,
                      "Initialized application data to count in Flash and RAM");
  options->json.addTo(*command, "bundlefit.pick/1");
  command->add_option("--html", options->htmlPath,
                      "Also write a self-contained HTML report (variant comparison, bars, timeline) to FILE");
  addQuantOptions(*command, options->quant);
  command->callback([options, &action] { action = [options] { return runPick(*options); }; });
}

} // namespace bundlefit
