//===- Fit.cpp - Fit verdicts, placement, suggestions, pick ----------------===//
#include "bundlefit/device/Fit.h"

#include "bundlefit/planner/WeightLayout.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/Format.h"
#include "bundlefit/support/OptionChecks.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>

namespace bundlefit::device {

namespace {

int kindRank(MemoryKind kind) {
  switch (kind) {
  case MemoryKind::Tcm:
    return 0;
  case MemoryKind::Sram:
    return 1;
  case MemoryKind::Sdram:
    return 2;
  case MemoryKind::Flash:
    return 3;
  }
  return 3;
}

int regionIndex(const Device &device, const std::string &name) {
  for (size_t i = 0; i < device.memory.size(); ++i)
    if (device.memory[i].name == name)
      return int(i);
  fatalInternal("device " + device.id + " has no region " + name);
}

/// The region a placement file gives weight `name` (Flash when it names none).
int givenRegion(const Device &device, const FitRequest &request, const std::string &name,
                int flash) {
  auto it = request.givenRegions.find(name);
  if (it == request.givenRegions.end())
    return flash;
  for (size_t i = 0; i < device.memory.size(); ++i)
    if (device.memory[i].name == it->second) {
      if (!device.memory[i].holdsData)
        throw Error(ExitCode::Usage, request.givenFrom + ": weight '" + name + "' placed in " +
                                         it->second + ", which holds no data on " + device.id);
      return int(i);
    }
  throw Error(ExitCode::Usage, request.givenFrom + ": weight '" + name + "' placed in region '" +
                                   it->second + "', which " + device.id + " does not have");
}

std::string kb(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f KB", double(bytes) / 1024.0);
  return text;
}

} // namespace

WeightsPolicy parseWeightsPolicy(const std::string &text) {
  if (text == "flash")
    return WeightsPolicy::Flash;
  if (text == "ram")
    return WeightsPolicy::Ram;
  if (text == "auto")
    return WeightsPolicy::Auto;
  throw Error(ExitCode::Usage, "unknown weights placement '" + text +
                                   "' (option --weights); known: flash, ram, auto");
}

const char *weightsPolicyName(WeightsPolicy policy) {
  switch (policy) {
  case WeightsPolicy::Flash:
    return "flash";
  case WeightsPolicy::Ram:
    return "ram";
  case WeightsPolicy::Auto:
    return "auto";
  case WeightsPolicy::Given:
    return "given";
  }
  return "?";
}

namespace {

/// The sum of byte counts, which every caller bounded where they came in (1
/// TiB an option or device field, 1 TiB a tensor): a sum past 2^64 is a bug,
/// never a wrapped total that looks like a fit.
uint64_t sumOfBytes(std::initializer_list<uint64_t> terms) {
  uint64_t sum = 0;
  for (uint64_t term : terms) {
    std::optional<uint64_t> next = checkedAdd(sum, term);
    if (!next)
      fatalInternal("a Flash or RAM total overflows 64 bits");
    sum = *next;
  }
  return sum;
}

/// Every quantity of a request is a byte count from an option or a Python
/// argument, already checked there (OptionChecks.h); checked again here, so
/// that no caller can hand fit a wrapped value.
void checkRequest(const FitRequest &request) {
  checkByteCount(request.extraStaticBytes, "--static-bytes");
  if (request.codeBytes)
    checkByteCount(*request.codeBytes, "--code-bytes");
  if (request.appFlash)
    checkByteCount(*request.appFlash, "--app-flash");
  if (request.appRam)
    checkByteCount(*request.appRam, "--app-ram");
  checkByteCount(request.reserveFlash.bytes, "--reserve-flash");
  checkByteCount(request.reserveRam.bytes, "--reserve-ram");
}

} // namespace

ProjectTotals projectTotals(const ProjectTerms &t) {
  ProjectTotals totals;
  uint64_t beforeWeights = sumOfBytes({t.baseFlash, t.code, t.libraryFlash});
  if (t.weightsInRam < t.constant)
    totals.flashAlignmentPadding = alignUp(beforeWeights, t.flashConstAlignment) - beforeWeights;
  totals.flash =
      sumOfBytes({beforeWeights, totals.flashAlignmentPadding, t.constant, t.extraStatic});
  totals.ram = sumOfBytes(
      {t.baseRam, t.mutableBytes, t.activations, t.extraStatic, t.libraryRam, t.weightsInRam});
  return totals;
}

std::string Headroom::str() const {
  if (percent > 0) {
    char text[32];
    std::snprintf(text, sizeof text, "%g%%", percent);
    return text;
  }
  return withThousands(bytes) + " B";
}

Headroom parseHeadroom(const std::string &text, const std::string &option) {
  Headroom h;
  h.origin = option;
  auto bad = [&]() {
    return Error(ExitCode::Usage,
                 option + " " + text + ": expected BYTES, BYTESK (KiB) or PERCENT% (0-100)");
  };
  if (text.empty())
    throw bad();
  char *end = nullptr;
  if (text.back() == '%') {
    h.percent = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() - 1 || !(h.percent >= 0 && h.percent <= 100))
      throw bad();
    return h;
  }
  if (text[0] == '-')
    throw bad();
  errno = 0;
  unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  uint64_t scale = 1;
  if (*end == 'k' || *end == 'K')
    scale = 1024, ++end;
  if (end == text.c_str() || *end != '\0' || errno == ERANGE || value > UINT64_MAX / scale)
    throw bad();
  h.bytes = value * scale;
  checkByteCount(h.bytes, option); // 2^64 - 12000 once wrapped the RAM total into a FITS
  return h;
}

FitResult fitModel(const Device &device, const ModelFootprint &fp, const FitRequest &request) {
  checkRequest(request);
  FitResult result;
  result.variant = fp.variant;
  result.weights = request.weights;
  for (const MemoryRegionInfo &region : device.memory) {
    result.regions.push_back({&region, {}, 0});
    if (region.isFlash())
      result.flashCapacity += region.size;
    else if (region.holdsData)
      result.ramCapacity += region.size;
  }
  auto add = [&](int index, const std::string &what, uint64_t bytes) {
    if (bytes == 0)
      return;
    result.regions[index].items.push_back({what, bytes});
    result.regions[index].used = sumOfBytes({result.regions[index].used, bytes});
  };
  auto remaining = [&](int index) {
    const RegionUse &use = result.regions[index];
    return use.used >= use.region->size ? 0 : use.region->size - use.used;
  };

  ProjectTerms &t = result.terms;
  t.baseFlash = request.appFlash ? *request.appFlash : device.sdkBaselineFlash;
  t.baseRam = request.appRam ? *request.appRam : device.sdkBaselineRam;
  if (request.appFlash || request.appRam)
    result.baselineSource =
        std::string("application footprint given (") +
        (request.appFlash ? "--app-flash " + withThousands(*request.appFlash) : "") +
        (request.appFlash && request.appRam ? ", " : "") +
        (request.appRam ? "--app-ram " + withThousands(*request.appRam) : "") + ")" +
        (request.appFlash && request.appRam
             ? ""
             : "; the rest: SDK baseline, " + device.sdkBaselineSource);
  else
    result.baselineSource = "SDK baseline: " + device.sdkBaselineSource;
  t.code = request.codeBytes ? *request.codeBytes : fp.codeBytes;
  t.constant = fp.constantBytes;
  t.mutableBytes = fp.mutableBytes;
  t.activations = fp.activationsBytes;
  t.libraryFlash = fp.libraryFlashBytes;
  t.libraryRam = fp.libraryRamBytes;
  t.extraStatic = request.extraStaticBytes;

  const int flash = regionIndex(device, device.homes.code);
  const int weightsFlash = regionIndex(device, device.homes.weightsFlash);
  const KernelLibrary &library = mainLibrary(device, fp.variant);
  // Headroom first, so that placement leaves it free. A value given on the
  // command line (it has an origin, even "0") replaces the device file's, kind by kind.
  const Headroom &reserveFlash =
      request.reserveFlash.origin.empty() ? device.reserveFlash : request.reserveFlash;
  const Headroom &reserveRam =
      request.reserveRam.origin.empty() ? device.reserveRam : request.reserveRam;
  auto headroomLabel = [](const Headroom &h) {
    return "headroom reserved (" + h.origin + " " + h.str() + ")";
  };
  for (size_t i = 0; i < device.memory.size(); ++i) {
    const MemoryRegionInfo &region = device.memory[i];
    const Headroom &h = region.isFlash() ? reserveFlash : reserveRam;
    if (h.percent > 0 && (region.isFlash() || region.holdsData))
      add(int(i), headroomLabel(h), uint64_t(double(region.size) * h.percent / 100.0));
  }
  if (reserveFlash.bytes)
    add(flash, headroomLabel(reserveFlash), reserveFlash.bytes);
  if (reserveRam.bytes)
    add(regionIndex(device, device.homes.sdkRam), headroomLabel(reserveRam), reserveRam.bytes);
  add(flash,
      std::string(request.appFlash ? "application (--app-flash)"
                                   : "SDK project (code, rodata, data image)"),
      t.baseFlash);
  add(flash,
      std::string("bundle code (") +
          (request.codeBytes  ? "given"
           : fp.codeEstimated ? "estimate"
                              : "compiled") +
          ")",
      t.code);
  add(flash, library.key + " image", t.libraryFlash);
  add(regionIndex(device, device.homes.sdkRam),
      request.appRam ? "application (--app-ram)" : "SDK project (.data, .bss, stack, heap)",
      t.baseRam);
  if (t.libraryRam) {
    int libraryRam = regionIndex(device, device.homes.libraryRam);
    add(libraryRam, library.key + " image copied to RAM", t.libraryRam);
    result.homes.push_back({library.key, device.homes.libraryRam});
  }

  // RAM regions, fastest first.
  std::vector<int> ramOrder;
  for (size_t i = 0; i < device.memory.size(); ++i)
    if (!device.memory[i].isFlash() && device.memory[i].holdsData)
      ramOrder.push_back(int(i));
  std::stable_sort(ramOrder.begin(), ramOrder.end(), [&](int a, int b) {
    const MemoryRegionInfo &x = device.memory[a], &y = device.memory[b];
    if (x.readCyclesPerByte != y.readCyclesPerByte)
      return x.readCyclesPerByte < y.readCyclesPerByte;
    if (kindRank(x.kind) != kindRank(y.kind))
      return kindRank(x.kind) < kindRank(y.kind);
    // Among equals the activations' home first (DTCM before ITCM on RT10xx).
    return x.name == device.homes.activations && y.name != device.homes.activations;
  });
  auto placeFast = [&](const std::string &what, uint64_t bytes, const std::string &home) {
    int chosen = regionIndex(device, home);
    for (int index : ramOrder)
      if (remaining(index) >= bytes) {
        chosen = index;
        break;
      }
    add(chosen, what, bytes);
    return chosen;
  };
  std::string arenaLabel = "activations arena";
  if (fp.scratchBytes)
    arenaLabel += " (incl. kernel scratch, largest " + std::to_string(fp.scratchBytes) + " B)";
  for (int index : ramOrder)
    result.arenaRooms.push_back(remaining(index));
  int arena = placeFast(arenaLabel, t.activations, device.homes.activations);
  result.activationRegion = &device.memory[arena];
  int io = placeFast("inputs/outputs (mutableWeight)", t.mutableBytes, device.homes.io);
  if (t.extraStatic) {
    placeFast("static data (initialized copy)", t.extraStatic, device.homes.io);
  }

  // Weights: hottest first into the fastest RAM with room (ram/auto).
  result.weightRegion.assign(fp.weights.size(), &device.memory[weightsFlash]);
  if (request.weights != WeightsPolicy::Flash && !fp.weights.empty()) {
    std::vector<int> order(fp.weights.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return fp.weights[a].hotness() > fp.weights[b].hotness();
    });
    std::vector<planner::Constant> constants(fp.weights.size());
    for (size_t rank = 0; rank < order.size(); ++rank)
      constants[order[rank]] = {order[rank], fp.weights[order[rank]].bytes, int(rank)};
    std::vector<planner::Region> regions;
    std::vector<int> regionOf;
    for (int index : ramOrder)
      if (remaining(index) > 0) {
        regions.push_back({device.memory[index].name, remaining(index)});
        regionOf.push_back(index);
      }
    int overflow = int(regions.size());
    regions.push_back({device.memory[weightsFlash].name, 0});
    regionOf.push_back(weightsFlash);
    int ramHome = regionIndex(device, device.homes.weightsRam);
    bool mustBeRam = request.weights == WeightsPolicy::Ram;
    planner::RegionPolicy policy = [&](const planner::Constant &constant, uint64_t padded,
                                       const std::vector<planner::Region> &rs,
                                       const std::vector<planner::RegionUsage> &usage) {
      for (int r = 0; r < overflow; ++r)
        if (usage[r].used + padded <= rs[r].capacity)
          return r;
      return overflow; // Flash (auto) or overflow marker (ram).
    };
    planner::WeightLayout layout = planner::layoutWeights(constants, regions, policy, 1);
    std::vector<uint64_t> bytesIn(device.memory.size(), 0);
    std::vector<int> countIn(device.memory.size(), 0);
    for (size_t i = 0; i < fp.weights.size(); ++i) {
      int r = layout.placements[i].region;
      int index = r == overflow ? (mustBeRam ? ramHome : weightsFlash) : regionOf[r];
      if (request.weights == WeightsPolicy::Given)
        index = givenRegion(device, request, fp.weights[i].name, weightsFlash);
      result.weightRegion[i] = &device.memory[index];
      bytesIn[index] += fp.weights[i].bytes;
      countIn[index] += 1;
    }
    for (size_t index = 0; index < device.memory.size(); ++index) {
      if (!bytesIn[index] || device.memory[index].isFlash())
        continue;
      add(int(index),
          "weights in RAM: " + std::to_string(countIn[index]) +
              (countIn[index] == 1 ? " tensor" : " tensors") +
              (request.weights == WeightsPolicy::Given ? " (" + request.givenFrom + ")"
                                                       : " (hottest first)"),
          bytesIn[index]);
      result.weightsInRam += bytesIn[index];
    }
  }
  // The Flash image of the weights: all of CONSTANT is always in Flash.
  t.weightsInRam = std::min(result.weightsInRam, t.constant);
  result.weightsInFlash = t.constant - t.weightsInRam;
  result.totals = projectTotals(t);
  add(weightsFlash, "alignment before const weights", result.totals.flashAlignmentPadding);
  add(weightsFlash, "weights read in place (const)", result.weightsInFlash);
  add(weightsFlash, "weights image (copied to RAM at startup)", t.weightsInRam);
  add(flash, "static data image", t.extraStatic);

  // Homes.
  result.homes.insert(
      result.homes.begin(),
      {{"code", device.homes.code},
       {"activations", device.memory[arena].name},
       {"kernel scratch", fp.scratchBytes ? device.memory[arena].name + " (in the arena)" : "none"},
       {"inputs/outputs", device.memory[io].name}});
  std::string weightHome;
  for (const RegionUse &use : result.regions)
    for (const RegionItem &item : use.items)
      if (item.what.rfind("weights in RAM", 0) == 0 ||
          item.what.rfind("weights read in place", 0) == 0)
        weightHome += (weightHome.empty() ? "" : " + ") + use.region->name + " " + kb(item.bytes);
  result.homes.insert(result.homes.begin() + 2,
                      {"weights", weightHome.empty() ? "none" : weightHome});

  for (const RegionUse &use : result.regions)
    if (use.over())
      result.problems.push_back(use.region->name + " needs " + withThousands(use.used) + " B of " +
                                withThousands(use.region->size) + " (over by " +
                                withThousands(use.used - use.region->size) + " B)");
  result.fits = result.problems.empty();
  for (const RegionUse &use : result.regions)
    if (result.fits && use.tight()) {
      char share[16];
      std::snprintf(share, sizeof share, "%.1f%%",
                    100.0 * double(use.used) / double(use.region->size));
      result.warnings.push_back(
          use.region->name + " is tight: " + share + " full (" + withThousands(use.used) + " of " +
          withThousands(use.region->size) + " B, " + withThousands(use.region->size - use.used) +
          " B left for the application); keep more with --reserve-ram / --reserve-flash or "
          "--weights flash");
    }
  result.time = predictTime(device, fp, result.weightRegion, result.activationRegion);
  return result;
}

Device withFlexRam(const Device &device, int itcm, int dtcm, int ocram) {
  Device copy = device;
  if (!device.flexram)
    return copy;
  const FlexRam &f = *device.flexram;
  auto resize = [&](const std::string &name, int64_t delta) {
    for (MemoryRegionInfo &region : copy.memory)
      if (region.name == name)
        region.size = uint64_t(int64_t(region.size) + delta);
  };
  int64_t bank = int64_t(f.bankBytes);
  resize(f.itcm, (itcm - f.defaultItcm) * bank);
  resize(f.dtcm, (dtcm - f.defaultDtcm) * bank);
  resize(f.ocram, (ocram - f.defaultOcram) * bank);
  copy.memory.erase(std::remove_if(copy.memory.begin(), copy.memory.end(),
                                   [](const MemoryRegionInfo &r) { return r.size == 0; }),
                    copy.memory.end());
  // Homes that named a bank-less region move to a FlexRAM region that is left.
  std::string fallback;
  for (const std::string *name : {&f.ocram, &f.dtcm, &f.itcm})
    if (fallback.empty() && copy.findRegion(*name))
      fallback = *name;
  for (std::string *home : {&copy.homes.io, &copy.homes.activations, &copy.homes.sdkRam,
                            &copy.homes.weightsRam, &copy.homes.libraryRam})
    if (!copy.findRegion(*home))
      *home = fallback;
  return copy;
}

std::optional<FlexRamSplit> suggestFlexRam(const Device &device, const ModelFootprint &fp,
                                           const FitRequest &request) {
  if (!device.flexram)
    return std::nullopt;
  const FlexRam &f = *device.flexram;
  // Try every split; keep the fitting one with the lowest predicted time,
  // preferring more ITCM (room for hot code) on ties, then the default.
  std::optional<FlexRamSplit> best, byDefault;
  for (int dtcm = 0; dtcm <= f.banks; ++dtcm)
    for (int ocram = 0; dtcm + ocram <= f.banks; ++ocram) {
      int itcm = f.banks - dtcm - ocram;
      if (dtcm == 0 && (device.homes.sdkRam == f.dtcm))
        continue; // The SDK's data/stack live in DTCM by default.
      Device split = withFlexRam(device, itcm, dtcm, ocram);
      FitResult fit = fitModel(split, fp, request);
      if (!fit.fits)
        continue;
      bool isDefault = itcm == f.defaultItcm && dtcm == f.defaultDtcm && ocram == f.defaultOcram;
      if (isDefault)
        byDefault = FlexRamSplit{itcm, dtcm, ocram, false, "", fit};
      bool better = !best || fit.time.ms < best->result->time.ms - 1e-6 ||
                    (std::fabs(fit.time.ms - best->result->time.ms) <= 1e-6 &&
                     (isDefault || (!best->changed ? false : itcm > best->itcm)));
      if (better)
        best = FlexRamSplit{itcm, dtcm, ocram, !isDefault, "", fit};
    }
  if (!best)
    return best;
  // Only worth re-fusing the part for more than a 1% gain.
  if (byDefault && best->changed && best->result->time.ms > byDefault->result->time.ms * 0.99)
    best = byDefault;
  uint64_t bank = f.bankBytes / 1024;
  best->reason = std::to_string(f.banks) + " x " + std::to_string(bank) + " KB banks: ITCM " +
                 std::to_string(best->itcm) + " / DTCM " + std::to_string(best->dtcm) +
                 " / OCRAM " + std::to_string(best->ocram) + " (" +
                 std::to_string(best->itcm * bank) + "/" + std::to_string(best->dtcm * bank) + "/" +
                 std::to_string(best->ocram * bank) + " KB)";
  best->reason += best->changed
                      ? " instead of the default " + std::to_string(f.defaultItcm) + "/" +
                            std::to_string(f.defaultDtcm) + "/" + std::to_string(f.defaultOcram)
                      : " (the default is already best)";
  return best;
}

std::vector<uint64_t> arenaRooms(const Device &device, const Variant &variant,
                                 const FitRequest &request) {
  ModelFootprint empty;
  empty.variant = variant;
  empty.libraryRamBytes = mainLibrary(device, variant).ramBytes;
  return fitModel(device, empty, request).arenaRooms;
}

PickGoal parsePickGoal(const std::string &text) {
  if (text == "latency")
    return PickGoal::Latency;
  if (text == "ram")
    return PickGoal::Ram;
  if (text == "flash")
    return PickGoal::Flash;
  throw Error(ExitCode::Usage, "--goal " + text + ": expected latency, ram or flash");
}

const char *pickGoalName(PickGoal goal) {
  switch (goal) {
  case PickGoal::Latency:
    return "latency";
  case PickGoal::Ram:
    return "ram";
  case PickGoal::Flash:
    return "flash";
  }
  return "latency";
}

std::string variantFamily(const Variant &variant) {
  if (variant.precision == Precision::Float)
    return "float";
  switch (variant.kernels) {
  case Kernels::Portable:
    return isInt16x8(variant) ? "int16x8" : "int8";
  case Kernels::CmsisNn:
    return "CMSIS-NN";
  case Kernels::HiFi4:
  case Kernels::HiFi4WithCmsis:
    return "HiFi4";
  }
  return "int8";
}

namespace {

/// Whether `r` beats `b` for the goal. Latency: faster by more than 2%, or
/// within 2% and smaller RAM, then Flash. RAM / Flash: smaller, then faster.
bool better(const FitResult &r, const FitResult &b, PickGoal goal) {
  switch (goal) {
  case PickGoal::Latency: {
    bool faster = r.time.ms < b.time.ms * 0.98;
    bool tie = !faster && r.time.ms <= b.time.ms * 1.02;
    return faster || (tie && (r.totals.ram < b.totals.ram ||
                              (r.totals.ram == b.totals.ram && r.totals.flash < b.totals.flash)));
  }
  case PickGoal::Ram:
    return r.totals.ram < b.totals.ram || (r.totals.ram == b.totals.ram && r.time.ms < b.time.ms);
  case PickGoal::Flash:
    return r.totals.flash < b.totals.flash ||
           (r.totals.flash == b.totals.flash && r.time.ms < b.time.ms);
  }
  return false;
}

std::string describe(const Candidate &c) {
  char text[256];
  std::snprintf(text, sizeof text, "%s, weights %s: %.2f ms, RAM %s, Flash %s",
                c.variant.name.c_str(), weightsPolicyName(c.weights), c.result.time.ms,
                withThousands(c.result.totals.ram).c_str(),
                withThousands(c.result.totals.flash).c_str());
  return text;
}

} // namespace

PickResult pickBuild(const Device &device, const FitRequest &request,
                     const FootprintSource &footprintOf, const PickRequest &options,
                     const PlacedFootprintSource &placedFootprintOf) {
  PickResult pick;
  std::vector<Variant> variants = options.variants;
  if (variants.empty())
    for (const Variant &variant : allVariants())
      if (variantAvailable(device, variant))
        variants.push_back(variant);
  for (const Variant &variant : variants) {
    if (!variantAvailable(device, variant))
      mainLibrary(device, variant); // Throws: the part lacks the library.
    std::optional<ModelFootprint> unplaced;
    if (!placedFootprintOf)
      unplaced = footprintOf(device, variant);
    for (WeightsPolicy weights : {WeightsPolicy::Flash, WeightsPolicy::Ram}) {
      FitRequest changed = request;
      changed.weights = weights;
      const ModelFootprint fp = unplaced ? *unplaced : placedFootprintOf(device, variant, changed);
      pick.candidates.push_back({variant, weights, fitModel(device, fp, changed), false,
                                 fp.buildable, fp.estimates, fp.portable});
    }
  }
  // The best per family (eligible or not), and the overall best eligible one.
  std::vector<std::string> families;
  std::map<std::string, int> familyBest;
  for (size_t i = 0; i < pick.candidates.size(); ++i) {
    const Candidate &c = pick.candidates[i];
    std::string family = variantFamily(c.variant);
    if (!familyBest.count(family)) {
      families.push_back(family);
      familyBest[family] = -1;
    }
    int &fb = familyBest[family];
    if (c.result.fits && (fb < 0 || better(c.result, pick.candidates[fb].result, options.goal)))
      fb = int(i);
    if (!c.eligible(options.allowEstimates))
      continue;
    if (pick.best < 0 || better(c.result, pick.candidates[pick.best].result, options.goal))
      pick.best = int(i);
  }
  std::string goal = pickGoalName(options.goal);
  if (pick.best < 0) {
    bool anyFits = false;
    for (const Candidate &c : pick.candidates)
      anyFits = anyFits || c.result.fits;
    pick.reason = anyFits ? "no buildable candidate with measured sizes fits " + device.id +
                                " (only estimates do; --allow-estimates to consider them)"
                          : "no candidate fits " + device.id;
    return pick;
  }
  Candidate &best = pick.candidates[pick.best];
  best.best = true;
  pick.reason = "best for " + goal + " that fits" +
                (options.allowEstimates ? "" : " and bundlefit builds") + ": " + describe(best);
  for (const std::string &family : families) {
    if (family == variantFamily(best.variant))
      continue;
    int fb = familyBest[family];
    if (fb < 0) {
      pick.reason += "; " + family + ": no build fits";
      continue;
    }
    const Candidate &other = pick.candidates[fb];
    pick.reason += "; best " + family + ": " + describe(other);
    if (!other.eligible(options.allowEstimates))
      pick.reason +=
          std::string(" (") + (other.buildable ? "sizes estimated" : "not buildable: an estimate") +
          (better(other.result, best.result, options.goal) ? ", would win with --allow-estimates"
                                                           : "") +
          ")";
  }
  return pick;
}

nlohmann::json estimateJson(const std::vector<std::string> &estimates) {
  if (estimates.empty())
    return nullptr;
  return estimates;
}

nlohmann::json fitResultJson(const Device &device, const ModelFootprint &fp, const FitResult &r) {
  using nlohmann::json;
  json regions = json::array();
  for (const RegionUse &use : r.regions) {
    json items = json::array();
    for (const RegionItem &item : use.items)
      items.push_back({{"what", item.what}, {"bytes", item.bytes}});
    regions.push_back(
        {{"name", use.region->name},
         {"kind", memoryKindName(use.region->kind)},
         {"base", use.region->base},
         {"capacity", use.region->size},
         {"used", use.used},
         {"percent", use.region->size ? 100.0 * double(use.used) / double(use.region->size) : 0.0},
         {"tight", !use.over() && use.tight()},
         {"items", items}});
  }
  json homes = json::object();
  for (const auto &[what, where] : r.homes)
    homes[what] = where;
  json layers = json::array();
  for (const LayerTime &layer : r.time.layers)
    layers.push_back({{"name", layer.name},
                      {"library", layer.library},
                      {"compute_cycles", layer.computeCycles},
                      {"memory_cycles", layer.memoryCycles},
                      {"ms", layer.ms}});
  // Where each weight tensor goes: what `compile --device --weights FILE`
  // reads back, and what the bundle's weight segments carry.
  json placement = json::array();
  for (size_t i = 0; i < fp.weights.size() && i < r.weightRegion.size(); ++i)
    placement.push_back({{"name", fp.weights[i].name},
                         {"bytes", fp.weights[i].bytes},
                         {"region", r.weightRegion[i] ? r.weightRegion[i]->name : ""},
                         {"in_ram", r.weightRegion[i] && !r.weightRegion[i]->isFlash()}});
  return {{"device", device.id},
          {"weights_placement", placement},
          {"variant", r.variant.name},
          {"weights", weightsPolicyName(r.weights)},
          {"fits", r.fits},
          {"bundle",
           {{"constant", fp.constantBytes},
            {"mutable", fp.mutableBytes},
            {"activations", fp.activationsBytes},
            {"activations_lower_bound", fp.activationsLowerBound},
            {"kernel_scratch", fp.scratchBytes},
            {"code", r.terms.code},
            {"sizes_estimated", fp.sizesEstimated},
            {"code_estimated", fp.codeEstimated}}},
          {"totals",
           {{"flash", r.totals.flash},
            {"ram", r.totals.ram},
            {"flash_capacity", r.flashCapacity},
            {"ram_capacity", r.ramCapacity},
            {"flash_alignment_padding", r.totals.flashAlignmentPadding},
            {"weights_in_ram", r.weightsInRam},
            {"weights_in_flash", r.weightsInFlash}}},
          {"sdk_baseline",
           {{"flash", r.terms.baseFlash}, {"ram", r.terms.baseRam}, {"source", r.baselineSource}}},
          {"buildable", fp.buildable},
          {"estimate", estimateJson(fp.estimates)},
          {"warnings", r.warnings},
          {"regions", regions},
          {"homes", homes},
          {"problems", r.problems},
          {"predicted_ms", r.time.ms},
          {"cost_model_calibrated", r.time.calibrated},
          {"layers", layers}};
}

} // namespace bundlefit::device
