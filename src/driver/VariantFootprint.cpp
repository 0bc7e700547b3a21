//===- VariantFootprint.cpp - Size a build variant from its graph ----------===//
//
// Moved here from device_db: the sizing paths that run graph passes (CMSIS-NN
// preparation, --memory-opt) belong to the one pipeline; device_db only
// summarizes a plan (footprintOfPlan) and fits it.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/driver/VariantFootprint.h"

#include "bundlefit/ir/GraphCopy.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/passes/Passes.h"
#include "bundlefit/quant/CmsisLayout.h"
#include "bundlefit/support/Error.h"

namespace bundlefit::device {

namespace {

/// The bias of a layer with weights: int32 in an int8 build.
bool isBiasOperand(const Node &node, size_t index) {
  const OpDef *def = OpRegistry::get().find(node.opType);
  return def && def->biasOperand >= 0 && size_t(def->biasOperand) == index;
}

/// The variant's kernel scratch for `node` as one extra, unread int8 output
/// (none when the kernel takes none).
std::vector<std::pair<std::string, TensorType>>
scratchOutput(const Node &node, const Variant &variant, const Core &core) {
  uint64_t scratch = kernelScratchBytes(node, variant, core);
  if (!scratch)
    return {};
  return {{node.name + "_scratch", TensorType{DType::Int8, {int64_t(scratch)}, {}}}};
}

/// A copy of `graph` re-typed as Glow's int8 build (see Footprint.h), with
/// kernel scratch as extra, unread outputs of the nodes that need it.
std::unique_ptr<Graph> quantizedCopy(const Graph &graph, const Variant &variant, const Core &core) {
  auto retype = [](TensorType type) {
    if (type.dtype == DType::Float32)
      type.dtype = DType::Int8;
    type.quant = {};
    return type;
  };
  GraphCopyHooks hooks;
  hooks.input = [&](Graph &copy, const Value &input) {
    Value *placeholder = copy.addInput(input.name, input.type);
    if (input.type.dtype != DType::Float32)
      return placeholder;
    Node *quantize = copy.addNode(Op::QuantizeLinear, input.name + "_quantize", {placeholder},
                                  {input.name + "_q"});
    quantize->output()->type = retype(input.type);
    quantize->output()->typeKnown = true;
    return quantize->output();
  };
  hooks.constant = [](Graph &copy, const Node &node, size_t index) {
    const Value *value = node.inputs[index];
    TensorType type = value->type;
    type.quant = {};
    if (type.dtype == DType::Float32)
      type.dtype = isBiasOperand(node, index) ? DType::Int32 : DType::Int8;
    std::vector<uint8_t> bytes =
        type.dtype == value->type.dtype ? value->data : std::vector<uint8_t>(type.bytes(), 0);
    return copy.addConstant(value->name, type, std::move(bytes));
  };
  hooks.outputName = [](const Value &output) {
    return output.isGraphOutput ? output.name + "_q" : output.name;
  };
  hooks.outputType = retype;
  hooks.extraOutputs = [&](const Node &node) { return scratchOutput(node, variant, core); };
  hooks.output = [](Graph &copy, const Value &output, Value *source) {
    if (output.type.dtype != DType::Float32) {
      copy.markOutput(source);
      return;
    }
    Node *dequantize =
        copy.addNode(Op::DequantizeLinear, output.name + "_dequantize", {source}, {output.name});
    dequantize->output()->type = output.type;
    dequantize->output()->typeKnown = true;
    copy.markOutput(dequantize->output());
  };
  return copyGraph(graph, hooks);
}

} // namespace

ModelFootprint estimateFootprint(const Graph &graph, const Variant &variant, const Device &device,
                                 const PlanOptions &options) {
  if (!variantAvailable(device, variant))
    mainLibrary(device, variant); // Throws the "has no library" error.
  if (variant.precision == Precision::Float) {
    return footprintOfPlan(planGraphMemory(graph, options), variant, device);
  }
  std::unique_ptr<Graph> copy = quantizedCopy(graph, variant, device.bundleCore());
  MemoryPlan plan = planGraphMemory(*copy, options);
  ModelFootprint fp = footprintOfPlan(plan, variant, device);
  fp.sizesEstimated = true;
  return fp;
}

namespace {

/// A copy of an already quantized graph, types and bytes as they are, with
/// the variant's kernel scratch as extra, unread outputs of the int8 nodes
/// that need it (float nodes run float kernels, which take none).
std::unique_ptr<Graph> copyWithKernelScratch(const Graph &graph, const Variant &variant,
                                             const Core &core) {
  GraphCopyHooks hooks;
  hooks.extraOutputs = [&](const Node &node) {
    const Value *first = node.output(0);
    if (!first || first->type.dtype != DType::Int8)
      return std::vector<std::pair<std::string, TensorType>>{};
    return scratchOutput(node, variant, core);
  };
  return copyGraph(graph, hooks);
}

} // namespace

ModelFootprint footprintOfQuantized(const Graph &int8Graph, const Variant &variant,
                                    const Device &device, const PlanOptions &options) {
  if (variant.precision != Precision::Int8)
    fatalInternal("footprintOfQuantized: variant " + variant.name + " is not an int8 build");
  if (!variantAvailable(device, variant))
    mainLibrary(device, variant); // Throws the "has no library" error.
  if (variant.kernels == Kernels::CmsisNn) {
    // Exactly what `compile --use-cmsis` plans: CMSIS-NN nodes with their
    // buffers for the core's build, and the NCHW <-> NHWC copies.
    std::unique_ptr<Graph> copy =
        copyWithKernelScratch(int8Graph, parseVariant("int8"), device.bundleCore());
    const CmsisPreparation cmsis = prepareCmsisGraph(*copy, cmsisExtensionOf(device.bundleCore()));
    runMemoryOptPasses(*copy, options.memoryOpt, options.patchRecomputeBudget,
                       options.bufferAlignment);
    ModelFootprint fp = footprintOfPlan(planGraphMemory(*copy, options), variant, device);
    fp.portable = cmsis.portable;
    return fp;
  }
  std::unique_ptr<Graph> copy = copyWithKernelScratch(int8Graph, variant, device.bundleCore());
  if (variant.kernels == Kernels::HiFi4 || variant.kernels == Kernels::HiFi4WithCmsis) {
    // NNLib calls, layer by layer: the --memory-opt forms are bundlefit's
    // own kernels, which these builds would not run.
    PlanOptions layerByLayer = options;
    layerByLayer.memoryOpt = 0;
    return footprintOfPlan(planGraphMemory(*copy, layerByLayer), variant, device);
  }
  runMemoryOptPasses(*copy, options.memoryOpt, options.patchRecomputeBudget,
                     options.bufferAlignment);
  return footprintOfPlan(planGraphMemory(*copy, options), variant, device);
}

std::vector<CalibrationResult> checkCalibration(const DeviceDatabase &db) {
  std::vector<CalibrationResult> results;
  for (const CalibrationPoint &point : an13001Timings()) {
    const Device &device = db.get(point.device);
    std::unique_ptr<Graph> graph = buildReferenceModel(point.model);
    ModelFootprint fp = estimateFootprint(*graph, parseVariant(point.variant), device);
    FitRequest request;
    request.weights = point.weightsInFlash ? WeightsPolicy::Flash : WeightsPolicy::Ram;
    FitResult fit = fitModel(device, fp, request);
    CalibrationResult result;
    result.point = point;
    result.predictedMs = fit.time.ms;
    const KernelLibrary &library = mainLibrary(device, fp.variant);
    if (library.comparison) {
      // The timing is of other kernels: check it against their figures.
      Device other = device;
      KernelLibrary &figures = other.libraries.at(library.key);
      figures.cyclesPerMac = library.comparison->cyclesPerMac;
      figures.fcCyclesPerMac = figures.depthwiseCyclesPerMac = 0;
      figures.cyclesPerElement = library.comparison->cyclesPerElement;
      result.predictedMs = fitModel(other, fp, request).time.ms;
      result.comparisonOf = library.comparison->what;
      result.ownKernelsMs = fit.time.ms;
    }
    result.errorPercent = (result.predictedMs - point.publishedMs) / point.publishedMs * 100.0;
    results.push_back(result);
  }
  return results;
}

} // namespace bundlefit::device
