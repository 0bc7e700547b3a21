//===- Footprint.h - What a model needs, per build variant -----------------===//
//
// A variant is a build of the bundle: float, or int8 with portable kernels,
// CMSIS-NN or Cadence HiFi4 NNLib. Its footprint is the three Glow regions
// (CONSTANT, MUTABLE, ACTIVATIONS incl. kernel scratch), the bundle code size
// and, per layer, the work the cost model charges.
//
// Until int8 quantization (issue 5) and code generation (issue 4) report the
// real numbers, int8 sizes are ESTIMATED by planning a copy of the float graph
// whose tensors are re-typed the way Glow quantizes: weights Int8, biases
// (Conv/Gemm operand 2) Int32, activations Int8, graph inputs and outputs stay
// float with a Quantize after each input and a Dequantize before each output.
// The copy goes through the same planner (planGraphMemory) as the float build,
// so the same allocator and alignment rules apply. CMSIS-NN and HiFi4 kernel
// scratch is modelled as an extra output of the layer that needs it, live only
// while that layer runs, so it lands in the activation arena as Glow does.
// Code size comes from the device file's per-library figure (AN13001).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/device/Device.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/quant/CmsisBufferSizes.h"
#include "bundlefit/schedule/MemoryPlan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit::device {

enum class Precision { Float, Int8 };
enum class Kernels { Portable, CmsisNn, HiFi4, HiFi4WithCmsis };

struct Variant {
  std::string name; ///< float | int8 | int8-cmsis | int8-hifi4 | int8-hifi4-cmsis
  Precision precision = Precision::Float;
  Kernels kernels = Kernels::Portable;
};

/// Parses a --variant value; throws Error(Usage) naming the option.
Variant parseVariant(const std::string &text);
const std::vector<Variant> &allVariants();
/// Whether `device` has the libraries the variant needs.
bool variantAvailable(const Device &device, const Variant &variant);
/// The library that runs `opType` in this variant (falls back to portable).
const KernelLibrary &libraryFor(const Device &device, const Variant &variant,
                                const std::string &opType);
/// The library that gives the variant its name (code size, footprint).
const KernelLibrary &mainLibrary(const Device &device, const Variant &variant);

enum class LayerClass { Conv, Depthwise, FullyConnected, Other };

/// One constant tensor of the bundle (64-aligned size as planned).
struct WeightTensor {
  std::string name;
  uint64_t bytes = 0;     ///< Padded to the bundle alignment.
  int layer = -1;         ///< First layer that reads it.
  uint64_t reuse = 1;     ///< Times the layer re-reads it per inference.
  uint64_t hotness() const { return bytes * reuse; }
};

struct LayerWork {
  std::string name;
  std::string op;
  LayerClass cls = LayerClass::Other;
  uint64_t macs = 0;
  uint64_t outputElements = 0;
  uint64_t activationBytes = 0;   ///< Input + output bytes it touches.
  uint64_t scratchBytes = 0;      ///< Kernel workspace (CMSIS-NN / NNLib).
  std::vector<int> weights;       ///< Indices into ModelFootprint::weights.
  uint64_t reuse = 1;             ///< Output spatial positions (conv), else 1.
};

struct ModelFootprint {
  Variant variant;
  uint64_t constantBytes = 0;
  uint64_t mutableBytes = 0;
  uint64_t activationsBytes = 0; ///< Includes scratch.
  uint64_t activationsLowerBound = 0;
  uint64_t scratchBytes = 0;     ///< Largest single kernel workspace.
  uint64_t codeBytes = 0;
  uint64_t libraryFlashBytes = 0;
  uint64_t libraryRamBytes = 0;
  bool sizesEstimated = false;   ///< int8 re-typed from the float graph (estimateFootprint).
  bool codeEstimated = true;     ///< Until codegen reports .text.
  std::vector<WeightTensor> weights;
  std::vector<LayerWork> layers;
  uint64_t totalMacs() const;
};

/// Kernel workspace bytes for a node under the variant's library on `core`
/// (CMSIS-NN *_get_buffer_size formulas for the core's build: Helium, DSP
/// extension or pure C, quant/CmsisBufferSizes.h, the sizes --use-cmsis
/// bundles plan; an approximation of NNLib's *_getsize for HiFi4). 0 when none.
uint64_t kernelScratchBytes(const Node &node, const Variant &variant, const Core &core);

/// The CMSIS-NN build a core runs: Helium, DSP extension or pure C.
CmsisExtension cmsisExtensionOf(const Core &core);

/// The footprint of a bundle already compiled (real int8 sizes, CMSIS-NN
/// workspaces as planned): `fit --verify-link` of an int8 variant.
ModelFootprint footprintOfPlan(const MemoryPlan &plan, const Variant &variant, const Device &device);

/// Plans the model for the variant on the device (see the file comment).
ModelFootprint estimateFootprint(const Graph &graph, const Variant &variant, const Device &device,
                                 const PlanOptions &options = {});

/// The int8 variant's footprint from a graph bundlefit already quantized
/// (quant/QuantizeGraph.h: real int8/int32 types, kept-float nodes, Quantize
/// and Dequantize), plus the variant's kernel scratch: the sizes `compile
/// --load-profile` plans. sizesEstimated is false. `variant` must be int8.
/// `int8Graph` has not been through the --memory-opt passes: they run here,
/// at options.memoryOpt, after CMSIS-NN preparation (as compile runs them).
ModelFootprint footprintOfQuantized(const Graph &int8Graph, const Variant &variant,
                                    const Device &device, const PlanOptions &options = {});

/// footprintOfQuantized(*int8Graph) for int8 variants when `int8Graph` is
/// given, else estimateFootprint(graph).
ModelFootprint footprintFor(const Graph &graph, const Graph *int8Graph, const Variant &variant,
                            const Device &device, const PlanOptions &options = {});

} // namespace bundlefit::device
