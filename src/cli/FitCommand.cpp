//===- FitCommand.cpp - bundlefit fit MODEL --device PART ------------------===//
//
// Does the model fit the part? Usage per memory region, where code, weights,
// inputs/outputs, activations and kernel scratch live, predicted time, and a
// verdict: exit 0 when it fits, 3 (DoesNotFit) when not, with the changes that
// would make it fit (AN13001 formulas; device_db/include/bundlefit/device/Fit.h).
//
//===----------------------------------------------------------------------===//
#include "Command.h"
#include "FitBatch.h"
#include "FitReportSupport.h"
#include "FitVerifyLink.h"
#include "FitVerifyRun.h"
#include "OptionChecks.h"
#include "Progress.h"
#include "QuantOptions.h"
#include "ReportSupport.h"

#include "bundlefit/device/Fit.h"
#include "bundlefit/driver/Compilation.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/reports/DeviceReports.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/OutputFile.h"

#include <cstdio>
#include <iostream>

namespace bundlefit {

namespace {

using namespace bundlefit::device;

struct FitOptions {
  driver::CompilationOptions compilation; ///< The model and int8 options.
  PartOptions part;
  std::string weights = "auto";
  std::string variant; ///< Empty: int8 with --load-profile, else float.
  int64_t codeBytes = -1;
  JsonReportOption json;
  bool verifyLink = false;
  bool verifyRun = false; ///< Also run the linked firmware under QEMU (FitVerifyRun.h).
  std::string linkDir;
  HtmlReportOption html;
  bool brief = false; ///< One line when it fits (the CMake check), the report when not.
  std::string batch;  ///< --batch LIST: JSON lines, one per model (FitBatch.h).
  unsigned jobs = 0;
};

std::string ms(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f ms", value);
  return text;
}

std::string percent(uint64_t used, uint64_t capacity) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%",
                capacity ? 100.0 * double(used) / double(capacity) : 0.0);
  return text;
}

std::string hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%08llx", (unsigned long long)value);
  return text;
}

/// --brief: the verdict in one line, with the fullest region.
std::string briefLine(const std::string &model, const Device &device, const Variant &variant,
                      const FitRequest &request, const FitResult &fit) {
  const RegionUse *fullest = nullptr;
  for (const RegionUse &use : fit.regions)
    if (use.region->size &&
        (!fullest || use.used * fullest->region->size > fullest->used * use.region->size))
      fullest = &use;
  std::string line = model + " fits " + device.id + " (" + variant.name + ", weights " +
                     weightsPolicyName(request.weights) + "): Flash " +
                     withThousands(fit.totals.flash) + ", RAM " + withThousands(fit.totals.ram) +
                     ", predicted " + ms(fit.time.ms);
  if (fullest)
    line +=
        "; fullest " + fullest->region->name + " " + percent(fullest->used, fullest->region->size);
  return line + (fit.warnings.empty() ? "" : " (tight: fit shows the report)") + "\n";
}

driver::FitQuery queryOf(const FitOptions &options) {
  driver::FitQuery query;
  query.part = partQueryOf(options.part);
  query.part.request.weights = parseWeightsPolicy(options.weights);
  if (options.codeBytes >= 0)
    query.part.request.codeBytes = uint64_t(options.codeBytes);
  query.variant = options.variant;
  return query;
}

/// --batch takes the place of MODEL and prints JSON lines only.
int runBatchOrCheckUsage(const FitOptions &options) {
  if (options.batch.empty()) {
    if (options.compilation.model.path.empty())
      throw Error(ExitCode::Usage, "fit: a MODEL or --batch LIST is required");
    return -1;
  }
  if (!options.compilation.model.path.empty())
    throw Error(ExitCode::Usage, "fit: give either MODEL or --batch LIST, not both");
  if (options.verifyLink || options.verifyRun || options.html.wanted() ||
      !options.json.file().empty())
    throw Error(ExitCode::Usage,
                "fit --batch: prints JSON lines on stdout; --verify-link, --html and --json FILE "
                "are for one model");
  return runFitBatch(options.batch, options.jobs, options.compilation, queryOf(options));
}

int runFit(const FitOptions &given) {
  if (int code = runBatchOrCheckUsage(given); code >= 0)
    return code;
  FitOptions options = given;
  options.verifyLink = options.verifyLink || options.verifyRun; // the run's firmware is linked
  options.json.checkFileWritable();
  options.html.checkFileWritable();
  if (!options.linkDir.empty())
    checkDirectoryCreatable(options.linkDir, "--link-dir directory");
  options.compilation.useCodeCache = !options.verifyLink; // the link needs the object itself
  const driver::Compilation compilation(options.compilation);
  const std::string &modelPath = compilation.options().model.path;
  const QuantCliOptions &quant = compilation.options().quant;
  if (options.verifyLink) { // before any compile
    DeviceDatabase db = driver::loadDeviceDatabase(options.part.deviceFiles);
    checkLinkable(db.get(options.part.device), driver::fitVariant(options.variant, quant), quant);
  }
  std::unique_ptr<driver::FitCheck> check = compilation.fit(queryOf(options));
  const Device &device = *check->device;
  const Variant &variant = check->variant;
  const FitRequest &request = check->request;
  const driver::VariantBuild &build = *check->build;
  const ModelFootprint &fp = check->footprint;
  const FitResult &fit = check->fit;
  const std::vector<Suggestion> &suggestions = check->suggestions;
  const std::optional<FlexRamSplit> &flexram = check->flexram;
  const std::vector<std::string> &notes = check->notes;
  // --verify-link: the very bundle the prediction was sized from, linked.
  std::optional<LinkVerification> linked;
  std::optional<RunVerification> ran;
  if (options.verifyLink) {
    std::unique_ptr<PartBundle> part = writePartBundle(build, device);
    linked = verifyPartLink(*part, device, fp, fit, options.part.staticBytes);
    if (options.verifyRun && linked->linkedFits)
      ran = verifyPartRun(*part, device, fit, check->sizer->build(device, variant),
                          compilation.buildOptions());
    if (!options.linkDir.empty()) // after the run, which works in the part's directory
      publishLinkDir(*part, options.linkDir, *linked);
  }
  auto exitCode = [&](int predicted) {
    if (linked && !linked->agrees())
      std::cerr << "bundlefit: error: --verify-link: " << linked->disagreement() << "\n";
    if (ran && ran->ran && !ran->outputsEqual) {
      std::cerr << "bundlefit: error: --verify-run: the placed firmware's outputs differ ("
                << ran->firstDifference << ")\n";
      return int(ExitCode::Internal);
    }
    return linked ? verifyLinkExitCode(*linked) : predicted;
  };
  // The layer table and the HTML timeline show the plan of the build sized
  // (int8 shapes and peaks for int8 builds); HiFi4 builds are not compiled,
  // so they show the int8 build's plan, labelled as such.
  const driver::VariantBuild *shown = &build;
  if (!build.bundle)
    shown = &check->sizer->build(device, driver::fitVariant("int8", quant));
  const MemoryPlan &plan = shown->bundle->plan;
  LayerTiming timing = layerTimingOf(device, fit);
  std::string code = withThousands(fit.terms.code) + " (" + codeOrigin(build, request) + ")";
  if (options.html.wanted()) {
    HtmlReport html;
    html.title = modelPath + " on " + device.id + ", variant " + variant.name;
    html.summary = {device.name,
                    "bundle: CONSTANT " + withThousands(fp.constantBytes) + ", MUTABLE " +
                        withThousands(fp.mutableBytes) + ", ACTIVATIONS " +
                        withThousands(fp.activationsBytes) + ", code " + code,
                    "Flash " + withThousands(fit.totals.flash) + " of " +
                        withThousands(fit.flashCapacity) + ", RAM " +
                        withThousands(fit.totals.ram) + " of " + withThousands(fit.ramCapacity) +
                        ", predicted " + formatMs(fit.time.ms)};
    html.plan = &plan;
    html.timing = &timing;
    html.regionsTitle =
        device.id + ": Flash and RAM, weights " + weightsPolicyName(request.weights);
    html.regions = regionBarsOf(fit);
    html.verdict = fit.fits ? "FITS" : "DOES NOT FIT";
    html.notes = fit.problems;
    html.notes.insert(html.notes.end(), fit.warnings.begin(), fit.warnings.end());
    for (const Suggestion &s : suggestions)
      html.notes.push_back("change: " + s.change +
                           (s.fits ? " (fits, " + ms(s.ms) + ")" : " (still does not fit)"));
    html.notes.insert(html.notes.end(), notes.begin(), notes.end());
    options.html.write(html);
  }

  if (options.json.wanted()) {
    nlohmann::json report = driver::fitReportJson(*check, modelPath);
    if (linked)
      report["verify_link"] = verifyLinkJson(*linked);
    if (options.verifyRun)
      report["verify_run"] = ran ? verifyRunJson(*ran)
                                 : nlohmann::json{{"ran", false},
                                                  {"why", "the firmware did not link"},
                                                  {"outputs_equal", nullptr}};
    options.json.emit(report, modelPath);
    if (options.json.replacesText())
      return exitCode(fit.fits ? 0 : int(ExitCode::DoesNotFit));
  }

  if (options.brief && fit.fits && !linked) {
    std::cout << briefLine(modelPath, device, variant, request, fit); // unwrapped
    return 0;
  }
  // -q: the verdict line alone (--brief, the CMake check's, prints the whole
  // report when the model does not fit, -q or not).
  if (verbosity() == Verbosity::Quiet && !options.brief) {
    std::cout << (fit.fits ? "verdict: FITS\n" : "verdict: DOES NOT FIT\n");
    return exitCode(fit.fits ? 0 : int(ExitCode::DoesNotFit));
  }
  std::string text = modelPath + " on " + device.id + " (" + device.name + "), variant " +
                     variant.name + ", weights " + weightsPolicyName(request.weights) + "\n";
  text += "bundle: CONSTANT " + withThousands(fp.constantBytes) + ", MUTABLE " +
          withThousands(fp.mutableBytes) + ", ACTIVATIONS " + withThousands(fp.activationsBytes) +
          " (lower bound " + withThousands(fp.activationsLowerBound) + "), code " + code + "\n";
  if (check->arenaCapacity)
    text += "arena planned for a region's room of " + withThousands(check->arenaCapacity) + ": " +
            check->arenaProof + "\n";
  text += std::string("buildable: ") + (fp.buildable ? "yes" : "no") + ", estimate: " +
          (fp.estimates.empty() ? "none" : std::to_string(fp.estimates.size()) + " (see notes)") +
          "\n\n";
  TextTable table({"region", "kind", "base", "used", "capacity", "use", "holds"},
                  {false, false, false, true, true, true, false});
  table.setDropOrder({2, 1}); // what a region holds says more than its address or kind
  for (const RegionUse &use : fit.regions) {
    table.addRow({use.region->name, memoryKindName(use.region->kind), hex(use.region->base),
                  withThousands(use.used), withThousands(use.region->size),
                  percent(use.used, use.region->size),
                  use.over()    ? "OVER CAPACITY"
                  : use.tight() ? "tight (over 90%)"
                                : ""});
    for (const RegionItem &item : use.items)
      table.addRow({"", "", "", withThousands(item.bytes), "", "", item.what});
  }
  text += table.render() + "\n";
  for (const auto &[what, where] : fit.homes)
    text += "  " + what + ": " + where + "\n";
  text += "\nlayers of the " +
          (shown == &build ? variant.name
                           : shown->footprint.variant.name + " (the " + variant.name +
                                 " build is not compiled)") +
          " build for " + build.target + ", predicted time of " + variant.name + "\n";
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
  if (ran)
    text += verifyRunText(*ran);
  if (fit.fits) {
    for (const std::string &warning : fit.warnings)
      text += "warning: " + warning + "\n";
    text += "\nverdict: FITS\n";
    printText(text);
    return exitCode(0);
  }
  text += "\nverdict: DOES NOT FIT\n";
  for (const std::string &problem : fit.problems)
    text += "  " + problem + "\n";
  text += renderSuggestions(suggestions, options.part.suggest.enabled);
  printText(text);
  return exitCode(int(ExitCode::DoesNotFit));
}

} // namespace

void addFitCommand(CLI::App &app, CommandAction &action) {
  auto options = std::make_shared<FitOptions>();
  CLI::App *command =
      app.add_subcommand("fit", "Check whether a model fits a part: per-region usage, placement, "
                                "time, verdict (exit 3: does not fit)");
  addModelOptions(*command, options->compilation.model);
  addPartOptions(*command, options->part);
  command
      ->add_option(
          "--weights", options->weights,
          "Where weights are read from: flash, ram or auto (RAM where it fits, hottest first)")
      ->check(CLI::IsMember({"flash", "ram", "auto"}));
  command->add_option(
      "--variant", options->variant,
      "Build: float, int8, int8-cmsis, int8-hifi4, int8-hifi4-cmsis; an int16x8 .tflite's are "
      "int16x8 and int16x8-cmsis (default int8 with --load-profile or a pre-quantized model, "
      "else float)");
  command
      ->add_option(
          "--code-bytes", options->codeBytes,
          "Bundle code size in bytes (default: the compiled object's, linked for the part)")
      ->check(byteCountCheck());
  command->get_option("model")->required(false); // or --batch
  command->add_option("--batch", options->batch,
                      "Fit every model of LIST, a file of paths (one per line) or a glob such as "
                      "'zoo/*.onnx': one JSON line per model, a failed model is a line with its "
                      "error and exit category");
  command->add_option("--jobs", options->jobs,
                      "--batch: models fitted at once (default: one per core)");
  options->json.addTo(*command, "bundlefit.fit/1");
  command->add_flag(
      "--verify-link", options->verifyLink,
      "Compile the bundle for the part's core, link a minimal firmware for its memory map "
      "(arm-none-eabi-gcc) and check predicted bytes per region within 1% (exit 1 if not)");
  command->add_flag("--verify-run", options->verifyRun,
                    "--verify-link, then run that firmware under QEMU on the board of the part's "
                    "core (its memory map moved onto the board's) and compare its outputs byte "
                    "for byte with the bundle with Glow's one constantWeight (exit 1 if not)");
  command->add_flag("--brief", options->brief,
                    "One line when the model fits (the whole report when it does not)");
  command->add_option("--link-dir", options->linkDir,
                      "Keep the --verify-link firmware (linker script, sources, ELF, map) in DIR");
  options->html.addTo(*command, "Flash/RAM bars, memory timeline, layers");
  addQuantOptions(*command, options->compilation.quant);
  command->callback([options, &action] { action = [options] { return runFit(*options); }; });
}

} // namespace bundlefit
