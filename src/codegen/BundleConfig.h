//===- BundleConfig.h - The dynamic bundle API's data (internal) ----------===//
#pragma once

#include "bundlefit/schedule/MemoryPlan.h"

#include <string>

namespace llvm {
class Module;
}

namespace bundlefit {

/// Defines `const struct BundleConfig <net>_config` and its symbol table of
/// placeholders, laid out as the header's C structs (BundleWriter.cpp) for
/// the module's target: {constantWeightVarsMemSize, mutableWeightVarsMemSize,
/// activationsMemSize, alignment, numSymbols, symbolTable} and entries
/// {name, offset, size (elements), kind (1 = mutable)}.
void emitBundleConfig(llvm::Module &module, const MemoryPlan &plan, const std::string &networkName);

} // namespace bundlefit
