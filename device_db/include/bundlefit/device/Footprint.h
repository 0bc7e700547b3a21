//===- Footprint.h - What a model needs, per build variant -----------------===//
//
// A variant is a build of the bundle: float, or int8 with portable kernels,
// CMSIS-NN or Cadence HiFi4 NNLib. Its footprint is the three Glow regions
// (CONSTANT, MUTABLE, ACTIVATIONS incl. kernel scratch), the bundle code size
// and, per layer, the work the cost model charges.
//
// device_db does not make footprints: it summarizes a memory plan the driver
// library produced (footprintOfPlan; bundlefit/driver/VariantBuild.h runs the
// pipeline per variant) and fits it to a part (Fit.h). Kernel scratch of the
// CMSIS-NN and HiFi4 builds is the variant's (kernelScratchBytes).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/device/Device.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/ops/CmsisBufferSizes.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit::device {

enum class Precision { Float, Int8 };
enum class Kernels { Portable, CmsisNn, HiFi4, HiFi4WithCmsis };

struct Variant {
  /// float | int8 | int8-cmsis | int8-hifi4 | int8-hifi4-cmsis; an int16x8
  /// model's integer builds are named int16x8 and int16x8-cmsis (asInt16x8).
  std::string name;
  Precision precision = Precision::Float;
  Kernels kernels = Kernels::Portable;
};

/// Parses a --variant value; throws Error(Usage) naming the option. Takes
/// the int16x8 names too (int16x8, int16x8-cmsis; int16x8-hifi4... are
/// parsed so that fit can refuse them naming the model).
Variant parseVariant(const std::string &text);
/// The integer variant as an int16x8 model builds it: the same kernels, int16
/// activations, named int16x8[-...]. A float variant comes back unchanged.
Variant asInt16x8(const Variant &variant);
/// Whether the variant is named as an int16x8 model's build.
bool isInt16x8(const Variant &variant);
/// Whether an int16x8 model has this build: int16x8 and int16x8-cmsis. Not
/// float, nor the HiFi4 ones: bundlefit generates no HiFi4 code, and the
/// parts' NNLib figures (ops, cycles, scratch) are int8 kernels', so such a
/// row would show the portable int16 kernels' time and no NNLib scratch.
bool int16x8Builds(const Variant &variant);
const std::vector<Variant> &allVariants();
/// Whether `device` has the libraries the variant needs.
bool variantAvailable(const Device &device, const Variant &variant);
/// The library that runs `opType` in this variant (falls back to portable).
const KernelLibrary &libraryFor(const Device &device, const Variant &variant,
                                const std::string &opType);
/// The library that gives the variant its name (code size, footprint).
const KernelLibrary &mainLibrary(const Device &device, const Variant &variant);

/// The operator definition's class of work (OpDef::device.costClass).
using LayerClass = CostClass;

/// One constant tensor of the bundle (64-aligned size as planned).
struct WeightTensor {
  std::string name;
  uint64_t bytes = 0; ///< Padded to the bundle alignment.
  int layer = -1;     ///< First layer that reads it.
  uint64_t reuse = 1; ///< Times the layer re-reads it per inference.
  uint64_t hotness() const { return bytes * reuse; }
};

struct LayerWork {
  std::string name;
  std::string op;
  LayerClass cls = LayerClass::Other;
  uint64_t macs = 0;
  uint64_t outputElements = 0;
  uint64_t activationBytes = 0; ///< Input + output bytes it touches.
  uint64_t scratchBytes = 0;    ///< Kernel workspace (CMSIS-NN / NNLib).
  std::vector<int> weights;     ///< Indices into ModelFootprint::weights.
  uint64_t reuse = 1;           ///< Output spatial positions (conv), else 1.
};

struct ModelFootprint {
  Variant variant;
  uint64_t constantBytes = 0;
  uint64_t mutableBytes = 0;
  uint64_t activationsBytes = 0; ///< Includes scratch.
  uint64_t activationsLowerBound = 0;
  uint64_t scratchBytes = 0; ///< Largest single kernel workspace.
  uint64_t codeBytes = 0;
  uint64_t libraryFlashBytes = 0;
  uint64_t libraryRamBytes = 0;
  bool sizesEstimated = false; ///< int8 re-typed from the float graph (estimateFootprint).
  bool codeEstimated = true;   ///< Not from a compiled object (or given).
  /// bundlefit generates this build's code (false: HiFi4, planning only).
  bool buildable = true;
  /// What is estimated and why ("code: ... because ..."); empty: all measured.
  std::vector<std::string> estimates;
  /// A CMSIS-NN build's nodes left on bundlefit's kernels ("node 'x' (Op): why").
  std::vector<std::string> portable;
  std::vector<WeightTensor> weights;
  std::vector<LayerWork> layers;
  uint64_t totalMacs() const;
};

/// Kernel workspace bytes for a node under the variant's library on `core`:
/// the operator definition's answer (ops/Cmsis.h cmsisScratchFor for the
/// core's CMSIS-NN build, Helium, DSP extension or pure C: the figure
/// --use-cmsis bundles plan; OpDef::device.nnlibScratch for HiFi4). 0 when none.
uint64_t kernelScratchBytes(const Node &node, const Variant &variant, const Core &core);

/// The CMSIS-NN build a core runs: Helium, DSP extension or pure C.
CmsisExtension cmsisExtensionOf(const Core &core);

/// The footprint of a bundle already compiled (real int8 sizes, CMSIS-NN
/// workspaces as planned): `fit --verify-link` of an int8 variant.
ModelFootprint footprintOfPlan(const MemoryPlan &plan, const Variant &variant,
                               const Device &device);

} // namespace bundlefit::device
