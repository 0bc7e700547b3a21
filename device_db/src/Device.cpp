//===- Device.cpp - Loading and validating the device database -------------===//
#include "bundlefit/device/Device.h"

#include "bundlefit/device/JsonSchema.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#ifndef BUNDLEFIT_DEVICE_DB_DIR
#define BUNDLEFIT_DEVICE_DB_DIR "device_db"
#endif

namespace bundlefit::device {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return text;
}

json readJsonFile(const std::string &path) {
  std::ifstream in(path);
  if (!in)
    throw Error(ExitCode::BadInputFile, path + ": cannot read file");
  try {
    return json::parse(in);
  } catch (const json::exception &e) { // parse_error, and out_of_range for 1e999
    throw Error(ExitCode::BadInputFile, path + ": not valid JSON: " + e.what());
  }
}

/// The largest byte count a device file may state (1 TiB): the schema only
/// says "integer", so 2^64, 1.5e300 or 2^64-1 would otherwise wrap the sums
/// fit computes and report FITS.
constexpr uint64_t kMaxDeviceBytes = uint64_t(1) << 40;
constexpr uint64_t kMaxFlexRamBanks = 64;

/// Byte counts and addresses must be integers in [0, kMaxDeviceBytes]
/// (addresses below 2^64); throws naming the file and the field.
void checkByteFields(const json &doc, const std::string &file) {
  auto check = [&](const json &object, const char *key, const std::string &where,
                   uint64_t limit) {
    if (!object.is_object() || !object.contains(key))
      return;
    const json &value = object[key];
    if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<int64_t>() >= 0))
      throw Error(ExitCode::BadInputFile, file + ": " + where + key + ": " + value.dump() +
                                              " is not a non-negative integer byte count");
    if (value.get<uint64_t>() > limit)
      throw Error(ExitCode::BadInputFile,
                  file + ": " + where + key + ": " + value.dump() + " is larger than " +
                      std::to_string(limit) + " bytes");
  };
  const uint64_t anyAddress = ~uint64_t(0);
  if (doc.contains("memory") && doc["memory"].is_array())
    for (size_t i = 0; i < doc["memory"].size(); ++i) {
      const std::string where = "memory[" + std::to_string(i) + "].";
      check(doc["memory"][i], "size", where, kMaxDeviceBytes);
      check(doc["memory"][i], "base", where, anyAddress);
    }
  if (doc.contains("cores") && doc["cores"].is_array())
    for (size_t i = 0; i < doc["cores"].size(); ++i)
      for (const char *key : {"icache_bytes", "dcache_bytes"})
        check(doc["cores"][i], key, "cores[" + std::to_string(i) + "].", kMaxDeviceBytes);
  if (doc.contains("sdk_baseline"))
    for (const char *key : {"flash", "ram"})
      check(doc["sdk_baseline"], key, "sdk_baseline.", kMaxDeviceBytes);
  if (doc.contains("flexram")) {
    check(doc["flexram"], "bank_bytes", "flexram.", kMaxDeviceBytes);
    // fit tries every split of the banks (quadratic in their number); real
    // parts have 16 or fewer.
    for (const char *key : {"banks", "default_itcm_banks", "default_dtcm_banks",
                            "default_ocram_banks"})
      check(doc["flexram"], key, "flexram.", kMaxFlexRamBanks);
  }
  if (doc.contains("kernel_libraries") && doc["kernel_libraries"].is_object())
    for (const auto &item : doc["kernel_libraries"].items())
      for (const char *key : {"code_bytes", "flash_bytes", "ram_bytes"})
        check(item.value(), key, "kernel_libraries." + item.key() + ".", kMaxDeviceBytes);
}

MemoryKind parseKind(const std::string &text) {
  if (text == "flash") return MemoryKind::Flash;
  if (text == "tcm") return MemoryKind::Tcm;
  if (text == "sdram") return MemoryKind::Sdram;
  return MemoryKind::Sram;
}

} // namespace

const char *memoryKindName(MemoryKind kind) {
  switch (kind) {
  case MemoryKind::Flash: return "flash";
  case MemoryKind::Sram: return "sram";
  case MemoryKind::Tcm: return "tcm";
  case MemoryKind::Sdram: return "sdram";
  }
  return "?";
}

bool KernelLibrary::implements(const std::string &opType) const {
  return ops.empty() || std::find(ops.begin(), ops.end(), opType) != ops.end();
}

const Core &Device::bundleCore() const {
  for (const Core &core : cores)
    if (core.runsBundle)
      return core;
  return cores.front();
}

const Core *Device::findCore(const std::string &coreName) const {
  for (const Core &core : cores)
    if (core.name == coreName)
      return &core;
  return nullptr;
}

const MemoryRegionInfo *Device::findRegion(const std::string &regionName) const {
  for (const MemoryRegionInfo &region : memory)
    if (region.name == regionName)
      return &region;
  return nullptr;
}

const KernelLibrary *Device::findLibrary(const std::string &key) const {
  auto it = libraries.find(key);
  return it == libraries.end() ? nullptr : &it->second;
}

uint64_t Device::totalFlash() const {
  uint64_t total = 0;
  for (const MemoryRegionInfo &region : memory)
    if (region.isFlash())
      total += region.size;
  return total;
}

uint64_t Device::totalRam() const {
  uint64_t total = 0;
  for (const MemoryRegionInfo &region : memory)
    if (!region.isFlash() && region.holdsData)
      total += region.size;
  return total;
}

void validateDeviceDocument(const json &schema, const json &document, const std::string &file) {
  std::vector<SchemaViolation> violations = validateJson(schema, document);
  if (violations.empty())
    return;
  std::string message;
  for (size_t i = 0; i < violations.size(); ++i)
    message += (i ? "\n" : "") + file + ": " + violations[i].str();
  throw Error(ExitCode::BadInputFile, message);
}

Device parseDevice(const json &doc, const std::string &file) {
  Device device;
  device.file = file;
  device.id = doc.at("id").get<std::string>();
  if (doc.contains("aliases"))
    device.aliases = doc["aliases"].get<std::vector<std::string>>();
  device.name = doc.at("name").get<std::string>();
  device.vendor = doc.at("vendor").get<std::string>();
  device.board = doc.value("board", "");
  device.part = doc.value("part", "");
  device.notes = doc.value("notes", "");
  for (const json &c : doc.at("cores")) {
    Core core;
    core.name = c.at("name").get<std::string>();
    core.type = c.at("type").get<std::string>();
    core.clockMhz = c.at("clock_mhz").get<double>();
    core.fpu = c.at("fpu").get<std::string>();
    core.dspExtension = c.at("dsp_extension").get<bool>();
    core.helium = c.at("helium").get<bool>();
    core.runsBundle = c.at("runs_bundle").get<bool>();
    core.icacheBytes = c.value("icache_bytes", uint64_t(0));
    core.dcacheBytes = c.value("dcache_bytes", uint64_t(0));
    device.cores.push_back(core);
  }
  for (const json &m : doc.at("memory")) {
    MemoryRegionInfo region;
    region.name = m.at("name").get<std::string>();
    region.kind = parseKind(m.at("kind").get<std::string>());
    region.base = m.at("base").get<uint64_t>();
    region.size = m.at("size").get<uint64_t>();
    region.cached = m.at("cached").get<bool>();
    region.readCyclesPerByte = m.at("read_cycles_per_byte").get<double>();
    region.holdsData = m.value("data", true);
    region.external = m.value("external", false);
    region.notes = m.value("notes", "");
    device.memory.push_back(region);
  }
  const json &homes = doc.at("homes");
  device.homes = {homes.at("code"), homes.at("weights_flash"), homes.at("weights_ram"),
                  homes.at("io"), homes.at("activations"), homes.at("sdk_ram"),
                  homes.value("library_ram", homes.at("weights_ram").get<std::string>())};
  if (doc.contains("flexram")) {
    const json &f = doc["flexram"];
    device.flexram = FlexRam{f.at("bank_bytes"), f.at("banks"), f.at("default_itcm_banks"),
                             f.at("default_dtcm_banks"), f.at("default_ocram_banks"),
                             f.at("itcm"), f.at("dtcm"), f.at("ocram")};
  }
  const json &base = doc.at("sdk_baseline");
  device.sdkBaselineFlash = base.at("flash");
  device.sdkBaselineRam = base.at("ram");
  device.sdkBaselineSource = base.at("source");
  for (const auto &item : doc.at("kernel_libraries").items()) {
    const json &l = item.value();
    KernelLibrary library;
    library.key = item.key();
    library.codeBytes = l.at("code_bytes");
    library.flashBytes = l.at("flash_bytes");
    library.ramBytes = l.at("ram_bytes");
    library.core = l.at("core");
    library.cyclesPerMac = l.at("cycles_per_mac");
    library.fcCyclesPerMac = l.value("fc_cycles_per_mac", 0.0);
    library.depthwiseCyclesPerMac = l.value("depthwise_cycles_per_mac", 0.0);
    library.cyclesPerElement = l.at("cycles_per_element");
    library.layerOverheadCycles = l.at("layer_overhead_cycles");
    if (l.contains("ops"))
      library.ops = l["ops"].get<std::vector<std::string>>();
    library.calibrated = l.at("calibrated");
    library.source = l.value("source", "");
    device.libraries[library.key] = library;
  }
  for (const json &s : doc.at("sources"))
    device.sources.push_back({s.at("fact"), s.at("from")});

  // Cross-references the schema cannot express.
  auto bad = [&](const std::string &field, const std::string &problem) {
    throw Error(ExitCode::BadInputFile, file + ": " + field + ": " + problem);
  };
  for (size_t i = 0; i < device.memory.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (device.memory[i].name == device.memory[j].name)
        bad("memory[" + std::to_string(i) + "].name", "duplicate region '" + device.memory[i].name + "'");
  const std::pair<const char *, const std::string *> homeFields[] = {
      {"homes.code", &device.homes.code},        {"homes.weights_flash", &device.homes.weightsFlash},
      {"homes.weights_ram", &device.homes.weightsRam}, {"homes.io", &device.homes.io},
      {"homes.activations", &device.homes.activations}, {"homes.sdk_ram", &device.homes.sdkRam},
      {"homes.library_ram", &device.homes.libraryRam}};
  for (const auto &[field, name] : homeFields)
    if (!device.findRegion(*name))
      bad(field, "names no memory region ('" + *name + "')");
  if (!device.findRegion(device.homes.code)->isFlash())
    bad("homes.code", "must name a flash region");
  if (!device.findRegion(device.homes.weightsFlash)->isFlash())
    bad("homes.weights_flash", "must name a flash region");
  for (const auto &[key, library] : device.libraries)
    if (!device.findCore(library.core))
      bad("kernel_libraries." + key + ".core", "names no core ('" + library.core + "')");
  if (device.flexram)
    for (const std::string *name : {&device.flexram->itcm, &device.flexram->dtcm, &device.flexram->ocram})
      if (!device.findRegion(*name))
        bad("flexram", "names no memory region ('" + *name + "')");
  bool anyRunner = false;
  for (const Core &core : device.cores)
    anyRunner = anyRunner || core.runsBundle;
  if (!anyRunner)
    bad("cores", "no core has runs_bundle: true");
  return device;
}

std::string DeviceDatabase::defaultDirectory() {
  if (const char *env = std::getenv("BUNDLEFIT_DEVICE_DB"))
    return env;
  return BUNDLEFIT_DEVICE_DB_DIR;
}

DeviceDatabase DeviceDatabase::loadDefault() {
  std::string dir = defaultDirectory();
  return load(dir + "/parts", dir + "/schema/device.schema.json");
}

DeviceDatabase DeviceDatabase::load(const std::string &partsDir, const std::string &schemaPath) {
  DeviceDatabase db;
  db.schema_ = readJsonFile(schemaPath);
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(partsDir, ec))
    if (entry.path().extension() == ".json")
      files.push_back(entry.path().string());
  if (ec)
    throw Error(ExitCode::BadInputFile, partsDir + ": cannot read the device database directory");
  std::sort(files.begin(), files.end());
  for (const std::string &file : files)
    db.addFile(file);
  return db;
}

void DeviceDatabase::addFile(const std::string &path) {
  json document = readJsonFile(path);
  validateDeviceDocument(schema_, document, path);
  checkByteFields(document, path);
  Device device = parseDevice(document, path);
  for (Device &existing : devices_)
    if (lower(existing.id) == lower(device.id)) {
      existing = device;
      return;
    }
  devices_.push_back(device);
}

const Device *DeviceDatabase::find(const std::string &name) const {
  std::string wanted = lower(name);
  for (const Device &device : devices_)
    if (lower(device.id) == wanted)
      return &device;
  for (const Device &device : devices_)
    for (const std::string &alias : device.aliases)
      if (lower(alias) == wanted)
        return &device;
  return nullptr;
}

std::string DeviceDatabase::knownNames() const {
  std::string text;
  for (const Device &device : devices_)
    text += (text.empty() ? "" : ", ") + device.id;
  return text;
}

const Device &DeviceDatabase::get(const std::string &name, const std::string &option) const {
  if (const Device *device = find(name))
    return *device;
  throw Error(ExitCode::Usage,
              "unknown device '" + name + "' (option " + option + "); known: " + knownNames());
}

} // namespace bundlefit::device
