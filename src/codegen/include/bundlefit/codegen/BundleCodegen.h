//===- BundleCodegen.h - Graph + memory plan -> bundle object file ---------===//
//
// Builds one LLVM module per bundle: the portable C kernels (src/kernels,
// embedded as bitcode per target family) plus a generated entry point
//
//   int <net>(uint8_t *constantWeight, uint8_t *mutableWeight,
//             uint8_t *activations);            // returns 0
//
// that runs the plan's schedule, calling one kernel per non-view node with
// constant shapes and tensor addresses `region base + MemoryPlan offset`.
// Kernels are made internal (unused ones vanish), the O2 or Os pipeline
// specialises them, and TargetMachine emits an ELF object in memory.
//
// Libraries the object needs at link time: memcpy/memset (libc), libm only for
// log, trigonometric, erf, softplus and Mish kernels (exp, sigmoid, tanh and
// softmax are polynomials in the kernels), and on Cortex-M0+ libgcc's soft-float
// helpers. Host (x86_64/aarch64) objects built with the default static
// relocation model must be linked with `cc -no-pie` (or compile with pic).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/codegen/Target.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace bundlefit {

struct CodegenResult {
  std::vector<char> object; ///< The relocatable ELF object (<net>.o).
  uint64_t textBytes = 0;   ///< Sum of executable sections: code in Flash.
  uint64_t rodataBytes = 0; ///< Read-only data (shape tables, literals): Flash.
  uint64_t dataBytes = 0;   ///< Writable data + bss (normally 0): RAM.
  /// int8 table activations applied in their producing convs' stores instead
  /// of a pass of their own (src/codegen/LutFusion.h).
  size_t fusedTables = 0;
  double compileSeconds = 0.0;
};

/// Called as each scheduled node is lowered (1-based `layer` of `layers`), so
/// the tool can show how far a long compile has got.
using LayerCallback = std::function<void(size_t layer, size_t layers, const std::string &node)>;

/// Compiles `graph` laid out by `plan` into an object whose entry symbol is
/// `networkName` (must already be a legal C identifier). Throws
/// Error(Unsupported, "node 'x' (Op): ...") for operators or attributes the
/// kernels do not cover, Error(Usage) for an unusable target. With
/// `withBundleConfig` the object also defines `<net>_config` (the dynamic
/// bundle API, see BundleWriter.h).
CodegenResult generateBundleObject(const Graph &graph, const MemoryPlan &plan,
                                   const std::string &networkName, const TargetOptions &target,
                                   bool withBundleConfig = false,
                                   const LayerCallback &onLayer = {});

/// The optimised module as LLVM IR text (for `--emit-llvm` and debugging).
std::string generateBundleIR(const Graph &graph, const MemoryPlan &plan,
                             const std::string &networkName, const TargetOptions &target);

/// What an ELF object contains, read back with llvm::object.
struct ObjectSummary {
  std::string fileFormat;  ///< e.g. "elf32-littlearm", "elf64-x86-64".
  std::string arch;        ///< LLVM arch name: "x86_64", "aarch64", "thumb".
  uint16_t elfMachine = 0; ///< e_machine: 62 x86-64, 183 AArch64, 40 ARM.
  uint64_t textBytes = 0, rodataBytes = 0, dataBytes = 0;
  std::vector<std::string> definedGlobals;   ///< Global symbols defined.
  std::vector<std::string> undefinedSymbols; ///< What the linker must supply.
};
ObjectSummary inspectObject(const std::vector<char> &object);

/// Why the kernel bitcode `target` compiles with disagrees with a parameter
/// struct `cStruct` of bundlefit/kernels/abi.h that code generation fills
/// with `fieldCount` int32 fields, or "" when they agree (every bundle
/// checks every struct so before lowering; tests plant a wrong count).
std::string kernelParamsMismatch(const TargetOptions &target, const std::string &cStruct,
                                 size_t fieldCount);

} // namespace bundlefit
