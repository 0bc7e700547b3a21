//===- Device.h - Parts and boards from the device database ----------------===//
//
// One JSON file per part in device_db/parts/ (device_db/schema/
// device.schema.json) and one per board in device_db/boards/ (board.schema.json:
// the board names its part and adds memory; nothing is copied). Every file is
// validated when it is loaded; errors name the file and the field
// ("device_db/parts/rt1062.json: memory[2].size: expected integer"). Users add
// their own parts or boards with --device-file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bundlefit::device {

struct Core {
  std::string name;
  std::string type; ///< "cortex-m7", "hifi4", ...
  double clockMhz = 0;
  std::string fpu; ///< none | sp | dp
  bool dspExtension = false;
  bool helium = false;
  bool runsBundle = false;
  uint64_t icacheBytes = 0;
  uint64_t dcacheBytes = 0;
  std::string source; ///< Where type, clock and caches come from.
};

enum class MemoryKind { Flash, Sram, Tcm, Sdram };
const char *memoryKindName(MemoryKind kind);

struct MemoryRegionInfo {
  std::string name;
  MemoryKind kind = MemoryKind::Sram;
  uint64_t base = 0;
  uint64_t size = 0;
  bool cached = false;
  double readCyclesPerByte = 0; ///< Extra core cycles per byte streamed from here.
  bool holdsData = true;
  bool external = false;
  int waitStates = -1; ///< Flash wait states at the core clock; -1 when not given.
  std::string source;  ///< Where base/size/wait states come from.
  std::string notes;
  bool isFlash() const { return kind == MemoryKind::Flash; }
};

struct Homes {
  std::string code, weightsFlash, weightsRam, io, activations, sdkRam, libraryRam;
};

struct FlexRam {
  uint64_t bankBytes = 0;
  int banks = 0;
  int defaultItcm = 0, defaultDtcm = 0, defaultOcram = 0;
  std::string itcm, dtcm, ocram;
};

/// What a library's throughput figures rest on, strongest first.
enum class CostProvenance {
  Published, ///< Calibrated on a published timing of this part.
  Measured,  ///< Derived from instruction counts measured on the same core type.
  Carried,   ///< Copied from another part or core type.
};
const char *costProvenanceName(CostProvenance provenance); ///< published | measured | carried

/// A kernel library's footprint and throughput on this part.
struct KernelLibrary {
  std::string key; ///< portable_float | portable_int8 | cmsis_nn | hifi4_nnlib
  uint64_t codeBytes = 0;
  uint64_t flashBytes = 0;
  uint64_t ramBytes = 0;
  std::string core;
  double cyclesPerMac = 0;
  double fcCyclesPerMac = 0;        ///< 0: same as cyclesPerMac.
  double depthwiseCyclesPerMac = 0; ///< 0: same as cyclesPerMac.
  double cyclesPerElement = 0;      ///< Per output element of a layer without MACs.
  double layerOverheadCycles = 0;
  std::vector<std::string> ops; ///< Empty: every op.
  bool calibrated = false;
  CostProvenance provenance = CostProvenance::Carried;
  std::string provenanceFrom; ///< The publication, measurement file or part it rests on.
  std::string source;
  /// Figures of other kernels kept beside the library's own for comparison
  /// (AN13001's Glow int8 kernels on the RT1062 and RT685): shown by
  /// `devices --calibration` and `devices --json`, never used to predict.
  struct Comparison {
    double cyclesPerMac = 0;
    double cyclesPerElement = 0;
    std::string what; ///< Whose kernels: "Glow's int8 kernels (AN13001)".
    std::string from; ///< The publication.
  };
  std::optional<Comparison> comparison;
  bool implements(const std::string &opType) const;
};

struct Source {
  std::string fact, from;
};

/// Room kept free for the application: bytes (in the SDK's home region) or a
/// percentage of every region of the kind.
struct Headroom {
  uint64_t bytes = 0;
  double percent = 0;
  /// Who asked for it, for reports: "--reserve-ram", "reserve.ram of boards/x.json".
  std::string origin;
  bool any() const { return bytes || percent > 0; }
  std::string str() const; ///< "16,384 B" | "20%"
};

struct Device {
  std::string id;
  std::vector<std::string> aliases;
  std::string name, vendor, board, part, notes; ///< board/part: set for boards.
  std::vector<Core> cores;
  std::vector<MemoryRegionInfo> memory;
  Homes homes;
  std::optional<FlexRam> flexram;
  uint64_t sdkBaselineFlash = 0, sdkBaselineRam = 0;
  std::string sdkBaselineSource;
  /// The file's "reserve": room a project on this part keeps free by default
  /// (--reserve-ram / --reserve-flash override it).
  Headroom reserveRam, reserveFlash;
  std::map<std::string, KernelLibrary> libraries;
  std::vector<Source> sources;
  std::string file; ///< Where it was loaded from.

  const Core &bundleCore() const; ///< The core that runs the bundle.
  const Core *findCore(const std::string &name) const;
  const MemoryRegionInfo *findRegion(const std::string &name) const;
  const KernelLibrary *findLibrary(const std::string &key) const;
  uint64_t totalFlash() const;
  uint64_t totalRam() const;
};

/// Parses a validated device document (throws Error(BadInputFile) naming
/// `file` and the field when a cross-reference is wrong, e.g. a home that
/// names no region).
Device parseDevice(const nlohmann::json &document, const std::string &file);

/// A validated board document on top of its part: the part's cores, memory,
/// homes and libraries, plus the board's regions, home overrides, SDK
/// baseline and sources. Throws Error(BadInputFile) naming `file` and the
/// field on a clash (a board region named like a part region, a home that
/// names no region).
Device resolveBoard(const nlohmann::json &document, const Device &part, const std::string &file);

class DeviceDatabase {
public:
  /// Loads every *.json in `partsDir` (sorted), validating each against the
  /// schema at `schemaPath`, then every board in `boardsDir` (if given)
  /// against board.schema.json beside it. A file that does not load (not a
  /// regular file, not valid, an id taken) is left out with a warning naming
  /// it (warnings()), so one broken entry does not take every part with it;
  /// an unreadable schema or directory throws Error(BadInputFile).
  static DeviceDatabase load(const std::string &partsDir, const std::string &schemaPath,
                             const std::string &boardsDir = "");
  /// The shipped database (BUNDLEFIT_DEVICE_DB_DIR, overridable with the
  /// environment variable BUNDLEFIT_DEVICE_DB).
  static DeviceDatabase loadDefault();
  static std::string defaultDirectory();

  /// Adds one user file, a part or a board (by its "schema" field; validated
  /// the same way). Error(BadInputFile) naming the file when its id or an
  /// alias is already a device's (a built-in part is never replaced
  /// silently); the same file given twice is added once.
  void addFile(const std::string &path);

  /// The database files left out, one line each: "<file>: <why>".
  const std::vector<std::string> &warnings() const { return warnings_; }

  /// By id or alias (case-insensitive). nullptr if unknown.
  const Device *find(const std::string &name) const;
  /// Throws Error(Usage, "unknown device 'x' (option --device); known: ...").
  const Device &get(const std::string &name, const std::string &option = "--device") const;
  const std::vector<Device> &devices() const { return devices_; }
  std::string knownNames() const;
  /// "; did you mean rt1062?" for a misspelt id or alias (";" when none is near).
  std::string didYouMean(const std::string &name) const;

private:
  void addDatabaseFile(const std::string &path);
  void addFileChecked(const std::string &path, bool userFile);
  void add(Device device, const std::string &path, bool userFile);
  nlohmann::json schema_, boardSchema_;
  std::vector<Device> devices_;
  std::vector<std::string> files_; ///< The file of each device, by index.
  std::vector<std::string> warnings_;
};

/// Validates `document` from `file`; throws Error(BadInputFile) whose message
/// lists every violation as "<file>: <field>: <problem>".
void validateDeviceDocument(const nlohmann::json &schema, const nlohmann::json &document,
                            const std::string &file);

} // namespace bundlefit::device
