//===- BundleWriter.h - Glow-compatible bundle files -----------------------===//
//
// Writes <net>.h, <net>.weights.bin and <net>.weights.txt exactly the way
// Glow's BundleSaver does (shared/docs/mission.md §2), so firmware written
// against Glow bundles keeps compiling, and writes the whole bundle directory
// all-or-nothing.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace bundlefit {

enum class BundleApi { Static, Dynamic };

/// The C name of each placeholder (plan order) in the header: legalized and
/// unique, with deterministic "_1", "_2" suffixes where names collide.
std::vector<std::string> placeholderIdentifiers(const MemoryPlan &plan);

/// What a --use-cmsis header checks of the CMSIS-NN API: the operators'
/// definitions say it (ops/Cmsis.h), the driver passes it.
struct CmsisNnChecks {
  /// The C declarations of each function the bundle calls, by function
  /// name (cmsisPrototypeFor; a function without one, or with "", is not
  /// checked).
  std::map<std::string, std::string> prototypes;
  /// Further checks some call relies on (cmsisApiChecksFor), each written
  /// once, after the prototypes.
  std::set<std::string> apiChecks;
};

/// The header: guards, common GLOW_* macros, a placeholder summary comment,
/// placeholder offsets, memory sizes, alignment and the entry point; for the
/// dynamic API, the BundleConfig/SymbolTableEntry types and `<net>_config`.
std::string renderBundleHeader(const MemoryPlan &plan, const std::string &networkName,
                               BundleApi api, const CmsisNnChecks &cmsisChecks);

/// For a bundle that calls CMSIS-NN (nodes marked `cmsis`): a header block
/// that includes arm_nnfunctions.h when available and checks at compile time
/// the struct layouts the object code assumes and each function's
/// `prototypes`; "" otherwise.
std::string renderCmsisNnCheck(const MemoryPlan &plan, const CmsisNnChecks &checks);

/// The constant-weight region's bytes: every constant at its planned offset,
/// padding zeroed. Exactly plan.constantSize bytes.
std::vector<uint8_t> packWeights(const MemoryPlan &plan);

/// weights.txt: the same bytes as a C initializer list, 20 per line, each
/// written " 0X%02X," (Glow's format).
std::string renderWeightsText(const std::vector<uint8_t> &weights);

/// One file of a bundle: name inside the directory and its bytes.
using BundleFile = std::pair<std::string, std::string>;

/// A memory region's name as it appears in file, section, symbol and macro
/// names: every character outside [A-Za-z0-9_] becomes '_'.
std::string regionIdentifier(const std::string &region);

/// The entry a firmware calls: <net>_placed for weights split over several
/// regions, else Glow's <net>.
std::string firmwareEntryName(const MemoryPlan &plan, const std::string &networkName);

/// The <NET>_... macro names a placed bundle's header adds (reserved for
/// placeholder names).
std::vector<std::string> placementMacroNames(const MemoryPlan &plan);

/// For a bundle placed for a part (plan.weightSegments): the header block
/// with each region's <NET>_WEIGHTS_<REGION>_OFFSET/_SIZE/_ALIGN/_IN_RAM, the
/// weight arrays and copy table of <net>_weights.c, the split entry
/// <net>_placed (several regions) and `<net>_run(mutableWeight,
/// activations)`, which calls the entry with the placed weights. "" for a
/// bundle with Glow's one constantWeight.
std::string renderPlacementHeader(const MemoryPlan &plan, const std::string &networkName);

/// For a placed bundle: <net>.weights.<REGION>.bin for each segment (slices
/// of `weights`), <net>_weights.c (templates/placement_weights.c) and the
/// linker-script fragment <net>_weights.ld (templates/placement_weights.ld).
/// Empty for an unplaced bundle.
std::vector<BundleFile> renderPlacementFiles(const MemoryPlan &plan, const std::string &networkName,
                                             const std::vector<uint8_t> &weights);

/// Writes every file into `directory` so that at every moment, SIGKILL
/// included, it holds the complete old bundle or the complete new one: the
/// files go into a staging directory beside it, which then trades places with
/// the old directory in one rename (other regular files in the old directory
/// are carried over), when the command's other outputs are written too
/// (support/OutputFile.h: OutputDirectory, OutputSet). Throws
/// Error(CannotWrite) naming the directory; on failure the old bundle is left
/// untouched.
void writeBundleDirectory(const std::string &directory, const std::vector<BundleFile> &files);

} // namespace bundlefit
