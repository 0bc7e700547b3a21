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
/// node's kernel(s) with constant shapes.
llvm::Function *lowerGraphToEntry(llvm::Module &module, const Graph &graph, const MemoryPlan &plan,
                                  const std::string &name, const LayerCallback &onLayer = {});

/// String attribute marking the per-node functions lowerGraphToEntry creates.
inline constexpr const char *kNodeFunctionAttribute = "bundlefit-node";

} // namespace bundlefit
