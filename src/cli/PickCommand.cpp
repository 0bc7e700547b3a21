//===- PickCommand.cpp - bundlefit pick MODEL --device PART ----------------===//
//
// Every build the part supports (float / int8 x portable / CMSIS-NN / HiFi4) x
// weights in Flash or RAM, each compiled for the part's core by the driver
// (bundlefit/driver/VariantBuild.h), with Flash, RAM, code, fit, predicted
// time, whether bundlefit builds it and what is estimated; the best buildable
// build that fits for --goal is marked, with why against every other family.
//
//===----------------------------------------------------------------------===//
#include "Command.h"
#include "FitReportSupport.h"
#include "Progress.h"
#include "QuantOptions.h"
#include "ReportSupport.h"

#include "bundlefit/device/Fit.h"
#include "bundlefit/driver/FitCheck.h"
#include "bundlefit/driver/VariantBuild.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/reports/DeviceReports.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/support/Error.h"

#include <cstdio>
#include <iostream>
#include <set>

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
  std::vector<std::string> variants; ///< --variants: empty, every variant of the part.
  std::string goal = "latency";
  bool allowEstimates = false;
  QuantCliOptions quant; ///< Sizes the int8 rows (QuantOptions.h).
  HeadroomOptions headroom;
};

/// The page shows the comparison, then the chosen build (or the first
/// candidate when none fits): its Flash/RAM bars and per-layer times over
/// that build's own memory plan.
void writePickHtml(const std::string &path, const PickOptions &options, const Device &device,
                   driver::BuildSizer &sizer, const PickResult &pick,
                   const std::vector<std::string> &notes) {
  HtmlReport html;
  html.title = options.model.path + " on " + device.id + ": build variants";
  html.summary = {device.name};
  html.variants = variantRowsOf(pick);
  html.pickReason = pick.reason;
  LayerTiming timing;
  std::shared_ptr<const CompiledBundle> shownBundle;
  if (!pick.candidates.empty()) {
    const Candidate &shown = pick.candidates[pick.best >= 0 ? size_t(pick.best) : 0];
    const driver::VariantBuild *build = &sizer.build(device, shown.variant);
    if (!build->bundle) // HiFi4: not compiled; its int8 plan
      build = &sizer.build(device, parseVariant("int8"));
    shownBundle = build->bundle;
    html.plan = &shownBundle->plan;
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

nlohmann::json rowJson(const Candidate &c) {
  return {{"variant", c.variant.name},
          {"family", variantFamily(c.variant)},
          {"weights", weightsPolicyName(c.weights)},
          {"flash", c.result.totals.flash},
          {"ram", c.result.totals.ram},
          {"code", c.result.terms.code},
          {"fits", c.result.fits},
          {"predicted_ms", c.result.time.ms},
          {"buildable", c.buildable},
          {"estimate", estimateJson(c.estimates)},
          {"best", c.best},
          {"problems", c.result.problems},
          {"warnings", c.result.warnings}};
}

int runPick(const PickOptions &options) {
  DeviceDatabase db = DeviceDatabase::loadDefault();
  for (const std::string &file : options.deviceFiles)
    db.addFile(file);
  const Device &device = db.get(options.device);
  PickRequest pickRequest;
  pickRequest.goal = parsePickGoal(options.goal);
  pickRequest.allowEstimates = options.allowEstimates;
  for (const std::string &name : options.variants)
    if (!name.empty())
      pickRequest.variants.push_back(driver::fitVariant(name, options.quant));
  // A pre-quantized model has int8 builds only.
  if (options.quant.preQuantized && pickRequest.variants.empty())
    for (const Variant &variant : allVariants())
      if (variant.precision == Precision::Int8 && variantAvailable(device, variant))
        pickRequest.variants.push_back(variant);
  FitRequest request = fitRequestOf(options.headroom);
  request.extraStaticBytes = options.staticBytes;
  driver::BuildSizer sizer({options.model, options.quant});
  PickResult pick;
  {
    Stage stage("compare builds on " + device.id);
    pick = pickBuild(device, request, sizer.footprints(), pickRequest);
  }
  // No fit: the changes `fit` would suggest for the first variant compared.
  std::vector<Suggestion> suggestions;
  if (pick.best < 0 && !pick.candidates.empty()) {
    Stage stage("look for changes that would fit");
    FitRequest auto_ = request;
    auto_.weights = WeightsPolicy::Auto;
    suggestions = suggestChanges(db, device, pick.candidates.front().variant, auto_, sizer.footprints());
  }
  std::vector<std::string> notes;
  std::set<std::string> seen;
  for (const Candidate &c : pick.candidates)
    for (const std::string &estimate : c.estimates)
      if (seen.insert(c.variant.name + estimate).second)
        notes.push_back(c.variant.name + ": estimate: " + estimate);
  bool anyInt8 = false;
  for (const Candidate &c : pick.candidates)
    anyInt8 = anyInt8 || c.variant.precision == Precision::Int8;
  if (anyInt8)
    notes.push_back(std::string("int8 rows: the bundle compiled ") +
                    (options.quant.preQuantized ? std::string("with the model's own Q/DQ parameters")
                     : options.quant.enabled() ? "with " + options.quant.profilePath
                                             : std::string("with a synthetic profile (no --load-profile; "
                                                           "sizes do not depend on the ranges)")));
  // int8-hifi4-cmsis takes CMSIS-NN only for ops NNLib lacks: say why it can equal int8-hifi4.
  const Candidate *hifi = nullptr, *hifiCmsis = nullptr;
  for (const Candidate &c : pick.candidates) {
    if (c.variant.kernels == Kernels::HiFi4 && !hifi)
      hifi = &c;
    if (c.variant.kernels == Kernels::HiFi4WithCmsis && !hifiCmsis)
      hifiCmsis = &c;
  }
  if (hifi && hifiCmsis && hifi->result.totals.flash == hifiCmsis->result.totals.flash &&
      hifi->result.totals.ram == hifiCmsis->result.totals.ram &&
      hifi->result.time.ms == hifiCmsis->result.time.ms)
    notes.push_back("int8-hifi4-cmsis equals int8-hifi4: NNLib runs every op of this model, so no "
                    "CMSIS-NN kernel would be linked");
  if (!pick.candidates.empty())
    notes.push_back(pick.candidates.front().result.baselineSource);

  if (!options.htmlPath.empty())
    writePickHtml(options.htmlPath, options, device, sizer, pick, notes);
  if (options.json.wanted()) {
    nlohmann::json rows = nlohmann::json::array();
    for (const Candidate &c : pick.candidates)
      rows.push_back(rowJson(c));
    nlohmann::json list = nlohmann::json::array();
    for (const Suggestion &s : suggestions)
      list.push_back({{"change", s.change}, {"fits", s.fits}, {"flash", s.flash}, {"ram", s.ram},
                      {"predicted_ms", s.ms}});
    options.json.emit({{"schema", "bundlefit.pick/1"}, {"model", options.model.path},
                       {"device", device.id}, {"goal", pickGoalName(pickRequest.goal)},
                       {"allow_estimates", pickRequest.allowEstimates},
                       {"candidates", rows},
                       {"best", pick.best >= 0 ? nlohmann::json(pick.best) : nlohmann::json()},
                       {"reason", pick.reason}, {"suggestions", list}, {"notes", notes}},
                      options.model.path);
    if (options.json.replacesText())
      return pick.best >= 0 ? 0 : int(ExitCode::DoesNotFit);
  }
  std::cout << options.model.path << " on " << device.id << " (" << device.name << "), goal "
            << pickGoalName(pickRequest.goal) << "\n\n";
  TextTable table({"", "variant", "weights", "Flash", "RAM", "code", "fits", "predicted", "buildable", "estimate"},
                  {false, false, false, true, true, true, false, true, false, false});
  for (const Candidate &c : pick.candidates) {
    char time[32];
    std::snprintf(time, sizeof time, "%.2f ms", c.result.time.ms);
    table.addRow({c.best ? "*" : "", c.variant.name, weightsPolicyName(c.weights),
                  withThousands(c.result.totals.flash), withThousands(c.result.totals.ram),
                  withThousands(c.result.terms.code), c.result.fits ? "yes" : "no", time,
                  c.buildable ? "yes" : "no", c.estimates.empty() ? "-" : "yes (note)"});
  }
  std::cout << table.render() << "\n" << (pick.best >= 0 ? "* " : "") << pick.reason << "\n";
  if (pick.best >= 0)
    for (const std::string &warning : pick.candidates[pick.best].result.warnings)
      std::cout << "warning: " << warning << "\n";
  if (pick.best < 0)
    std::cout << renderSuggestions(suggestions);
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
  command->add_option("--variants", options->variants,
                      "Compare only these builds, e.g. float,int8-cmsis (default: every variant the part has)")
      ->delimiter(',');
  command->add_option("--goal", options->goal, "What the best build minimizes: latency (default), ram or flash")
      ->check(CLI::IsMember({"latency", "ram", "flash"}));
  command->add_flag("--allow-estimates", options->allowEstimates,
                    "Let the best be a build bundlefit cannot generate or sizes by estimate (HiFi4)");
  addHeadroomOptions(*command, options->headroom);
  addQuantOptions(*command, options->quant);
  command->callback([options, &action] { action = [options] {
      markPreQuantized(options->model.path, options->quant);
      return runPick(*options);
    }; });
}

} // namespace bundlefit
