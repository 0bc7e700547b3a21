//===- VerifyRun.cpp - The part's firmware, runnable under QEMU ------------===//
//
// `fit --verify-run` runs the firmware `--verify-link` links, on the QEMU board
// of the part's core: the part's regions at the part's sizes, at the part's
// addresses where the board has memory there, else moved to free board
// memory; the linker script from templates/verify_run.ld. See LinkVerify.h.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/bundle/BundleWriter.h"
#include "bundlefit/bundle/LinkVerify.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/Format.h"

#include "Templates.h"

#include <algorithm>
#include <set>

namespace bundlefit {

namespace {

struct FreeRange {
  uint64_t begin, end;
};

/// Takes [begin, begin + size) out of `free`; false when it is not all free.
bool take(std::vector<FreeRange> &free, uint64_t begin, uint64_t size) {
  for (size_t i = 0; i < free.size(); ++i) {
    FreeRange r = free[i];
    if (begin < r.begin || begin + size > r.end)
      continue;
    free.erase(free.begin() + long(i));
    if (begin > r.begin)
      free.push_back({r.begin, begin});
    if (begin + size < r.end)
      free.push_back({begin + size, r.end});
    std::sort(free.begin(), free.end(),
              [](const FreeRange &a, const FreeRange &b) { return a.begin < b.begin; });
    return true;
  }
  return false;
}

} // namespace

BoardMap mapPartOnBoard(const FirmwarePart &part, const CortexMBoard &board, uint64_t bootBytes) {
  BoardMap map;
  map.part = part;
  std::vector<FreeRange> free;
  for (const CortexMBoard::Memory &m : {board.code, board.ram, board.extra})
    free.push_back({m.base, m.base + m.size});
  bootBytes = alignUp(bootBytes, 4096);
  map.boot = {"BF_BOOT", board.code.base, bootBytes, false};
  if (!take(free, board.code.base, bootBytes))
    throw Error(ExitCode::DoesNotFit, "--verify-run: the test harness (" +
                                          withThousands(bootBytes) + " B) does not fit QEMU " +
                                          board.machine + "'s " + board.code.name);
  // Largest first, each at its own address when the board has memory there.
  std::vector<FirmwareRegion *> order;
  for (FirmwareRegion &region : map.part.regions)
    if (region.size)
      order.push_back(&region);
  std::stable_sort(
      order.begin(), order.end(),
      [](const FirmwareRegion *a, const FirmwareRegion *b) { return a->size > b->size; });
  for (FirmwareRegion *region : order) {
    if (take(free, region->base, region->size))
      continue;
    bool placed = false;
    for (const FreeRange &r : free) {
      uint64_t begin = alignUp(r.begin, 4096);
      if (begin + region->size <= r.end) {
        map.moved += std::string(map.moved.empty() ? "" : ", ") + region->name + " moved to " +
                     templates::hexAddress(begin);
        region->base = begin;
        placed = take(free, begin, region->size);
        break;
      }
    }
    if (!placed)
      throw Error(ExitCode::DoesNotFit, "--verify-run: " + part.id + "'s region " + region->name +
                                            " (" + withThousands(region->size) +
                                            " B) finds no room in QEMU " + board.machine +
                                            "'s memory (" + board.code.name + ", " +
                                            board.ram.name + ", " + board.extra.name + ")");
  }
  if (map.moved.empty())
    map.moved = "every region at the part's address";
  return map;
}

PartImage verifyRunImage(const FirmwareSpec &spec, const BoardMap &map, const CortexMBoard &board) {
  const FirmwarePart &part = map.part;
  std::vector<std::string> ldNames;
  std::set<std::string> taken;
  std::string memory;
  for (const FirmwareRegion &region : part.regions) {
    std::string id = regionIdentifier(region.name);
    while (!taken.insert(id).second)
      id += "_";
    ldNames.push_back(id);
    memory += "  " + id + " (rwx) : ORIGIN = " + templates::hexAddress(region.base) +
              ", LENGTH = " + templates::hexAddress(region.size) + "\n";
  }
  auto ld = [&](const std::string &name) {
    for (size_t i = 0; i < part.regions.size(); ++i)
      if (part.regions[i].name == name)
        return ldNames[i];
    fatalInternal("verify-run: " + part.id + " has no region '" + name + "'");
  };
  std::string aliases;
  std::set<std::string> aliased;
  auto alias = [&](const std::string &region) {
    const std::string id = regionIdentifier(region);
    if (aliased.insert(id).second)
      aliases += "REGION_ALIAS(\"BUNDLEFIT_" + id + "\", " + ld(region) + ");\n";
  };
  for (const FirmwareSegment &segment : spec.segments)
    alias(segment.region);
  alias(spec.homes.weightsFlash);

  PartImage image;
  image.linkerScript =
      templates::fillTemplate(templates::kVerifyRunScriptTemplate,
                              {{"DEVICE", part.id},
                               {"DEVICE_FILE", part.file},
                               {"MACHINE", board.machine},
                               {"MOVED", map.moved},
                               {"NETWORK", spec.networkName},
                               {"MEMORY", templates::withoutFinalNewline(memory)},
                               {"BOOT_BASE", templates::hexAddress(map.boot.base)},
                               {"BOOT_SIZE", templates::hexAddress(map.boot.size)},
                               {"REGION_ALIASES", templates::withoutFinalNewline(aliases)},
                               {"SDK_FLASH_BYTES", std::to_string(spec.reserved.sdkFlash)},
                               {"SDK_RAM_BYTES", std::to_string(spec.reserved.sdkRam)},
                               {"CODE", ld(spec.homes.code)},
                               {"SDK_RAM", ld(spec.homes.sdkRam)},
                               {"ACTIVATIONS", ld(spec.homes.activations)},
                               {"IO", ld(spec.homes.io)},
                               {"STACK_BYTES", templates::hexAddress(64 * 1024)}});
  image.sources = {spec.bundleDir + "/" + spec.networkName + "_weights.c"};
  image.includeDirs = {spec.bundleDir};
  image.declarations = "#include \"" + spec.networkName + ".h\"";
  image.startup = "  " + spec.networkName + "_copy_weights(); /* the weights in RAM, from Flash */";
  image.call = spec.entry + "(";
  for (const std::string &weights : spec.entryWeights)
    image.call += (spec.entry == spec.networkName ? "(uint8_t *)" : "") + weights + ", ";
  if (spec.entryWeights.empty())
    image.call += "0, ";
  image.call += "bf_mutable, bf_activations)";
  return image;
}

} // namespace bundlefit
