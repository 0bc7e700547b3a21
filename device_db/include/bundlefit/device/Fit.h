//===- Fit.h - Does a model fit a part, and where does each byte go --------===//
//
// AN13001's project formulas, per memory region:
//   Flash = SDK base + bundle code + library image + CONSTANT (+ alignment
//           padding when the weights are read in place) + static data images
//   RAM   = SDK base + MUTABLE + ACTIVATIONS (+ the part of CONSTANT copied to
//           RAM) (+ library RAM such as HiFi4 NNLib's) + static data
// "Static data" (FitRequest::extraStaticBytes) is an initialized array such as
// a test image: it costs Flash (its load image) and RAM (its copy), as Table 4's
// "+3,136 Flash +3,136 RAM" row shows. Weights read from Flash are aligned
// after the code (16 bytes: Table 4's "+8 for alignment", 31,064 -> 31,072).
//
// Placement: the SDK's own RAM sits in its linker home (homes.sdk_ram), a
// library image in homes.library_ram; then, fastest region first (lowest
// read_cycles_per_byte, TCM before SRAM before SDRAM), the activation arena,
// the inputs/outputs, static data and, with --weights ram|auto, the weights
// hottest first (hotness = bytes x re-reads per inference, WeightTensor), via
// the planner's multi-region layoutWeights. With `auto` the weights that fit in
// no RAM region stay in Flash; with `ram` they overflow their home region and
// the verdict says so.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/device/CostModel.h"
#include "bundlefit/device/Device.h"
#include "bundlefit/device/Footprint.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace bundlefit::device {

/// Given: each tensor's region named by a placement file (--weights FILE).
enum class WeightsPolicy { Flash, Ram, Auto, Given };
/// flash | ram | auto; anything else is Usage error (a FILE is the driver's:
/// driver/WeightPlacement.h).
WeightsPolicy parseWeightsPolicy(const std::string &text);
const char *weightsPolicyName(WeightsPolicy policy);

/// AN13001's formula inputs (published or planned).
struct ProjectTerms {
  uint64_t baseFlash = 0, baseRam = 0;
  uint64_t code = 0;
  uint64_t constant = 0, mutableBytes = 0, activations = 0;
  uint64_t libraryFlash = 0, libraryRam = 0;
  uint64_t extraStatic = 0;  ///< Initialized data (e.g. a test image): Flash + RAM.
  uint64_t weightsInRam = 0; ///< Bytes of CONSTANT copied to RAM (0..constant).
  uint64_t flashConstAlignment = 16;
};

struct ProjectTotals {
  uint64_t flash = 0;
  uint64_t ram = 0;
  uint64_t flashAlignmentPadding = 0;
};

ProjectTotals projectTotals(const ProjectTerms &terms);

/// Parses --reserve-ram / --reserve-flash values: BYTES, BYTESk/K (KiB) or
/// PCT% (0-100). Throws Error(Usage) naming `option`, which becomes the
/// headroom's origin in reports.
Headroom parseHeadroom(const std::string &text, const std::string &option);

struct FitRequest {
  WeightsPolicy weights = WeightsPolicy::Auto;
  uint64_t extraStaticBytes = 0;
  std::optional<uint64_t> codeBytes; ///< Overrides the footprint's code size.
  /// --app-flash / --app-ram: the application's own footprint, replacing the
  /// part's SDK baseline.
  std::optional<uint64_t> appFlash, appRam;
  /// --reserve-ram / --reserve-flash; when not given, the device file's
  /// "reserve" (Device::reserveRam/reserveFlash) applies.
  Headroom reserveRam, reserveFlash;
  /// WeightsPolicy::Given: the memory region of each weight tensor by name;
  /// tensors it does not name are read in place from Flash. `givenFrom` names
  /// the file for messages.
  std::map<std::string, std::string> givenRegions;
  std::string givenFrom;
};

struct RegionItem {
  std::string what;
  uint64_t bytes = 0;
};

struct RegionUse {
  const MemoryRegionInfo *region = nullptr;
  std::vector<RegionItem> items;
  uint64_t used = 0;
  bool over() const { return used > region->size; }
  /// Above 90% of the region: little left for the application.
  bool tight() const { return region->size && used * 10 > region->size * 9; }
};

struct FitResult {
  bool fits = false;
  Variant variant;
  WeightsPolicy weights = WeightsPolicy::Auto;
  ProjectTerms terms;
  ProjectTotals totals;
  std::vector<RegionUse> regions; ///< Same order as Device::memory.
  /// Which region holds what: code, weights, io, activations, scratch.
  std::vector<std::pair<std::string, std::string>> homes;
  uint64_t weightsInRam = 0, weightsInFlash = 0;
  std::vector<const MemoryRegionInfo *> weightRegion; ///< Per weight tensor.
  const MemoryRegionInfo *activationRegion = nullptr;
  /// Free bytes of each RAM region when the arena is placed, in the order
  /// the arena tries them (fastest first).
  std::vector<uint64_t> arenaRooms;
  std::vector<std::string> problems;
  TimePrediction time;
  uint64_t flashCapacity = 0, ramCapacity = 0;
  std::string baselineSource; ///< Where the SDK/application figures come from.
  /// Regions a FITS verdict leaves above 90% ("DTCM is tight: 95.2% full ...").
  std::vector<std::string> warnings;
};

FitResult fitModel(const Device &device, const ModelFootprint &footprint,
                   const FitRequest &request);

/// FitResult::arenaRooms before any plan: what headroom, the SDK (or
/// application) RAM and the variant's library RAM leave. The memory planner
/// targets the first room the arena's lower bound allows
/// (PlanOptions::activationRooms), so a plan that fits a region is searched
/// for, not left to the greedy allocator.
std::vector<uint64_t> arenaRooms(const Device &device, const Variant &variant,
                                 const FitRequest &request);

/// A change that would make the model fit, checked by fitting the build it
/// describes (the driver's FitSuggestions.h makes them).
struct Suggestion {
  std::string change; ///< "quantize to int8", "weights in Flash", "use part stm32h743"
  bool fits = false;
  uint64_t flash = 0, ram = 0;
  double ms = 0;
  /// The options that make the change: {"--variant", "int8"}.
  std::vector<std::string> options = {};
  /// What is not the build's own figure, and why; empty: all are.
  std::vector<std::string> estimates = {};
};

/// The footprint of a build variant on a part: what the driver library's
/// pipeline produced for it (bundlefit/driver/VariantBuild.h). device_db
/// runs no passes and plans no graph itself.
using FootprintSource = std::function<ModelFootprint(const Device &, const Variant &)>;
/// The footprint of the build placed as the fit of the request places its
/// weights (the code of a placed bundle depends on its weight segments).
using PlacedFootprintSource =
    std::function<ModelFootprint(const Device &, const Variant &, const FitRequest &)>;

/// RT10xx FlexRAM: how to split the 32 KB banks between ITCM, DTCM and OCRAM
/// so that the activations, I/O and as many of the hottest weights as possible
/// sit in DTCM while everything still fits.
struct FlexRamSplit {
  int itcm = 0, dtcm = 0, ocram = 0;
  bool changed = false; ///< Differs from the part's default.
  std::string reason;
  std::optional<FitResult> result; ///< The fit with this split.
};
std::optional<FlexRamSplit> suggestFlexRam(const Device &device, const ModelFootprint &footprint,
                                           const FitRequest &request);
/// The device with its FlexRAM regions resized to `split`.
Device withFlexRam(const Device &device, int itcm, int dtcm, int ocram);

/// What `pick` optimizes: predicted time, then RAM, then Flash (latency), or
/// RAM / Flash first.
enum class PickGoal { Latency, Ram, Flash };
PickGoal parsePickGoal(const std::string &text);
const char *pickGoalName(PickGoal goal);

struct PickRequest {
  std::vector<Variant> variants; ///< Empty: every variant the part has.
  PickGoal goal = PickGoal::Latency;
  /// Let `best` be a candidate bundlefit cannot build or sizes by estimate.
  bool allowEstimates = false;
};

/// `bundlefit pick`: every requested variant x weights Flash/RAM.
struct Candidate {
  Variant variant;
  WeightsPolicy weights = WeightsPolicy::Flash;
  FitResult result;
  bool best = false;
  bool buildable = true;              ///< bundlefit generates this build.
  std::vector<std::string> estimates; ///< What is estimated, and why.
  std::vector<std::string> portable;  ///< ModelFootprint::portable.
  bool eligible(bool allowEstimates) const {
    return result.fits && (allowEstimates || (buildable && estimates.empty()));
  }
};
struct PickResult {
  std::vector<Candidate> candidates;
  int best = -1;
  std::string reason; ///< Why the winner, against the best of every other family.
};
/// The family a variant belongs to for the "why" line: float, int8 or int16x8 (portable
/// kernels), CMSIS-NN, HiFi4.
std::string variantFamily(const Variant &variant);
/// With `placedFootprintOf`, each candidate is sized as the bundle placed for
/// its weights policy (what `compile --device --weights` builds).
PickResult pickBuild(const Device &device, const FitRequest &request,
                     const FootprintSource &footprintOf, const PickRequest &pick = {},
                     const PlacedFootprintSource &placedFootprintOf = {});

/// A row's `estimate` field: null when every figure is the build's, else the
/// list of what is estimated and why.
nlohmann::json estimateJson(const std::vector<std::string> &estimates);

nlohmann::json fitResultJson(const Device &device, const ModelFootprint &footprint,
                             const FitResult &result);

} // namespace bundlefit::device
