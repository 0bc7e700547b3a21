//===- FitReportSupport.cpp - What `fit` and `pick` share ------------------===//
#include "FitReportSupport.h"
#include "OptionChecks.h"

#include "bundlefit/reports/TextTable.h"

#include <cstdio>

namespace bundlefit {

using namespace bundlefit::device;

void addHeadroomOptions(CLI::App &command, HeadroomOptions &options) {
  command.add_option("--reserve-ram", options.reserveRam,
                     "RAM to keep free for the application: BYTES, BYTESK (KiB) in the SDK's RAM "
                     "region, or PCT% of every RAM region");
  command.add_option("--reserve-flash", options.reserveFlash,
                     "Flash to keep free: BYTES, BYTESK (KiB) or PCT% of every Flash region");
  command
      .add_option("--app-ram", options.appRam,
                  "The application's RAM (.data, .bss, stack, heap) in bytes, replacing the part's "
                  "SDK baseline")
      ->check(byteCountCheck());
  command
      .add_option("--app-flash", options.appFlash,
                  "The application's Flash (code, rodata, data image) in bytes, replacing the "
                  "part's SDK baseline")
      ->check(byteCountCheck());
}

void addSuggestOptions(CLI::App &command, driver::SuggestOptions &options) {
  command.add_flag("!--no-suggestions", options.enabled,
                   "When it does not fit, do not look for changes that would (model sweeps)");
  command
      .add_option("--suggest-parts", options.parts,
                  "When it does not fit, the parts to try (ids, comma-separated; default: the "
                  "smallest part of the device's vendor that holds it)")
      ->delimiter(',');
}

FitRequest fitRequestOf(const HeadroomOptions &options) {
  FitRequest request;
  if (!options.reserveRam.empty())
    request.reserveRam = parseHeadroom(options.reserveRam, "--reserve-ram");
  if (!options.reserveFlash.empty())
    request.reserveFlash = parseHeadroom(options.reserveFlash, "--reserve-flash");
  if (options.appRam >= 0)
    request.appRam = uint64_t(options.appRam);
  if (options.appFlash >= 0)
    request.appFlash = uint64_t(options.appFlash);
  return request;
}

void addPartOptions(CLI::App &command, PartOptions &options) {
  command.add_option("--device", options.device, "Part or board id (bundlefit devices)")
      ->required();
  command.add_option(
      "--device-file", options.deviceFiles,
      "Add a part from a JSON file (device_db/schema/device.schema.json; repeatable)");
  command
      .add_option("--static-bytes", options.staticBytes,
                  "Initialized application data to count in Flash and RAM (e.g. a test image)")
      ->check(byteCountCheck());
  addHeadroomOptions(command, options.headroom);
  addSuggestOptions(command, options.suggest);
}

driver::PartQuery partQueryOf(const PartOptions &options) {
  driver::PartQuery query;
  query.device = options.device;
  query.deviceFiles = options.deviceFiles;
  query.request = fitRequestOf(options.headroom);
  query.request.extraStaticBytes = options.staticBytes;
  query.suggest = options.suggest;
  return query;
}

std::string codeOrigin(const driver::VariantBuild &build, const FitRequest &request) {
  if (request.codeBytes)
    return "given by --code-bytes";
  if (!build.bundle)
    return "estimate: the device file's library figure";
  const driver::CodeBreakdown &c = build.code;
  std::string text =
      "compiled for " + build.target + ": object " + withThousands(c.text + c.rodata);
  if (c.runtimeMeasured)
    text += " + runtime " + withThousands(c.runtime);
  else
    text += ", runtime routines not counted";
  if (c.library)
    text += " + CMSIS-NN " + withThousands(c.library);
  if (c.fromCache)
    text += ", cached";
  return text;
}

std::string renderSuggestions(const std::vector<Suggestion> &suggestions, bool lookedFor) {
  if (!lookedFor)
    return "changes: not looked for (--no-suggestions)\n";
  std::string text = "changes:\n";
  for (const Suggestion &s : suggestions) {
    char time[32];
    std::snprintf(time, sizeof time, "%.2f ms", s.ms);
    text += "  - " + s.change + ": Flash " + withThousands(s.flash) + ", RAM " +
            withThousands(s.ram) +
            (s.fits ? ", fits, " + std::string(time) : ", still does not fit") + "\n";
    for (const std::string &estimate : s.estimates)
      text += "      estimate: " + estimate + "\n";
  }
  if (suggestions.empty())
    text += "  (no single change found: no other placement, and no part of the device's vendor "
            "holds it; --suggest-parts names parts to try)\n";
  return text;
}

} // namespace bundlefit
