//===- Footprint.cpp - Plan a model per build variant ----------------------===//
#include "bundlefit/device/Footprint.h"

#include "bundlefit/ops/Cmsis.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <map>
#include <set>

namespace bundlefit::device {

namespace {

LayerClass classify(const Node &node) {
  const OpDef *def = OpRegistry::get().find(node.opType);
  return def && def->device.costClass ? def->device.costClass(node) : LayerClass::Other;
}

ModelFootprint summarize(const MemoryPlan &plan, const Variant &variant, const Device &device) {
  ModelFootprint fp;
  fp.variant = variant;
  fp.constantBytes = plan.constantSize;
  fp.mutableBytes = plan.mutableSize;
  fp.activationsBytes = plan.activationsSize;
  fp.activationsLowerBound = plan.activationsLowerBound;
  const KernelLibrary &library = mainLibrary(device, variant);
  fp.codeBytes = library.codeBytes;
  fp.libraryFlashBytes = library.flashBytes;
  fp.libraryRamBytes = library.ramBytes;

  std::map<const Value *, int> weightIndex;
  for (const Value *constant : plan.constants) {
    weightIndex[constant] = int(fp.weights.size());
    fp.weights.push_back(
        {constant->name, alignUp(plan.placementOf(constant).size, MemoryPlan::kAlignment), -1, 1});
  }
  for (const Node *node : plan.schedule) {
    if (isViewNode(*node))
      continue;
    LayerWork layer;
    layer.name = node->name;
    layer.op = node->opType;
    layer.cls = classify(*node);
    layer.macs = countNodeMacs(*node);
    const Value *out = node->output(0);
    layer.outputElements = out ? uint64_t(out->type.numElements()) : 0;
    if (out)
      layer.activationBytes += out->type.bytes();
    // How many output pixels read each weight: MACs over weights, whatever
    // the layout (NCHW Conv, NHWC Int16Conv), N x OH x OW for either.
    const Value *w = node->inputs.size() > 1 ? node->inputs[1] : nullptr;
    if ((layer.cls == LayerClass::Conv || layer.cls == LayerClass::Depthwise) && out &&
        out->type.rank() == 4 && w && w->isConstant() && w->type.numElements() > 0)
      layer.reuse = layer.macs / uint64_t(w->type.numElements());
    for (size_t i = 0; i < node->outputs.size(); ++i)
      if (i > 0 && node->outputs[i]->name == node->name + "_scratch")
        layer.scratchBytes = node->outputs[i]->type.bytes();
    if (const Placement *workspace = plan.scratchOf(node)) // a compiled plan's
      layer.scratchBytes = std::max(layer.scratchBytes, workspace->size);
    fp.scratchBytes = std::max(fp.scratchBytes, layer.scratchBytes);
    std::set<int> seen;
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const Value *input = node->inputs[i];
      if (!input)
        continue;
      auto it = weightIndex.find(input);
      if (it == weightIndex.end()) {
        if (!input->isConstant())
          layer.activationBytes += input->type.bytes();
        continue;
      }
      if (!seen.insert(it->second).second)
        continue;
      layer.weights.push_back(it->second);
      WeightTensor &weight = fp.weights[it->second];
      if (weight.layer < 0) {
        weight.layer = int(fp.layers.size());
        weight.reuse = layer.reuse;
      }
    }
    fp.layers.push_back(layer);
  }
  return fp;
}

} // namespace

const std::vector<Variant> &allVariants() {
  static const std::vector<Variant> variants = {
      {"float", Precision::Float, Kernels::Portable},
      {"int8", Precision::Int8, Kernels::Portable},
      {"int8-cmsis", Precision::Int8, Kernels::CmsisNn},
      {"int8-hifi4", Precision::Int8, Kernels::HiFi4},
      {"int8-hifi4-cmsis", Precision::Int8, Kernels::HiFi4WithCmsis}};
  return variants;
}

namespace {
constexpr const char kInt8[] = "int8";
constexpr const char kInt16x8[] = "int16x8";
} // namespace

Variant asInt16x8(const Variant &variant) {
  Variant out = variant;
  if (variant.precision == Precision::Int8 && !isInt16x8(variant))
    out.name = kInt16x8 + variant.name.substr(sizeof(kInt8) - 1);
  return out;
}

bool isInt16x8(const Variant &variant) { return variant.name.rfind(kInt16x8, 0) == 0; }

bool int16x8Builds(const Variant &variant) {
  return variant.precision == Precision::Int8 &&
         (variant.kernels == Kernels::Portable || variant.kernels == Kernels::CmsisNn);
}

Variant parseVariant(const std::string &text) {
  for (const Variant &variant : allVariants())
    if (variant.name == text || asInt16x8(variant).name == text)
      return variant.name == text ? variant : asInt16x8(variant);
  std::string known;
  for (const Variant &variant : allVariants())
    known += (known.empty() ? "" : ", ") + variant.name;
  throw Error(ExitCode::Usage, "unknown variant '" + text + "' (option --variant); known: " +
                                   known + " (int16x8 models: int16x8, int16x8-cmsis)");
}

bool variantAvailable(const Device &device, const Variant &variant) {
  switch (variant.kernels) {
  case Kernels::Portable:
    return true;
  case Kernels::CmsisNn:
    return device.findLibrary("cmsis_nn") != nullptr;
  case Kernels::HiFi4:
    return device.findLibrary("hifi4_nnlib") != nullptr;
  case Kernels::HiFi4WithCmsis:
    return device.findLibrary("hifi4_nnlib") && device.findLibrary("cmsis_nn");
  }
  return false;
}

const KernelLibrary &mainLibrary(const Device &device, const Variant &variant) {
  auto need = [&](const char *key) -> const KernelLibrary & {
    const KernelLibrary *library = device.findLibrary(key);
    if (!library)
      throw Error(ExitCode::Usage, "device '" + device.id + "' has no " + key +
                                       " library for variant '" + variant.name +
                                       "' (option --variant)");
    return *library;
  };
  if (variant.precision == Precision::Float)
    return need("portable_float");
  switch (variant.kernels) {
  case Kernels::Portable:
    return need("portable_int8");
  case Kernels::CmsisNn:
    return need("cmsis_nn");
  case Kernels::HiFi4:
  case Kernels::HiFi4WithCmsis:
    return need("hifi4_nnlib");
  }
  return need("portable_int8");
}

const KernelLibrary &libraryFor(const Device &device, const Variant &variant,
                                const std::string &opType) {
  const KernelLibrary &main = mainLibrary(device, variant);
  if (main.implements(opType))
    return main;
  if (variant.kernels == Kernels::HiFi4WithCmsis) {
    const KernelLibrary *cmsis = device.findLibrary("cmsis_nn");
    if (cmsis && cmsis->implements(opType))
      return *cmsis;
  }
  return *device.findLibrary(variant.precision == Precision::Float ? "portable_float"
                                                                   : "portable_int8");
}

uint64_t ModelFootprint::totalMacs() const {
  uint64_t total = 0;
  for (const LayerWork &layer : layers)
    total += layer.macs;
  return total;
}

CmsisExtension cmsisExtensionOf(const Core &core) {
  return core.helium         ? CmsisExtension::Mve
         : core.dspExtension ? CmsisExtension::Dsp
                             : CmsisExtension::None;
}

uint64_t kernelScratchBytes(const Node &node, const Variant &variant, const Core &core) {
  if (variant.precision != Precision::Int8 || variant.kernels == Kernels::Portable)
    return 0;
  if (variant.kernels == Kernels::HiFi4 || variant.kernels == Kernels::HiFi4WithCmsis) {
    const OpDef *def = OpRegistry::get().find(node.opType);
    return def && def->device.nnlibScratch ? def->device.nnlibScratch(node) : 0;
  }
  return uint64_t(cmsisScratchFor(node, cmsisExtensionOf(core)));
}

ModelFootprint footprintOfPlan(const MemoryPlan &plan, const Variant &variant,
                               const Device &device) {
  ModelFootprint fp = summarize(plan, variant, device);
  fp.sizesEstimated = false;
  return fp;
}

} // namespace bundlefit::device
