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
#include <string>
#include <utility>
#include <vector>

namespace bundlefit {

enum class BundleApi { Static, Dynamic };

/// The header: guards, common GLOW_* macros, a placeholder summary comment,
/// placeholder offsets, memory sizes, alignment and the entry point; for the
/// dynamic API, the BundleConfig/SymbolTableEntry types and `<net>_config`.
std::string renderBundleHeader(const MemoryPlan &plan, const std::string &networkName,
                               BundleApi api);

/// For a bundle that calls CMSIS-NN (nodes marked `cmsis`): a header block
/// that includes arm_nnfunctions.h when available and checks at compile time
/// the prototypes and struct layouts the object code assumes; "" otherwise.
std::string renderCmsisNnCheck(const MemoryPlan &plan);

/// The constant-weight region's bytes: every constant at its planned offset,
/// padding zeroed. Exactly plan.constantSize bytes.
std::vector<uint8_t> packWeights(const MemoryPlan &plan);

/// weights.txt: the same bytes as a C initializer list, 20 per line, each
/// written " 0X%02X," (Glow's format).
std::string renderWeightsText(const std::vector<uint8_t> &weights);

/// One file of a bundle: name inside the directory and its bytes.
using BundleFile = std::pair<std::string, std::string>;

/// Writes every file into `directory` (created if missing) all-or-nothing:
/// the files are first written into a temporary sibling directory and only
/// moved into place once all of them are complete. Throws
/// Error(CannotWrite) naming the directory; leaves no partial output.
void writeBundleDirectory(const std::string &directory, const std::vector<BundleFile> &files);

} // namespace bundlefit
