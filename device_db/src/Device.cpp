//===- Device.cpp - Loading and validating the device database -------------===//
#include "bundlefit/device/Device.h"
#include "bundlefit/device/Fit.h"

#include "bundlefit/device/JsonSchema.h"
#include "bundlefit/ops/Cmsis.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/InputFile.h"
#include "bundlefit/support/OptionChecks.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <dlfcn.h>
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

/// A part's file is a few KB; 16 MiB is room for any, and a bound for a file
/// that is not one.
constexpr uint64_t kMaxDeviceFileBytes = uint64_t(16) << 20;

json readJsonFile(const std::string &path) {
  const std::string text = readInputFile(path, "device file", kMaxDeviceFileBytes);
  try {
    return json::parse(text);
  } catch (const json::exception &e) { // parse_error, and out_of_range for 1e999
    throw Error(ExitCode::BadInputFile, path + ": not valid JSON: " + e.what());
  }
}

/// The largest byte count a device file may state (kMaxByteCount, 1 TiB): the
/// schema only says "integer", so 2^64, 1.5e300 or 2^64-1 would otherwise wrap
/// the sums fit computes and report FITS.
constexpr uint64_t kMaxDeviceBytes = kMaxByteCount;
constexpr uint64_t kMaxFlexRamBanks = 64;

/// Byte counts and addresses must be integers in [0, kMaxDeviceBytes]
/// (addresses below 2^64); throws naming the file and the field.
void checkByteFields(const json &doc, const std::string &file) {
  auto check = [&](const json &object, const char *key, const std::string &where, uint64_t limit) {
    if (!object.is_object() || !object.contains(key))
      return;
    const json &value = object[key];
    if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<int64_t>() >= 0))
      throw Error(ExitCode::BadInputFile, file + ": " + where + key + ": " + value.dump() +
                                              " is not a non-negative integer byte count");
    if (value.get<uint64_t>() > limit)
      throw Error(ExitCode::BadInputFile, file + ": " + where + key + ": " + value.dump() +
                                              " is larger than " + std::to_string(limit) +
                                              " bytes");
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
    for (const char *key :
         {"banks", "default_itcm_banks", "default_dtcm_banks", "default_ocram_banks"})
      check(doc["flexram"], key, "flexram.", kMaxFlexRamBanks);
  }
  if (doc.contains("kernel_libraries") && doc["kernel_libraries"].is_object())
    for (const auto &item : doc["kernel_libraries"].items())
      for (const char *key : {"code_bytes", "flash_bytes", "ram_bytes"})
        check(item.value(), key, "kernel_libraries." + item.key() + ".", kMaxDeviceBytes);
}

MemoryKind parseKind(const std::string &text) {
  if (text == "flash")
    return MemoryKind::Flash;
  if (text == "tcm")
    return MemoryKind::Tcm;
  if (text == "sdram")
    return MemoryKind::Sdram;
  return MemoryKind::Sram;
}

MemoryRegionInfo parseRegion(const json &m) {
  MemoryRegionInfo region;
  region.name = m.at("name").get<std::string>();
  region.kind = parseKind(m.at("kind").get<std::string>());
  region.base = m.at("base").get<uint64_t>();
  region.size = m.at("size").get<uint64_t>();
  region.cached = m.at("cached").get<bool>();
  region.readCyclesPerByte = m.at("read_cycles_per_byte").get<double>();
  region.holdsData = m.value("data", true);
  region.external = m.value("external", false);
  region.waitStates = m.value("wait_states", -1);
  region.source = m.value("source", "");
  region.notes = m.value("notes", "");
  return region;
}

CostProvenance parseProvenance(const std::string &text) {
  if (text == "published")
    return CostProvenance::Published;
  if (text == "measured")
    return CostProvenance::Measured;
  return CostProvenance::Carried;
}

[[noreturn]] void badField(const std::string &file, const std::string &field,
                           const std::string &problem) {
  throw Error(ExitCode::BadInputFile, file + ": " + field + ": " + problem);
}

/// Cross-references the schema cannot express, for parts and resolved boards.
void checkReferences(const Device &device, const std::string &file) {
  auto bad = [&](const std::string &field, const std::string &problem) {
    badField(file, field, problem);
  };
  for (size_t i = 0; i < device.memory.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (device.memory[i].name == device.memory[j].name)
        bad("memory[" + std::to_string(i) + "].name",
            "duplicate region '" + device.memory[i].name + "'");
  const std::pair<const char *, const std::string *> homeFields[] = {
      {"homes.code", &device.homes.code},
      {"homes.weights_flash", &device.homes.weightsFlash},
      {"homes.weights_ram", &device.homes.weightsRam},
      {"homes.io", &device.homes.io},
      {"homes.activations", &device.homes.activations},
      {"homes.sdk_ram", &device.homes.sdkRam},
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
    for (const std::string *name :
         {&device.flexram->itcm, &device.flexram->dtcm, &device.flexram->ocram})
      if (!device.findRegion(*name))
        bad("flexram", "names no memory region ('" + *name + "')");
  bool anyRunner = false;
  for (const Core &core : device.cores)
    anyRunner = anyRunner || core.runsBundle;
  if (!anyRunner)
    bad("cores", "no core has runs_bundle: true");
}

} // namespace

const char *memoryKindName(MemoryKind kind) {
  switch (kind) {
  case MemoryKind::Flash:
    return "flash";
  case MemoryKind::Sram:
    return "sram";
  case MemoryKind::Tcm:
    return "tcm";
  case MemoryKind::Sdram:
    return "sdram";
  }
  return "?";
}

const char *costProvenanceName(CostProvenance provenance) {
  switch (provenance) {
  case CostProvenance::Published:
    return "published";
  case CostProvenance::Measured:
    return "measured";
  case CostProvenance::Carried:
    return "carried";
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
  if (violations.empty()) {
    // The schema says "integer"; the byte counts and bank counts must also
    // be small enough to add up and to search (every caller, the fuzzer too).
    checkByteFields(document, file);
    return;
  }
  std::string message;
  for (size_t i = 0; i < violations.size(); ++i)
    message += (i ? "\n" : "") + file + ": " + violations[i].str();
  throw Error(ExitCode::BadInputFile, message);
}

/// "reserve": {"ram": "16K", "flash": "10%"}: the headroom a project on this
/// part or board keeps free unless --reserve-ram / --reserve-flash say otherwise.
void readReserve(const json &doc, const std::string &file, Device &device) {
  if (!doc.contains("reserve"))
    return;
  const json &reserve = doc["reserve"];
  const std::string shortName = std::filesystem::path(file).filename().string();
  const std::pair<const char *, Headroom *> fields[] = {{"ram", &device.reserveRam},
                                                        {"flash", &device.reserveFlash}};
  for (const auto &[key, target] : fields) {
    if (!reserve.contains(key))
      continue;
    const std::string field = std::string("reserve.") + key;
    try {
      *target = parseHeadroom(reserve[key].get<std::string>(), field);
    } catch (const Error &e) {
      throw Error(ExitCode::BadInputFile, file + ": " + e.what());
    }
    target->origin = field + " of " + shortName;
  }
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
    core.source = c.value("source", "");
    device.cores.push_back(core);
  }
  for (const json &m : doc.at("memory"))
    device.memory.push_back(parseRegion(m));
  const json &homes = doc.at("homes");
  device.homes = {homes.at("code"),
                  homes.at("weights_flash"),
                  homes.at("weights_ram"),
                  homes.at("io"),
                  homes.at("activations"),
                  homes.at("sdk_ram"),
                  homes.value("library_ram", homes.at("weights_ram").get<std::string>())};
  if (doc.contains("flexram")) {
    const json &f = doc["flexram"];
    device.flexram = FlexRam{f.at("bank_bytes"),
                             f.at("banks"),
                             f.at("default_itcm_banks"),
                             f.at("default_dtcm_banks"),
                             f.at("default_ocram_banks"),
                             f.at("itcm"),
                             f.at("dtcm"),
                             f.at("ocram")};
  }
  const json &base = doc.at("sdk_baseline");
  device.sdkBaselineFlash = base.at("flash");
  device.sdkBaselineRam = base.at("ram");
  device.sdkBaselineSource = base.at("source");
  readReserve(doc, file, device);
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
    // CMSIS-NN's ops are the ones bundlefit maps to it (the op schema's
    // cmsisFunction), not a list each device file repeats; a library
    // bundlefit does not generate calls for (NNLib) lists what it covers.
    if (l.contains("ops"))
      library.ops = l["ops"].get<std::vector<std::string>>();
    else if (library.key == "cmsis_nn")
      library.ops = cmsisNnOps();
    library.calibrated = l.at("calibrated");
    library.source = l.value("source", "");
    // Without an explicit provenance a calibrated library rests on a
    // published figure for this part and an uncalibrated one is carried.
    if (l.contains("provenance")) {
      library.provenance = parseProvenance(l["provenance"].at("kind"));
      library.provenanceFrom = l["provenance"].at("from");
    } else {
      library.provenance = library.calibrated ? CostProvenance::Published : CostProvenance::Carried;
      library.provenanceFrom = library.source;
    }
    if (l.contains("comparison")) {
      const json &c = l["comparison"];
      library.comparison = KernelLibrary::Comparison{
          c.at("cycles_per_mac"), c.at("cycles_per_element"), c.at("what"), c.at("from")};
    }
    device.libraries[library.key] = library;
  }
  for (const json &s : doc.at("sources"))
    device.sources.push_back({s.at("fact"), s.at("from")});

  checkReferences(device, file);
  return device;
}

Device resolveBoard(const json &doc, const Device &part, const std::string &file) {
  Device device = part;
  device.file = file;
  device.id = doc.at("id").get<std::string>();
  device.aliases = doc.value("aliases", std::vector<std::string>{});
  device.name = doc.at("name").get<std::string>();
  device.vendor = doc.at("vendor").get<std::string>();
  device.board = doc.at("board").get<std::string>();
  device.part = part.id;
  device.notes = doc.value("notes", part.notes);
  if (doc.contains("memory")) {
    const json &memory = doc["memory"];
    for (size_t i = 0; i < memory.size(); ++i) {
      MemoryRegionInfo region = parseRegion(memory[i]);
      if (part.findRegion(region.name))
        badField(file, "memory[" + std::to_string(i) + "].name",
                 "region '" + region.name + "' is already in part " + part.id +
                     " (a board adds regions; it does not redefine the part's)");
      device.memory.push_back(region);
    }
  }
  if (doc.contains("homes")) {
    const json &homes = doc["homes"];
    const std::pair<const char *, std::string *> fields[] = {
        {"code", &device.homes.code},
        {"weights_flash", &device.homes.weightsFlash},
        {"weights_ram", &device.homes.weightsRam},
        {"io", &device.homes.io},
        {"activations", &device.homes.activations},
        {"sdk_ram", &device.homes.sdkRam},
        {"library_ram", &device.homes.libraryRam}};
    for (const auto &[key, target] : fields)
      if (homes.contains(key))
        *target = homes[key].get<std::string>();
  }
  if (doc.contains("sdk_baseline")) {
    const json &base = doc["sdk_baseline"];
    device.sdkBaselineFlash = base.at("flash");
    device.sdkBaselineRam = base.at("ram");
    device.sdkBaselineSource = base.at("source");
  }
  readReserve(doc, file, device);
  for (const json &s : doc.at("sources"))
    device.sources.push_back({s.at("fact"), s.at("from")});
  checkReferences(device, file);
  return device;
}

namespace {

/// The database `cmake --install` put beside the binary this code runs in:
/// <prefix>/share/bundlefit/device_db for <prefix>/bin/bundlefit and for
/// <prefix>/lib/python3.X/dist-packages/bundlefit.*.so. Empty in a build
/// tree. So an install to any prefix (a cluster node without the sources)
/// reads its own parts.
std::string installedDirectory() {
  Dl_info info;
  fs::path binary;
  std::error_code ec;
  if (::dladdr(reinterpret_cast<void *>(&installedDirectory), &info) && info.dli_fname &&
      std::string(info.dli_fname).find(".so") != std::string::npos)
    binary = info.dli_fname; // the Python module
  else
    binary = fs::read_symlink("/proc/self/exe", ec);
  fs::path dir = fs::absolute(binary, ec).parent_path();
  for (int up = 0; up < 4 && !dir.empty(); ++up, dir = dir.parent_path()) {
    fs::path candidate = dir / "share" / "bundlefit" / "device_db";
    if (fs::is_regular_file(candidate / "schema" / "device.schema.json", ec))
      return candidate.string();
    if (dir == dir.parent_path())
      break;
  }
  return "";
}

} // namespace

std::string DeviceDatabase::defaultDirectory() {
  if (const char *env = std::getenv("BUNDLEFIT_DEVICE_DB"))
    return env;
  static const std::string installed = installedDirectory();
  return installed.empty() ? BUNDLEFIT_DEVICE_DB_DIR : installed;
}

DeviceDatabase DeviceDatabase::loadDefault() {
  std::string dir = defaultDirectory();
  return load(dir + "/parts", dir + "/schema/device.schema.json", dir + "/boards");
}

namespace {

std::vector<std::string> jsonFilesIn(const std::string &dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto &entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == ".json")
      files.push_back(entry.path().string());
  if (ec)
    throw Error(ExitCode::BadInputFile, dir + ": cannot read the device database directory");
  std::sort(files.begin(), files.end());
  return files;
}

} // namespace

DeviceDatabase DeviceDatabase::load(const std::string &partsDir, const std::string &schemaPath,
                                    const std::string &boardsDir) {
  DeviceDatabase db;
  db.schema_ = readJsonFile(schemaPath);
  // The board schema lives beside the part schema; without it only parts load.
  std::string boardSchemaPath = (fs::path(schemaPath).parent_path() / "board.schema.json").string();
  if (fs::exists(boardSchemaPath))
    db.boardSchema_ = readJsonFile(boardSchemaPath);
  // One broken file (a FIFO, a truncated part) is left out with a warning
  // naming it; every other part still loads (readInputFile opens no FIFO).
  // An internal error is bundlefit's, not the file's (an operator registry
  // that failed to build fails every part): it ends the command, or
  // `devices` would list nothing and exit 0.
  auto addEntry = [&](const std::string &file) {
    try {
      db.addDatabaseFile(file);
    } catch (const Error &e) {
      if (e.code() == ExitCode::Internal)
        throw;
      db.warnings_.push_back(std::string(e.what()) + " (left out of the device database)");
    }
  };
  for (const std::string &file : jsonFilesIn(partsDir))
    addEntry(file);
  // Boards after every part, so a board may name any part. A database
  // without a boards/ folder (an older BUNDLEFIT_DEVICE_DB copy) has none.
  if (!boardsDir.empty() && fs::exists(boardsDir))
    for (const std::string &file : jsonFilesIn(boardsDir))
      addEntry(file);
  return db;
}

void DeviceDatabase::addFile(const std::string &path) { addFileChecked(path, true); }

void DeviceDatabase::addDatabaseFile(const std::string &path) { addFileChecked(path, false); }

void DeviceDatabase::addFileChecked(const std::string &path, bool userFile) {
  std::error_code ec;
  for (const std::string &file : files_)
    if (fs::equivalent(file, path, ec))
      return;
  json document = readJsonFile(path);
  if (document.is_object() && document.value("schema", json()) == "bundlefit.board/1") {
    if (boardSchema_.is_null())
      throw Error(ExitCode::BadInputFile,
                  path +
                      ": schema: a board file, but no board.schema.json beside the device schema");
    std::vector<SchemaViolation> violations =
        validateJson(boardSchema_, document, {{"device.schema.json", schema_}});
    std::string message;
    for (size_t i = 0; i < violations.size(); ++i)
      message += (i ? "\n" : "") + path + ": " + violations[i].str();
    if (!message.empty())
      throw Error(ExitCode::BadInputFile, message);
    std::string partName = document.at("part");
    const Device *part = find(partName);
    if (!part || !part->board.empty()) {
      std::string parts;
      for (const Device &device : devices_)
        if (device.board.empty())
          parts += (parts.empty() ? "" : ", ") + device.id;
      badField(path, "part", "names no part ('" + partName + "'); known parts: " + parts);
    }
    add(resolveBoard(document, *part, path), path, userFile);
    return;
  }
  validateDeviceDocument(schema_, document, path);
  add(parseDevice(document, path), path, userFile);
}

void DeviceDatabase::add(Device device, const std::string &path, bool userFile) {
  // The database's own files may name a board after its part's alias (the
  // board "pico" of the part rp2040): ids are found before aliases. A user's
  // file may take no name that is already a device's.
  std::vector<std::string> names = userFile ? device.aliases : std::vector<std::string>();
  names.insert(names.begin(), device.id);
  for (const std::string &name : names)
    for (size_t i = 0; i < devices_.size(); ++i) {
      std::vector<std::string> taken = userFile ? devices_[i].aliases : std::vector<std::string>();
      taken.insert(taken.begin(), devices_[i].id);
      for (const std::string &other : taken)
        if (lower(other) == lower(name))
          badField(path, name == device.id ? "id" : "aliases",
                   "'" + name + "' is already " +
                       (other == devices_[i].id ? "the id" : "an alias") + " of " + devices_[i].id +
                       " (" + files_[i] + "); give this part an id and aliases of its own");
    }
  devices_.push_back(std::move(device));
  files_.push_back(path);
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

std::string DeviceDatabase::didYouMean(const std::string &name) const {
  // The ids and aliases within a third of the name's length in edits, nearest first.
  auto distance = [](std::string a, std::string b) {
    for (char &c : a)
      c = char(std::tolower((unsigned char)c));
    for (char &c : b)
      c = char(std::tolower((unsigned char)c));
    std::vector<size_t> row(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j)
      row[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= b.size(); ++j) {
        size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
        diagonal = up;
      }
    }
    return row[b.size()];
  };
  std::vector<std::pair<size_t, std::string>> near;
  const size_t limit = std::max<size_t>(2, name.size() / 3);
  for (const Device &device : devices_) {
    size_t best = distance(name, device.id);
    for (const std::string &alias : device.aliases)
      best = std::min(best, distance(name, alias));
    if (best <= limit)
      near.push_back({best, device.id});
  }
  std::stable_sort(near.begin(), near.end());
  if (near.empty())
    return ";";
  std::string text = "; did you mean " + near[0].second;
  for (size_t i = 1; i < near.size() && i < 3; ++i)
    text += (i + 1 == std::min<size_t>(near.size(), 3) ? " or " : ", ") + near[i].second;
  return text + "?";
}

const Device &DeviceDatabase::get(const std::string &name, const std::string &option) const {
  if (const Device *device = find(name))
    return *device;
  throw Error(ExitCode::Usage, "unknown device '" + name + "' (option " + option + ")" +
                                   didYouMean(name) + " known: " + knownNames());
}

} // namespace bundlefit::device
