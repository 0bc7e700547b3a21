//===- DevicesCommand.cpp - bundlefit devices [--json] [--calibration] -----===//
//
// Lists the parts and boards in the device database (and any --device-file),
// or checks the cost model against every published timing it is calibrated on.
// The list fits 100 columns; --wide (or -v) adds the part names, every RAM
// region and the kernel libraries.
//
//===----------------------------------------------------------------------===//
#include "Command.h"
#include "ReportSupport.h"

#include "bundlefit/device/CostModel.h"
#include "bundlefit/device/Device.h"
#include "bundlefit/device/Fit.h"
#include "bundlefit/driver/FitCheck.h"
#include "bundlefit/driver/VariantFootprint.h"
#include "bundlefit/reports/TextTable.h"

#include <cmath>
#include <cstdio>
#include <iostream>

namespace bundlefit {

namespace {

using namespace bundlefit::device;

struct DevicesOptions {
  std::vector<std::string> deviceFiles;
  JsonReportOption json;
  HtmlReportOption html;
  bool calibration = false;
};

std::string sizeText(uint64_t bytes) {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) == 0)
    return std::to_string(bytes / (1024 * 1024)) + "M";
  if (bytes % 1024 == 0)
    return std::to_string(bytes / 1024) + "K";
  return std::to_string(bytes);
}

/// RAM figures, all in one unit (KiB), so a column reads at a glance:
/// "320K", "36,095.0K" (36,961,248 B, the STM32N6570-DK's).
std::string ramText(uint64_t bytes) {
  if (bytes % 1024 == 0)
    return withThousands(bytes / 1024) + "K";
  char fraction[8];
  std::snprintf(fraction, sizeof fraction, "%.1f", double(bytes % 1024) / 1024.0);
  return withThousands(bytes / 1024) + std::string(fraction + 1) + "K";
}

std::string coresText(const Device &device) {
  std::string text;
  for (const Core &core : device.cores) {
    char mhz[32];
    std::snprintf(mhz, sizeof mhz, "%g", core.clockMhz);
    text += (text.empty() ? "" : " + ") + core.type + " " + mhz + " MHz";
  }
  return text;
}

/// "2x cortex-m33 150 MHz + neutron-npu 150 MHz": equal cores counted once.
std::string compactCoresText(const Device &device) {
  std::vector<std::pair<std::string, int>> groups;
  for (const Core &core : device.cores) {
    char mhz[32];
    std::snprintf(mhz, sizeof mhz, "%g", core.clockMhz);
    std::string text = core.type + " " + mhz + " MHz";
    if (!groups.empty() && groups.back().first == text)
      ++groups.back().second;
    else
      groups.push_back({text, 1});
  }
  std::string text;
  for (const auto &[core, count] : groups)
    text += (text.empty() ? "" : " + ") + (count > 1 ? std::to_string(count) + "x " : "") + core;
  return text;
}

nlohmann::json deviceJson(const Device &device) {
  nlohmann::json cores = nlohmann::json::array(), memory = nlohmann::json::array();
  for (const Core &core : device.cores)
    cores.push_back({{"name", core.name},
                     {"type", core.type},
                     {"clock_mhz", core.clockMhz},
                     {"fpu", core.fpu},
                     {"dsp_extension", core.dspExtension},
                     {"helium", core.helium},
                     {"runs_bundle", core.runsBundle},
                     {"source", core.source}});
  for (const MemoryRegionInfo &region : device.memory) {
    nlohmann::json entry = {
        {"name", region.name},     {"kind", memoryKindName(region.kind)},
        {"base", region.base},     {"size", region.size},
        {"cached", region.cached}, {"read_cycles_per_byte", region.readCyclesPerByte},
        {"source", region.source}};
    if (region.waitStates >= 0)
      entry["wait_states"] = region.waitStates;
    memory.push_back(entry);
  }
  nlohmann::json libraries = nlohmann::json::object();
  for (const auto &[key, library] : device.libraries) {
    libraries[key] = {{"code_bytes", library.codeBytes},
                      {"flash_bytes", library.flashBytes},
                      {"ram_bytes", library.ramBytes},
                      {"core", library.core},
                      {"cycles_per_mac", library.cyclesPerMac},
                      {"calibrated", library.calibrated},
                      {"provenance", costProvenanceName(library.provenance)},
                      {"provenance_from", library.provenanceFrom}};
    if (library.comparison)
      libraries[key]["comparison"] = {{"what", library.comparison->what},
                                      {"cycles_per_mac", library.comparison->cyclesPerMac},
                                      {"cycles_per_element", library.comparison->cyclesPerElement},
                                      {"from", library.comparison->from},
                                      {"used_for_predictions", false}};
  }
  nlohmann::json sources = nlohmann::json::array();
  for (const Source &source : device.sources)
    sources.push_back({{"fact", source.fact}, {"from", source.from}});
  return {{"id", device.id},
          {"aliases", device.aliases},
          {"name", device.name},
          {"vendor", device.vendor},
          {"board", device.board},
          {"part", device.part},
          {"file", device.file},
          {"cores", cores},
          {"memory", memory},
          {"flash_bytes", device.totalFlash()},
          {"ram_bytes", device.totalRam()},
          {"sdk_baseline", {{"flash", device.sdkBaselineFlash}, {"ram", device.sdkBaselineRam}}},
          {"kernel_libraries", libraries},
          {"sources", sources}};
}

/// fitted | held out | comparison (the timing of kernels bundlefit does not link).
const char *calibrationRole(const CalibrationResult &r) {
  if (!r.comparisonOf.empty())
    return "comparison";
  return r.point.usedToFit ? "fitted" : "held out";
}

int runCalibration(const DeviceDatabase &db, const JsonReportOption &json) {
  std::vector<CalibrationResult> results = checkCalibration(db);
  double worst = 0;
  for (const CalibrationResult &r : results)
    worst = std::max(worst, std::fabs(r.errorPercent));
  if (json.wanted()) {
    nlohmann::json rows = nlohmann::json::array();
    for (const CalibrationResult &r : results) {
      rows.push_back({{"figure", r.point.figure},
                      {"device", r.point.device},
                      {"model", r.point.model},
                      {"variant", r.point.variant},
                      {"weights", r.point.weightsInFlash ? "flash" : "ram"},
                      {"published_ms", r.point.publishedMs},
                      {"predicted_ms", r.predictedMs},
                      {"error_percent", r.errorPercent},
                      {"role", calibrationRole(r)}});
      if (!r.comparisonOf.empty()) {
        rows.back()["comparison_of"] = r.comparisonOf;
        rows.back()["own_kernels_ms"] = r.ownKernelsMs;
      }
    }
    json.emit({{"schema", "bundlefit.cost-calibration/1"},
               {"points", rows},
               {"worst_error_percent", worst},
               {"claimed_error_percent", kCalibrationClaimPercent}},
              "");
    if (json.replacesText())
      return 0;
  }
  TextTable table({"published figure", "device", "model", "variant", "weights", "role", "published",
                   "predicted", "error"},
                  {false, false, false, false, false, false, true, true, true});
  table.setDropOrder({2, 1, 3}); // the figure names the model, part and build
  for (const CalibrationResult &r : results) {
    char published[32], predicted[32], error[32];
    std::snprintf(published, sizeof published, "%.2f ms", r.point.publishedMs);
    std::snprintf(predicted, sizeof predicted, "%.2f ms", r.predictedMs);
    std::snprintf(error, sizeof error, "%+.1f%%", r.errorPercent);
    table.addRow({r.point.figure, r.point.device, r.point.model, r.point.variant,
                  r.point.weightsInFlash ? "flash" : "ram", calibrationRole(r), published,
                  predicted, error});
  }
  std::cout << table.render();
  for (const CalibrationResult &r : results)
    if (!r.comparisonOf.empty()) {
      char own[64];
      std::snprintf(own, sizeof own, "%.2f ms", r.ownKernelsMs);
      std::cout << wrapLongLines(r.point.figure + ": a comparison, " + r.comparisonOf +
                                 "; bundlefit's own kernels are predicted at " + own + "\n");
    }
  char summary[160];
  std::snprintf(
      summary, sizeof summary,
      "worst error %.2f%% over %zu figures (claimed in device_db/README.md: within %.1f%%)\n",
      worst, results.size(), kCalibrationClaimPercent);
  std::cout << summary;
  return 0;
}

/// Every column: part names, each RAM region, kernel libraries.
TextTable wideDeviceTable(const DeviceDatabase &db) {
  TextTable table({"device", "board of", "name", "cores", "flash", "RAM regions", "libraries"},
                  {false, false, false, false, true, false, false});
  for (const Device &device : db.devices()) {
    std::string flash, ram, libraries;
    for (const MemoryRegionInfo &region : device.memory) {
      std::string entry = region.name + " " + ramText(region.size);
      if (region.isFlash())
        flash += (flash.empty() ? "" : " + ") + sizeText(region.size);
      else
        ram += (ram.empty() ? "" : ", ") + entry;
    }
    for (const auto &[key, library] : device.libraries)
      if (key != "portable_float" && key != "portable_int8")
        libraries += (libraries.empty() ? "" : ", ") + key;
    table.addRow({device.id, device.part, device.name, coresText(device), flash, ram, libraries});
  }
  return table;
}

int runDevices(const DevicesOptions &options) {
  options.json.checkFileWritable();
  options.html.checkFileWritable();
  DeviceDatabase db = driver::loadDeviceDatabase(options.deviceFiles);
  if (options.calibration)
    return runCalibration(db, options.json);
  TextTable wide = wideDeviceTable(db);
  options.html.writeTable("bundlefit devices", {}, "Parts and boards", wide);
  if (options.json.wanted()) {
    nlohmann::json list = nlohmann::json::array();
    for (const Device &device : db.devices())
      list.push_back(deviceJson(device));
    options.json.emit({{"schema", "bundlefit.devices/1"}, {"devices", list}}, "");
    if (options.json.replacesText())
      return 0;
  }
  if (textWidth() != 0) { // not --wide or -v
    // 100 columns: totals only (the regions and libraries are --wide).
    TextTable table({"device", "cores", "flash", "RAM", "RAM regions"},
                    {false, false, true, true, true});
    for (const Device &device : db.devices())
      table.addRow({device.id, compactCoresText(device), sizeText(device.totalFlash()),
                    ramText(device.totalRam()), std::to_string(device.memory.size())});
    std::cout << table.render() << "(names, RAM regions and kernel libraries: --wide)\n";
    return 0;
  }
  std::cout << wide.render();
  return 0;
}

} // namespace

void addDevicesCommand(CLI::App &app, CommandAction &action) {
  auto options = std::make_shared<DevicesOptions>();
  CLI::App *command = app.add_subcommand("devices", "List the parts in the device database");
  command->add_option(
      "--device-file", options->deviceFiles,
      "Add a part from a JSON file (device_db/schema/device.schema.json; repeatable)");
  options->json.addTo(*command, "bundlefit.devices/1");
  options->html.addTo(*command, "every part with its regions and libraries");
  command->add_flag("--calibration", options->calibration,
                    "Check the cost model against every published timing it is calibrated on");
  command->callback([options, &action] { action = [options] { return runDevices(*options); }; });
}

} // namespace bundlefit
