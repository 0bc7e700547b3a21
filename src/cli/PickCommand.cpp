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
#include "QuantOptions.h"
#include "ReportSupport.h"

#include "bundlefit/device/Fit.h"
#include "bundlefit/driver/Compilation.h"
#include "bundlefit/driver/PickCheck.h"
#include "bundlefit/driver/VariantBuild.h"
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
  driver::CompilationOptions compilation; ///< The model; int8 options size the int8 rows.
  PartOptions part;
  JsonReportOption json;
  HtmlReportOption html;
  std::vector<std::string> variants; ///< --variants: empty, every variant of the part.
  std::string goal = "latency";
  bool allowEstimates = false;
};

/// The page shows the comparison, then the chosen build (or the first
/// candidate when none fits): its Flash/RAM bars and per-layer times over
/// that build's own memory plan.
void writePickHtml(const PickOptions &options, const driver::Compilation &compilation,
                   const Device &device, driver::BuildSizer &sizer, const PickResult &pick,
                   const std::vector<std::string> &notes) {
  HtmlReport html;
  html.title = compilation.options().model.path + " on " + device.id + ": build variants";
  html.summary = {device.name};
  html.variants = variantRowsOf(pick);
  html.pickReason = pick.reason;
  LayerTiming timing;
  std::shared_ptr<const CompiledBundle> shownBundle;
  if (!pick.candidates.empty()) {
    const Candidate &shown = pick.candidates[pick.best >= 0 ? size_t(pick.best) : 0];
    const driver::VariantBuild *build = &sizer.build(device, shown.variant);
    if (!build->bundle) // HiFi4: not compiled; its int8 plan
      build = &sizer.build(device, driver::fitVariant("int8", compilation.options().quant));
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
  options.html.write(html);
}

int runPick(const PickOptions &options) {
  options.json.checkFileWritable();
  options.html.checkFileWritable();
  const driver::Compilation compilation(options.compilation);
  const std::string &modelPath = compilation.options().model.path;
  driver::PickQuery query;
  query.part = partQueryOf(options.part);
  query.variants = options.variants;
  query.goal = options.goal;
  query.allowEstimates = options.allowEstimates;
  std::unique_ptr<driver::PickCheck> result = compilation.pick(query);
  const Device &device = *result->device;
  const PickResult &pick = result->pick;

  if (options.html.wanted())
    writePickHtml(options, compilation, device, *result->sizer, pick, result->notes);
  if (options.json.wanted()) {
    options.json.emit(driver::pickReportJson(*result, modelPath), modelPath);
    if (options.json.replacesText())
      return result->exitCode();
  }
  if (verbosity() == Verbosity::Quiet) { // -q: the verdict line alone, unwrapped
    std::cout << (pick.best >= 0 ? "* " : "") << pick.reason << "\n";
    return result->exitCode();
  }
  std::string text = modelPath + " on " + device.id + " (" + device.name + "), goal " +
                     pickGoalName(result->pickRequest.goal) + "\n\n";
  TextTable table({"", "variant", "weights", "Flash", "RAM", "code", "fits", "predicted",
                   "buildable", "estimate"},
                  {false, false, false, true, true, true, false, true, false, false});
  for (const Candidate &c : pick.candidates) {
    char time[32];
    std::snprintf(time, sizeof time, "%.2f ms", c.result.time.ms);
    table.addRow({c.best ? "*" : "", c.variant.name, weightsPolicyName(c.weights),
                  withThousands(c.result.totals.flash), withThousands(c.result.totals.ram),
                  withThousands(c.result.terms.code), c.result.fits ? "yes" : "no", time,
                  c.buildable ? "yes" : "no", c.estimates.empty() ? "-" : "yes (note)"});
  }
  text += table.render() + "\n" + (pick.best >= 0 ? "* " : "") + pick.reason + "\n";
  if (pick.best >= 0)
    for (const std::string &warning : pick.candidates[pick.best].result.warnings)
      text += "warning: " + warning + "\n";
  if (pick.best < 0)
    text += renderSuggestions(result->suggestions, options.part.suggest.enabled);
  for (const std::string &note : result->notes)
    text += "note: " + note + "\n";
  printText(text);
  return result->exitCode();
}

} // namespace

void addPickCommand(CLI::App &app, CommandAction &action) {
  auto options = std::make_shared<PickOptions>();
  CLI::App *command =
      app.add_subcommand("pick", "Compare float/int8 x plain/CMSIS-NN/HiFi4 x weights Flash/RAM on "
                                 "a part and pick the best that fits");
  addModelOptions(*command, options->compilation.model);
  addPartOptions(*command, options->part);
  options->json.addTo(*command, "bundlefit.pick/1");
  options->html.addTo(*command, "variant comparison, bars, timeline");
  command
      ->add_option(
          "--variants", options->variants,
          "Compare only these builds, e.g. float,int8-cmsis (default: every variant the part has)")
      ->delimiter(',');
  command
      ->add_option("--goal", options->goal,
                   "What the best build minimizes: latency (default), ram or flash")
      ->check(CLI::IsMember({"latency", "ram", "flash"}));
  command->add_flag(
      "--allow-estimates", options->allowEstimates,
      "Let the best be a build bundlefit cannot generate or sizes by estimate (HiFi4)");
  addQuantOptions(*command, options->compilation.quant);
  command->callback([options, &action] { action = [options] { return runPick(*options); }; });
}

} // namespace bundlefit
