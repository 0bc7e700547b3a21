//===- LowerGraph.h - Graph -> calls into the kernel bitcode (internal) ----===//
#pragma once

#include "bundlefit/codegen/BundleCodegen.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <string>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace bundlefit {

/// Adds `int <name>(uint8_t *constantWeight, uint8_t *mutableWeight,
/// uint8_t *activations)` to `module` (which already holds the kernels),
/// calling one internal function per scheduled non-view node, which calls the
/// node's kernel(s) with constant shapes. When the plan splits the weights
/// over memory regions (MemoryPlan::weightSegments), it also adds
/// `int <name>_placed(const uint8_t *weights_<REGION>..., uint8_t
/// *mutableWeight, uint8_t *activations)`, one base per segment, which the
/// Glow entry calls with the segments' offsets in constantWeight.
llvm::Function *lowerGraphToEntry(llvm::Module &module, const Graph &graph, const MemoryPlan &plan,
                                  const std::string &name, const LayerCallback &onLayer = {},
                                  size_t *fusedTables = nullptr);

/// String attribute marking the entry points (external; everything else is
/// internal to the bundle).
inline constexpr const char *kEntryAttribute = "bundlefit-entry";

/// The split entry's name for network `name`.
inline std::string placedEntryName(const std::string &name) { return name + "_placed"; }

/// String attribute marking the per-node functions lowerGraphToEntry creates.
inline constexpr const char *kNodeFunctionAttribute = "bundlefit-node";

/// String attribute marking the functions of a patch stage's tile kinds
/// (their kernel calls are graph call sites, as a node function's).
inline constexpr const char *kTileFunctionAttribute = "bundlefit-tile";

} // namespace bundlefit
