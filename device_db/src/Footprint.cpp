//===- Footprint.cpp - Plan a model per build variant ----------------------===//
#include "bundlefit/device/Footprint.h"

#include "bundlefit/int8/CmsisBufferSizes.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <map>
#include <set>

namespace bundlefit::device {

namespace {

/// Kernel window facts of a Conv/pool node (NCHW).
struct Window {
  int64_t cin = 1, kh = 1, kw = 1, win = 1, oh = 1, ow = 1, cout = 1;
  int64_t padSum = 0, maxPad = 0, stride = 1, group = 1;
};

Window windowOf(const Node &node) {
  Window w;
  const Value *x = node.input(0), *y = node.output(0);
  if (x && x->type.rank() == 4) {
    w.cin = x->type.shape[1];
    w.win = x->type.shape[3];
  }
  if (y && y->type.rank() == 4) {
    w.cout = y->type.shape[1];
    w.oh = y->type.shape[2];
    w.ow = y->type.shape[3];
  }
  std::vector<int64_t> kernel = node.attrs.getInts("kernel_shape");
  if (kernel.empty() && node.opType == "Conv" && node.input(1) && node.input(1)->type.rank() == 4)
    kernel = {node.input(1)->type.shape[2], node.input(1)->type.shape[3]};
  if (kernel.size() == 2) {
    w.kh = kernel[0];
    w.kw = kernel[1];
  }
  if (node.opType == "GlobalAveragePool" && x && x->type.rank() == 4) {
    w.kh = x->type.shape[2];
    w.kw = x->type.shape[3];
  }
  for (int64_t p : node.attrs.getInts("pads")) {
    w.padSum += p;
    w.maxPad = std::max(w.maxPad, p);
  }
  for (int64_t s : node.attrs.getInts("strides"))
    w.stride = std::max(w.stride, s);
  w.group = node.attrs.getInt("group", 1);
  return w;
}

LayerClass classify(const Node &node) {
  if (node.opType == "Conv")
    return node.attrs.getInt("group", 1) > 1 ? LayerClass::Depthwise : LayerClass::Conv;
  if (node.opType == "Gemm" || node.opType == "MatMul")
    return LayerClass::FullyConnected;
  return LayerClass::Other;
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
    if ((layer.cls == LayerClass::Conv || layer.cls == LayerClass::Depthwise) && out &&
        out->type.rank() == 4)
      layer.reuse = uint64_t(out->type.shape[2] * out->type.shape[3]);
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

Variant parseVariant(const std::string &text) {
  for (const Variant &variant : allVariants())
    if (variant.name == text)
      return variant;
  std::string known;
  for (const Variant &variant : allVariants())
    known += (known.empty() ? "" : ", ") + variant.name;
  throw Error(ExitCode::Usage,
              "unknown variant '" + text + "' (option --variant); known: " + known);
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
  Window w = windowOf(node);
  bool hifi = variant.kernels == Kernels::HiFi4 || variant.kernels == Kernels::HiFi4WithCmsis;
  if (hifi) {
    // Approximation of NNLib's xa_nn_*_getsize (not the exact formulas): a
    // circular input buffer of kernel-height rows (channels padded to 8) plus
    // one output row of 32-bit accumulators for convolutions; one output row
    // of accumulators for pooling.
    if (node.opType == "Conv") {
      uint64_t rows = uint64_t(alignUp(uint64_t(w.cin), 8) * w.kh * (w.win + w.padSum / 2));
      return rows + (w.group > 1 ? 0 : uint64_t(w.ow * w.cout * 4));
    }
    if (node.opType == "MaxPool" || node.opType == "AveragePool")
      return uint64_t(w.ow * w.cin * 4);
    return 0;
  }
  // CMSIS-NN *_get_buffer_size for the build the core runs: Helium, DSP
  // extension or pure C (quant/CmsisBufferSizes.h, the sizes --use-cmsis
  // bundles plan). Asymmetric pads count by their top/left side, as
  // CMSIS-NN's padding tile does.
  const CmsisExtension extension = cmsisExtensionOf(core);
  CmsisConvShape s;
  s.inC = int32_t(w.cin), s.kH = int32_t(w.kh), s.kW = int32_t(w.kw);
  s.outH = int32_t(w.oh), s.outW = int32_t(w.ow), s.outC = int32_t(w.cout);
  s.strideH = s.strideW = int32_t(w.stride);
  const std::vector<int64_t> pads = node.attrs.getInts("pads");
  if (pads.size() == 4)
    s.padH = int32_t(pads[0]), s.padW = int32_t(pads[1]);
  if (const Value *x = node.input(0); x && x->type.rank() == 4)
    s.n = int32_t(x->type.shape[0]), s.inH = int32_t(x->type.shape[2]),
    s.inW = int32_t(x->type.shape[3]);
  if (node.opType == "Conv") {
    if (w.group > 1 && w.group == w.cin)
      return uint64_t(cmsisDepthwiseBufferSize(s, extension));
    return w.group > 1 ? 0 : uint64_t(cmsisConvBufferSize(s, extension));
  }
  if (node.opType == "Gemm" && node.output(0) && node.output(0)->type.rank() == 2)
    return uint64_t(
        cmsisFullyConnectedBufferSize(int32_t(node.output(0)->type.shape[1]), extension));
  if (node.opType == "AveragePool" || node.opType == "GlobalAveragePool")
    return uint64_t(cmsisAvgPoolBufferSize(int32_t(w.ow), int32_t(w.cin), extension));
  return 0;
}

ModelFootprint footprintOfPlan(const MemoryPlan &plan, const Variant &variant,
                               const Device &device) {
  ModelFootprint fp = summarize(plan, variant, device);
  fp.sizesEstimated = false;
  return fp;
}

} // namespace bundlefit::device
