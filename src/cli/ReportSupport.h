//===- ReportSupport.h - What several commands' reports share --------------===//
//
// `plan --device` adds the cost model's per-layer time and the part's
// Flash/RAM bars to its report: the build `fit` would size (float, or int8
// with --load-profile), weights placed automatically, through the driver.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/device/Fit.h"
#include "bundlefit/driver/Compilation.h"
#include "bundlefit/driver/Pipeline.h"
#include "bundlefit/reports/HtmlReport.h"
#include "bundlefit/reports/LayerTable.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace bundlefit {

class Graph;

struct DeviceFitReport {
  device::DeviceDatabase db;
  const device::Device *device = nullptr;
  device::ModelFootprint footprint;
  device::FitResult fit;
  LayerTiming timing;
  std::string code; ///< Where the code figure comes from (codeOrigin).
};

/// The model's build on `deviceId` (after adding `deviceFiles`): int8 when
/// the compilation has a profile, else float; sized as `fit` sizes it.
std::unique_ptr<DeviceFitReport> fitForReport(const driver::Compilation &compilation,
                                              const std::string &deviceId,
                                              const std::vector<std::string> &deviceFiles);

/// Adds the device's bars, verdict and summary line to an HTML report.
void addDeviceToHtml(const DeviceFitReport &report, HtmlReport &html);

/// Throws Error(CannotWrite) naming `path` (and `option`, when given) unless an
/// output file can be written there (support/OutputFile.h: checkOutputFile);
/// lets a command fail before it writes anything.
void checkWritable(const std::string &path, const std::string &option = "");

/// --json [FILE], the same on every command: `--json` alone (or `--json -`)
/// prints the JSON report instead of the text; `--json FILE` writes it to FILE
/// and the text still goes to stdout. Reports are stamped with the tool
/// version and the model's SHA-256 (ToolInfo.h).
class JsonReportOption {
public:
  /// Adds `--json [FILE]` to `command`; `what` names the report's schema.
  void addTo(CLI::App &command, const std::string &what);
  /// --json was given, in either form: build the report.
  bool wanted() const { return option_ && option_->count() > 0; }
  /// The JSON is the whole stdout (no text report).
  bool replacesText() const { return wanted() && (path_.empty() || path_ == "-"); }
  /// The FILE of `--json FILE`, or empty.
  std::string file() const { return replacesText() ? "" : path_; }
  /// Error(CannotWrite) now if FILE cannot be written: before any long work.
  void checkFileWritable() const;
  /// Stamps `report` and prints it or writes FILE atomically.
  void emit(nlohmann::json report, const std::string &modelPath) const;

private:
  CLI::Option *option_ = nullptr;
  std::string path_;
};

/// Whether the command run prints a JSON report as its whole stdout: status
/// lines that a plain run prints (the memory-opt level) are then left out, so
/// `2>&1 | jq` keeps working.
bool jsonReplacesText();

/// Prints a text report on stdout, its long lines wrapped to textWidth().
void printText(const std::string &text);

/// Renders and writes the page atomically (Error(CannotWrite) on failure).
void writeHtmlReport(const std::string &path, const HtmlReport &report);

/// --html FILE, the same on every command with a report: the path is checked
/// before any long work (a typo must not cost a five-minute compile) and the
/// page is written atomically at the end.
class HtmlReportOption {
public:
  /// Adds `--html FILE` to `command`; `what` lists the page's sections.
  void addTo(CLI::App &command, const std::string &what);
  bool wanted() const { return !path_.empty(); }
  const std::string &file() const { return path_; }
  /// Error(CannotWrite) naming --html and FILE now, when FILE cannot be written.
  void checkFileWritable() const;
  void write(const HtmlReport &report) const;
  /// A page of one table: what inspect, devices, run... print as text.
  void writeTable(const std::string &title, std::vector<std::string> summary,
                  const std::string &tableTitle, const TextTable &table) const;

private:
  std::string path_;
};

} // namespace bundlefit
