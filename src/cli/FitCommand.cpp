//===- FitCommand.cpp - bundlefit fit MODEL --device PART ------------------===//
//
// Does the model fit the part? Usage per memory region, where code, weights,
// inputs/outputs, activations and kernel scratch live, predicted time, and a
// verdict: exit 0 when it fits, 3 (DoesNotFit) when not, with the changes that
// would make it fit (AN13001 formulas; device_db/include/bundlefit/device/Fit.h).
//
//===----------------------------------------------------------------------===//
#include "Command.h"
#include "FitVerifyLink.h"
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

struct FitOptions {
  ModelOptions model;
  std::string device;
  std::vector<std::string> deviceFiles;
  std::string weights = "auto";
  std::string variant = "float";
  uint64_t staticBytes = 0;
  int64_t codeBytes = -1;
  JsonReportOption json;
  bool verifyLink = false;
  std::string linkDir;
  std::string htmlPath;
  QuantCliOptions quant; ///< --load-profile...: the int8 bundle --verify-link compiles.
};

std::string ms(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms", value);
  return text;
}

std::string percent(uint64_t used, uint64_t capacity) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", capacity ? 100.0 * double(used) / double(capacity) : 0.0);
  return text;
}

std::string hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%08llx", (unsigned long long)value);
  return text;
}

std::vector<std::string> notesFor(const Device &device, const ModelFootprint &fp, const FitResult &fit) {
  std::vector<std::string> notes;
  if (fp.sizesEstimated)
    notes.push_back("int8 sizes are estimates: the float graph re-planned with int8 tensors and int32 "
                    "biases until quantization (issue 5) reports real ones");
  if (fp.codeEstimated)
    notes.push_back("bundle code size is the device file's per-library estimate (AN13001) until code "
                    "generation reports the real .text");
  if (fp.variant.kernels == Kernels::HiFi4 || fp.variant.kernels == Kernels::HiFi4WithCmsis)
    notes.push_back("HiFi4: DSP code generation is not produced; NNLib's footprint, scratch and "
                    "throughput are accounted for planning and cost only");
  const KernelLibrary &library = mainLibrary(device, fp.variant);
  if (!library.calibrated)
    notes.push_back(library.key + " cost figures on " + device.id + " are not calibrated on a published "
                    "timing: " + library.source);
  return notes;
}

int runFit(const FitOptions &options) {
  DeviceDatabase db = DeviceDatabase::loadDefault();
  for (const std::string &file : options.deviceFiles)
    db.addFile(file);
  const Device &device = db.get(options.device);
  Variant variant = parseVariant(options.variant);
  FitRequest request;
  request.weights = parseWeightsPolicy(options.weights);
  request.extraStaticBytes = options.staticBytes;
  if (options.codeBytes >= 0)
    request.codeBytes = uint64_t(options.codeBytes);
  if (!variantAvailable(device, variant))
    mainLibrary(device, variant); // Throws: the part lacks the library.

  // --verify-link: compile for the part's core first, so the fit uses the real code size.
  std::unique_ptr<PartBundle> part;
  if (options.verifyLink) {
    part = compileForPart(options.model, device, variant, options.linkDir, options.quant);
    request.codeBytes = part->codeBytes();
  }
  std::unique_ptr<Graph> graph = loadModel(options.model);
  applyMemoryOptPasses(*graph, options.model);
  PlanOptions planOptions; // Every plan below runs at the model's --memory-opt.
  planOptions.memoryOpt = options.model.memoryOpt;
  planOptions.patchRecomputeBudget = options.model.patchRecomputeBudget;
  // int8 builds are sized on the model quantized as `compile` would
  // (QuantOptions.h): made when the variant or a suggestion needs it.
  std::unique_ptr<Graph> int8Graph;
  auto quantized = [&]() -> const Graph * {
    if (!int8Graph) {
      Stage stage("quantize for int8 sizes");
      int8Graph = quantizedGraphForSizing(options.model, options.quant);
    }
    return int8Graph.get();
  };
  ModelFootprint fp;
  {
    Stage stage("plan the " + variant.name + " build");
    // An int8 bundle compiled for --verify-link gives the real sizes.
    fp = part && variant.precision == Precision::Int8
             ? footprintOfPlan(part->bundle.plan, variant, device)
             : footprintFor(*graph, variant.precision == Precision::Int8 ? quantized() : nullptr,
                            variant, device, planOptions);
  }
  if (request.codeBytes)
    fp.codeEstimated = false; // the caller measured it (e.g. from a bundle's memory.json)
  FitResult fit = fitModel(device, fp, request);
  std::vector<Suggestion> suggestions;
  if (!fit.fits) {
    Stage stage("look for changes that would fit");
    suggestions = suggestChanges(db, device, *graph, variant, request, planOptions, quantized());
  }
  std::optional<FlexRamSplit> flexram = suggestFlexRam(device, fp, request);
  if (!fit.fits && flexram)
    suggestions.insert(suggestions.begin(),
                       {"FlexRAM banks " + flexram->reason, true, flexram->result->totals.flash,
                        flexram->result->totals.ram, flexram->result->time.ms});
  std::vector<std::string> notes = notesFor(device, fp, fit);
  std::optional<LinkVerification> linked;
  if (part)
    linked = verifyPartLink(*part, device, fp, fit, options.staticBytes);
  auto exitCode = [&](int predicted) {
    if (linked && !linked->agrees())
      std::cerr << "bundlefit: error: --verify-link: " << linked->disagreement() << "\n";
    return linked ? verifyLinkExitCode(*linked) : predicted;
  };
  // The layer table and the HTML timeline read the float plan of the graph
  // (the footprint plans its own copy and keeps no MemoryPlan).
  MemoryPlan plan;
  LayerTiming timing = layerTimingOf(device, fit);
  if (!options.json.replacesText() || !options.htmlPath.empty()) {
    Stage stage("plan memory");
    plan = planGraphMemory(*graph, planOptions);
  }
  if (!options.htmlPath.empty()) {
    HtmlReport html;
    html.title = options.model.path + " on " + device.id + ", variant " + variant.name;
    html.summary = {device.name,
                    "bundle: CONSTANT " + withThousands(fp.constantBytes) + ", MUTABLE " +
                        withThousands(fp.mutableBytes) + ", ACTIVATIONS " +
                        withThousands(fp.activationsBytes) + ", code " +
                        withThousands(fit.terms.code) + (fp.codeEstimated ? " (estimate)" : ""),
                    "Flash " + withThousands(fit.totals.flash) + " of " +
                        withThousands(fit.flashCapacity) + ", RAM " + withThousands(fit.totals.ram) +
                        " of " + withThousands(fit.ramCapacity) + ", predicted " +
                        formatMs(fit.time.ms)};
    html.plan = &plan;
    html.timing = &timing;
    html.regionsTitle = device.id + ": Flash and RAM, weights " + weightsPolicyName(request.weights);
    html.regions = regionBarsOf(fit);
    html.verdict = fit.fits ? "FITS" : "DOES NOT FIT";
    html.notes = fit.problems;
    for (const Suggestion &s : suggestions)
      html.notes.push_back("change: " + s.change + (s.fits ? " (fits, " + ms(s.ms) + ")" : " (still does not fit)"));
    html.notes.insert(html.notes.end(), notes.begin(), notes.end());
    writeHtmlReport(options.htmlPath, html);
  }

  if (options.json.wanted()) {
    nlohmann::json report = fitResultJson(device, fp, fit);
    report["schema"] = "bundlefit.fit/1";
    report["model"] = options.model.path;
    nlohmann::json list = nlohmann::json::array();
    for (const Suggestion &s : suggestions)
      list.push_back({{"change", s.change}, {"fits", s.fits}, {"flash", s.flash}, {"ram", s.ram},
                      {"predicted_ms", s.ms}});
    report["suggestions"] = list;
    if (flexram)
      report["flexram"] = {{"itcm_banks", flexram->itcm}, {"dtcm_banks", flexram->dtcm},
                           {"ocram_banks", flexram->ocram}, {"changed", flexram->changed},
                           {"predicted_ms", flexram->result->time.ms}, {"summary", flexram->reason}};
    report["notes"] = notes;
    if (linked)
      report["verify_link"] = verifyLinkJson(*linked);
    options.json.emit(report, options.model.path);
    if (options.json.replacesText())
      return exitCode(fit.fits ? 0 : int(ExitCode::DoesNotFit));
  }

  std::string text = options.model.path + " on " + device.id + " (" + device.name + "), variant " +
                     variant.name + ", weights " + weightsPolicyName(request.weights) + "\n";
  text += "bundle: CONSTANT " + withThousands(fp.constantBytes) + ", MUTABLE " +
          withThousands(fp.mutableBytes) + ", ACTIVATIONS " + withThousands(fp.activationsBytes) +
          " (lower bound " + withThousands(fp.activationsLowerBound) + "), code " +
          withThousands(fit.terms.code) + (fp.codeEstimated ? " (estimate)" : "") + "\n\n";
  TextTable table({"region", "kind", "base", "used", "capacity", "use", "holds"},
                  {false, false, false, true, true, true, false});
  for (const RegionUse &use : fit.regions) {
    table.addRow({use.region->name, memoryKindName(use.region->kind), hex(use.region->base),
                  withThousands(use.used), withThousands(use.region->size),
                  percent(use.used, use.region->size), use.over() ? "OVER CAPACITY" : ""});
    for (const RegionItem &item : use.items)
      table.addRow({"", "", "", withThousands(item.bytes), "", "", item.what});
  }
  text += table.render() + "\n";
  for (const auto &[what, where] : fit.homes)
    text += "  " + what + ": " + where + "\n";
  if (variant.precision != Precision::Float)
    text += "\nlayers: sizes of the float plan, predicted time of " + variant.name + "\n";
  text += "\n" + renderLayerTable(plan, &timing);
  text += "\ntotals (AN13001 formulas): Flash " + withThousands(fit.totals.flash) + " of " +
          withThousands(fit.flashCapacity) + ", RAM " + withThousands(fit.totals.ram) + " of " +
          withThousands(fit.ramCapacity) + "\n";
  text += "predicted inference time: " + ms(fit.time.ms) + "\n";
  if (flexram && fit.fits)
    text += "FlexRAM: " + flexram->reason + " -> " + ms(flexram->result->time.ms) + "\n";
  for (const std::string &note : notes)
    text += "note: " + note + "\n";
  if (linked)
    text += verifyLinkText(*linked, !options.linkDir.empty());
  if (fit.fits) {
    text += "\nverdict: FITS\n";
    std::cout << text;
    return exitCode(0);
  }
  text += "\nverdict: DOES NOT FIT\n";
  for (const std::string &problem : fit.problems)
    text += "  " + problem + "\n";
  text += "changes:\n";
  for (const Suggestion &s : suggestions)
    text += "  - " + s.change + ": Flash " + withThousands(s.flash) + ", RAM " + withThousands(s.ram) +
            (s.fits ? ", fits, " + ms(s.ms) : ", still does not fit") + "\n";
  if (suggestions.empty())
    text += "  (no single change found; try a part with more memory)\n";
  std::cout << text;
  return exitCode(int(ExitCode::DoesNotFit));
}

} // namespace

void addFitCommand(CLI::App &app, CommandAction &action) {
  auto options = std::make_shared<FitOptions>();
  CLI::App *command = app.add_subcommand(
      "fit", "Check whether a model fits a part: per-region usage, placement, time, verdict (exit 3: does not fit)");
  addModelOptions(*command, options->model);
  command->add_option("--device", options->device, "Part or board id (bundlefit devices)")->required();
  command->add_option("--device-file", options->deviceFiles,
                      "Add a part from a JSON file (device_db/schema/device.schema.json; repeatable)");
  command->add_option("--weights", options->weights,
                      "Where weights are read from: flash, ram or auto (RAM where it fits, hottest first)")
      ->check(CLI::IsMember({"flash", "ram", "auto"}));
  command->add_option("--variant", options->variant,
                      "Build: float, int8, int8-cmsis, int8-hifi4, int8-hifi4-cmsis (default float)");
  command->add_option("--static-bytes", options->staticBytes,
                      "Initialized application data to count in Flash and RAM (e.g. a test image)");
  command->add_option("--code-bytes", options->codeBytes,
                      "Bundle code size in bytes (default: the device file's estimate)");
  options->json.addTo(*command, "bundlefit.fit/1");
  command->add_flag("--verify-link", options->verifyLink,
                    "Compile the bundle for the part's core, link a minimal firmware for its memory map "
                    "(arm-none-eabi-gcc) and check predicted bytes per region within 1% (exit 1 if not)");
  command->add_option("--link-dir", options->linkDir,
                      "Keep the --verify-link firmware (linker script, sources, ELF, map) in DIR");
  command->add_option("--html", options->htmlPath,
                      "Also write a self-contained HTML report (Flash/RAM bars, memory timeline, layers) to FILE");
  addQuantOptions(*command, options->quant);
  command->callback([options, &action] { action = [options] { return runFit(*options); }; });
}

} // namespace bundlefit
