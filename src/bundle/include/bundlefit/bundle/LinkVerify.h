//===- LinkVerify.h - Check a fit prediction against a real link -----------===//
//
// `bundlefit fit MODEL --device PART --verify-link` builds a minimal firmware
// for the part's memory map and lets GNU ld decide whether it fits:
//
//  - a generated linker script with one MEMORY region per device region
//    (base and size from the device file);
//  - the bundle object compiled for the part's bundle core;
//  - the weights as the placed bundle carries them (below);
//  - mutableWeight and the activation arena as NOLOAD sections in the regions
//    the fit chose;
//  - the SDK baseline footprint (and a kernel library's image, static data)
//    as sections of the sizes the device file gives, so the linked totals
//    compare like for like with AN13001's formulas. The SDK project is a whole
//    program, so the stub's vector table, reset handler and main and newlib's
//    .data/.bss are placed inside the SDK sections, padded up to their size.
//
// It is linked by arm-none-eabi-gcc (newlib-nano, nosys, --gc-sections) and
// the ELF's sections are read back and charged to regions the way ld counts
// them (VMA, plus the load image of initialized RAM sections). The fit's code
// term is linkedCodeBytes (the object plus the memcpy/libm/soft-float
// routines it calls). What remains is alignment and newlib's .data image
// (about 100 B), a few hundred bytes per region.
//
// The weights are the placed bundle's own: <net>_weights.c (one section per
// region) placed by <net>_weights.ld, copied to RAM by <net>_copy_weights()
// at reset, and main() calls the entry with each segment's symbol. The check
// reads those pointers back from the ELF: each must be its segment's address,
// in the region the fit chose (checkEntryCall). `fit --verify-run` runs the
// same image under QEMU.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/bundle/BundleRunner.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

/// How to build for a part's bundle core: the codegen shorthand (Target.h)
/// and the arm-none-eabi-gcc flags that pick the matching newlib multilib.
/// The driver derives it from the device file (driver/PartLink.h).
struct PartToolchain {
  std::string codegenTarget; ///< "cortex-m7", "cortex-m33", "cortex-m4", "cortex-m0plus"
  std::string floatAbi;      ///< "hard" | "soft"
  std::vector<std::string> gccFlags;
};

/// One memory region of the part, as the linker script needs it.
struct FirmwareRegion {
  std::string name;
  uint64_t base = 0, size = 0;
  bool flash = false; ///< Read-only (rx) in the script; weights there are read in place.
};

/// The part the firmware is built for: its memory map, in the device file's
/// order (every per-region vector below and in LinkVerification follows it).
struct FirmwarePart {
  std::string id, name;
  std::string file; ///< The device file the memory map comes from.
  std::vector<FirmwareRegion> regions;
  const FirmwareRegion *findRegion(const std::string &regionName) const;
};

/// Where the fit put each thing: region names of FirmwarePart::regions.
struct FirmwareHomes {
  std::string code;         ///< The SDK project's and the bundle's code.
  std::string weightsFlash; ///< Weights read in place, and the images copied to RAM.
  std::string sdkRam;       ///< The SDK project's RAM (stub/newlib .data/.bss, stack).
  std::string activations, io;
  std::string staticData; ///< --static-bytes (initialized, image in `code`).
  std::string libraryRam;
};

/// The sizes the fit charged from the device file rather than the bundle.
struct FirmwareReservations {
  uint64_t sdkFlash = 0, sdkRam = 0;         ///< SDK baseline footprint.
  uint64_t libraryFlash = 0, libraryRam = 0; ///< Kernel library image and static data.
  /// Headroom the fit keeps free for the application, per region (the part's
  /// order): reserved at the end of each region, so the link keeps it too.
  std::vector<uint64_t> headroom;
};

/// One weight segment of the placed bundle: its section in <net>_weights.c
/// (`.<net>_weights_<id>`, symbol `<net>_weights_<id>`), placed by the
/// bundle's <net>_weights.ld in `region`.
struct FirmwareSegment {
  std::string region; ///< Device region name.
  std::string id;     ///< regionIdentifier(region): file, section and symbol names.
  uint64_t bytes = 0;
  bool copied = false; ///< In RAM: image in FirmwareHomes::weightsFlash, copied at start-up.
};

/// Everything the firmware is built from. The driver fills the part, homes,
/// reservations and prediction from a device file and its fit
/// (driver/PartLink.h); the bundle library never sees the device database.
struct FirmwareSpec {
  FirmwarePart part;
  FirmwareHomes homes;
  FirmwareReservations reserved;
  std::vector<uint64_t> predicted; ///< The fit's bytes per region.
  bool predictedFits = false;
  std::string networkName;
  std::string objectPath; ///< The bundle's <net>.o.
  /// The placed bundle's directory: <net>.h, <net>_weights.c, <net>_weights.ld
  /// and the per-region weight files, built and linked as a firmware would.
  std::string bundleDir;
  std::vector<FirmwareSegment> segments; ///< The bundle's weight segments, in order.
  /// The entry main() calls (<net>, or <net>_placed with several segments)
  /// and the symbols it passes as the weights, in parameter order: each
  /// segment's <net>_weights_<id>. The link check reads the pointers back from
  /// the ELF, so a firmware whose call does not match its placement fails.
  std::string entry;
  std::vector<std::string> entryWeights;
  uint64_t mutableBytes = 0, activationsBytes = 0;
  uint64_t staticBytes = 0; ///< --static-bytes (initialized data).
  bool hardFloat = true;
};

/// One output section of the generated script and where the fit put it.
struct FirmwareSection {
  std::string name;       ///< ".bf_weights_DTCM"
  std::string region;     ///< Device region name of its VMA.
  std::string loadRegion; ///< Device region of its load image ("" if none).
  std::string what;       ///< "activations arena", ...
};

/// The generated sources (pure functions of the spec; no tools needed).
struct FirmwareSources {
  std::string linkerScript; ///< fw.ld
  std::string startup;      ///< fw.c: vectors, reset handler, main
  std::string data;         ///< fw_data.S: reservations and buffers
  std::vector<FirmwareSection> sections;
  /// ld's name for each region (sanitized), same order as FirmwarePart::regions.
  std::vector<std::string> ldRegionNames;
};
FirmwareSources generateFirmware(const FirmwareSpec &spec);

/// An allocated section of a linked ELF32 (little-endian Arm).
struct LinkedSection {
  std::string name;
  uint64_t vma = 0, lma = 0, size = 0;
  bool hasContents = false; ///< PROGBITS (occupies its load address too).
};
/// Throws Error(BadInputFile) naming the file when it is not an ELF32 Arm executable.
std::vector<LinkedSection> readElfSections(const std::string &path);
/// The `count` 32-bit words at global symbol `symbol` of a linked ELF32 Arm
/// executable; empty when the symbol is not there (or has no contents).
std::vector<uint32_t> readElfWords(const std::string &path, const std::string &symbol,
                                   size_t count);

/// Whether the linked firmware calls the entry with each segment where the
/// placement put it: argument k is the address of segment k's section, and
/// that section lies in segment k's region (`overflowed`: a link that ld
/// failed for region overflow, whose sections may run past their region's
/// end). "" when it does, else one line.
std::string checkEntryCall(const FirmwareSpec &spec, const std::vector<LinkedSection> &sections,
                           const std::vector<uint32_t> &arguments, bool overflowed);

/// Bytes per device region as the linker counts them: from the region's base
/// to the end of the last section placed there (VMA; and LMA for sections
/// whose load image lives elsewhere). Sections the script does not name are
/// charged to the region containing their address.
std::vector<uint64_t> linkedRegionUsage(const FirmwarePart &part,
                                        const std::vector<FirmwareSection> &plan,
                                        const std::vector<LinkedSection> &sections);

struct RegionCheck {
  std::string region;
  uint64_t capacity = 0, predicted = 0, linked = 0;
  double differencePercent = 0; ///< (linked - predicted) / predicted x 100.
  bool predictedOver = false, linkedOver = false;
  bool withinTolerance = false;
};

/// Compares per region; `tolerancePercent` of the predicted bytes (a region
/// predicted empty must link empty).
std::vector<RegionCheck> compareRegions(const std::vector<FirmwareRegion> &regions,
                                        const std::vector<uint64_t> &predicted,
                                        const std::vector<uint64_t> &linked,
                                        double tolerancePercent);

/// The bundle's code as it lands in any firmware: the object's code and
/// read-only data plus the runtime routines it calls (memcpy/memset, libm's
/// logf/sinf/erff..., libgcc's soft float on Cortex-M0+), measured by linking the object
/// alone with --gc-sections and its entry as the only root. This is the fit's
/// code term under --verify-link; the object's .text alone misses the
/// routines (about 5 KB of soft float on M0+). Throws like verifyLink.
uint64_t linkedCodeBytes(const std::string &objectPath, const std::string &entry,
                         const PartToolchain &toolchain, const std::string &workDir,
                         const ToolOverrides &tools = {});

struct LinkVerification {
  bool predictedFits = false;
  bool linkedFits = false;    ///< ld succeeded.
  bool verdictsAgree = false; ///< Same verdict, same overflowing regions.
  bool sizesAgree = false;    ///< Every region within tolerance.
  /// The entry is called with every weight segment where it was placed
  /// (checkEntryCall); `callProblem` says what is wrong when not.
  bool callMatches = false;
  std::string callProblem;
  std::string call; ///< "lenet_placed(FLASH 0x60000000, ITCM 0x00000000, ...)" as linked
  double tolerancePercent = 1.0;
  std::vector<std::string> overflowMessages; ///< ld's "region `X' overflowed by N bytes".
  std::vector<RegionCheck> regions;
  std::vector<LinkedSection> sections;
  std::vector<FirmwareSection> plan;
  std::string workDir, elfPath, mapPath, scriptPath;
  double linkSeconds = 0;
  bool agrees() const { return verdictsAgree && sizesAgree && callMatches; }
  /// One line saying why the check failed ("" when it agrees).
  std::string disagreement() const;
};

/// `fit --verify-run`: the part's memory map moved onto the QEMU board of
/// `board`'s core. Each region keeps its size; it keeps its address when the
/// board has memory there (an RT1062's DTCM and OCRAM, its FlexSPI Flash on
/// mps2-an500), else it moves to free board memory. `boot` is board memory
/// at the reset vector for what is not the part's (vector table, test
/// harness, inputs, stack). Throws Error(DoesNotFit) naming the region when
/// the board has no room for it.
struct BoardMap {
  FirmwarePart part;   ///< The part's regions at their board addresses.
  FirmwareRegion boot; ///< BF_BOOT.
  std::string moved;   ///< "ITCM moved to 0x00040000" ... for reports.
};
BoardMap mapPartOnBoard(const FirmwarePart &part, const CortexMBoard &board, uint64_t bootBytes);

/// The firmware image of `spec` (the part as mapOnBoard moved it) for
/// runBundle: verify-link's layout (templates/verify_run.ld), the placed
/// bundle's <net>_weights.c and .ld, the weights copied at start-up and the
/// entry called with `spec.entryWeights` (a test plants a wrong one).
PartImage verifyRunImage(const FirmwareSpec &spec, const BoardMap &map, const CortexMBoard &board);

/// Writes the firmware sources into `workDir`, links them, reads the ELF back
/// and compares with the fit. Throws Error(ToolMissing) naming the Debian
/// package when arm-none-eabi-gcc or newlib is missing, or with the linker's
/// last lines when the link fails for a reason other than region overflow.
LinkVerification verifyLink(const FirmwareSpec &spec, const PartToolchain &toolchain,
                            const std::string &workDir, const ToolOverrides &tools = {},
                            double tolerancePercent = 1.0);

} // namespace bundlefit
