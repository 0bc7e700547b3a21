#include "ReportSupport.h"

#include "Command.h"
#include "Progress.h"
#include "bundlefit/driver/ToolInfo.h"

#include "FitReportSupport.h"

#include "bundlefit/driver/FitCheck.h"
#include "bundlefit/driver/VariantBuild.h"
#include "bundlefit/reports/DeviceReports.h"
#include "bundlefit/reports/JsonText.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/Format.h"
#include "bundlefit/support/OutputFile.h"

#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace bundlefit {

using namespace bundlefit::device;

std::unique_ptr<DeviceFitReport> fitForReport(const driver::Compilation &compilation,
                                              const std::string &deviceId,
                                              const std::vector<std::string> &deviceFiles) {
  auto report = std::make_unique<DeviceFitReport>();
  report->db = driver::loadDeviceDatabase(deviceFiles);
  report->device = &report->db.get(deviceId);
  Stage stage("fit on " + report->device->id);
  Variant variant = driver::fitVariant("", compilation.options().quant);
  // Planned per core, the arena only minimised: `plan` shows the model, not a part's build.
  // Within the command's --time-limit, as the model's own plan.
  driver::BuildSizer sizer(compilation.buildOptions());
  const driver::VariantBuild &build = sizer.build(*report->device, variant);
  report->footprint = build.footprint;
  FitRequest request;
  report->code = codeOrigin(build, request);
  report->fit = fitModel(*report->device, report->footprint, request);
  report->timing = layerTimingOf(*report->device, report->fit);
  return report;
}

void addDeviceToHtml(const DeviceFitReport &report, HtmlReport &html) {
  const FitResult &fit = report.fit;
  html.regionsTitle = report.device->id + " (" + report.device->name +
                      "): Flash and RAM, variant " + fit.variant.name + ", weights " +
                      weightsPolicyName(fit.weights);
  html.regions = regionBarsOf(fit);
  html.verdict = fit.fits ? "FITS" : "DOES NOT FIT";
  const ModelFootprint &fp = report.footprint;
  html.summary.push_back("build on " + report.device->id + ": CONSTANT " +
                         withThousands(fp.constantBytes) + ", MUTABLE " +
                         withThousands(fp.mutableBytes) + ", ACTIVATIONS " +
                         withThousands(fp.activationsBytes) + ", code " +
                         withThousands(fit.terms.code) + " (" + report.code + ")");
  html.summary.push_back("on " + report.device->id + ": Flash " + withThousands(fit.totals.flash) +
                         " of " + withThousands(fit.flashCapacity) + ", RAM " +
                         withThousands(fit.totals.ram) + " of " + withThousands(fit.ramCapacity) +
                         ", predicted " + formatMs(fit.time.ms) +
                         (report.footprint.codeEstimated ? " (code size estimated)" : ""));
  html.notes.push_back(fit.baselineSource);
  for (const std::string &problem : fit.problems)
    html.notes.push_back(problem);
}

void checkWritable(const std::string &path, const std::string &option) {
  checkOutputFile(path, option);
}

namespace {
/// Every command's --json option; only the command run has one given.
std::vector<const JsonReportOption *> &jsonOptions() {
  static std::vector<const JsonReportOption *> options;
  return options;
}
} // namespace

bool jsonReplacesText() {
  for (const JsonReportOption *option : jsonOptions())
    if (option->replacesText())
      return true;
  return false;
}

void JsonReportOption::addTo(CLI::App &command, const std::string &what) {
  jsonOptions().push_back(this);
  option_ = command
                .add_option("--json", path_,
                            "JSON report (" + what +
                                "): alone or '-' prints it instead of the text; --json FILE "
                                "writes it to FILE as well")
                ->expected(0, 1);
}

void JsonReportOption::checkFileWritable() const {
  if (!file().empty())
    checkWritable(file(), "--json");
}

void JsonReportOption::emit(nlohmann::json report, const std::string &modelPath) const {
  stampReport(report, modelPath);
  if (replacesText()) {
    std::cout << jsonText(report, 2) << "\n";
    return;
  }
  writeFileAtomically(path_, jsonText(report, 2) + "\n");
}

void printText(const std::string &text) { std::cout << wrapLongLines(escapeInvalidUtf8(text)); }

void writeHtmlReport(const std::string &path, const HtmlReport &report) {
  writeFileAtomically(path, escapeInvalidUtf8(renderHtmlReport(report)));
}

void HtmlReportOption::addTo(CLI::App &command, const std::string &what) {
  command.add_option("--html", path_,
                     "Also write a self-contained HTML report (" + what + ") to FILE");
}

void HtmlReportOption::checkFileWritable() const {
  if (wanted())
    checkWritable(path_, "--html");
}

void HtmlReportOption::write(const HtmlReport &report) const {
  if (wanted())
    writeHtmlReport(path_, report);
}

void HtmlReportOption::writeTable(const std::string &title, std::vector<std::string> summary,
                                  const std::string &tableTitle, const TextTable &table) const {
  HtmlReport html;
  html.title = title;
  html.summary = std::move(summary);
  html.tables.push_back({tableTitle, table});
  write(html);
}

} // namespace bundlefit
