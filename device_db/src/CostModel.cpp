//===- CostModel.cpp - Predicted inference time ------------------------------===//
#include "bundlefit/device/CostModel.h"

#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Error.h"

#include <algorithm>

namespace bundlefit::device {

namespace {

constexpr uint64_t kAssumedPlatformCache = 16 * 1024;

double cyclesPerMac(const KernelLibrary &library, LayerClass cls) {
  if (cls == LayerClass::FullyConnected && library.fcCyclesPerMac > 0)
    return library.fcCyclesPerMac;
  if (cls == LayerClass::Depthwise && library.depthwiseCyclesPerMac > 0)
    return library.depthwiseCyclesPerMac;
  return library.cyclesPerMac;
}

double fetchCycles(const MemoryRegionInfo *region, uint64_t bytes, uint64_t reuse,
                   const Core &core) {
  if (!region || region->readCyclesPerByte == 0)
    return 0;
  uint64_t cache = core.dcacheBytes ? core.dcacheBytes : kAssumedPlatformCache;
  bool fitsCache = region->cached && bytes <= cache;
  double fetched = double(bytes) * double(fitsCache ? 1 : std::max<uint64_t>(reuse, 1));
  return fetched * region->readCyclesPerByte;
}

} // namespace

TimePrediction predictTime(const Device &device, const ModelFootprint &footprint,
                           const std::vector<const MemoryRegionInfo *> &weightRegion,
                           const MemoryRegionInfo *activationRegion) {
  TimePrediction prediction;
  for (const LayerWork &layer : footprint.layers) {
    const KernelLibrary &library = libraryFor(device, footprint.variant, layer.op);
    const Core *core = device.findCore(library.core);
    if (!core)
      fatalInternal("library core '" + library.core + "' not found on " + device.id);
    prediction.calibrated = prediction.calibrated && library.calibrated;
    // The enum runs strongest to weakest, so the larger value is the weaker.
    prediction.provenance = std::max(prediction.provenance, library.provenance);
    LayerTime time;
    time.name = layer.name;
    time.library = library.key;
    time.provenance = library.provenance;
    time.provenanceFrom = library.provenanceFrom;
    // A layer with MACs pays per MAC only: the per-MAC figures are whole-layer
    // counts over MACs, so they include each output's bias, requantize and store.
    double elementCycles =
        layer.macs == 0 ? double(layer.outputElements) * library.cyclesPerElement : 0.0;
    time.computeCycles = double(layer.macs) * cyclesPerMac(library, layer.cls) + elementCycles +
                         library.layerOverheadCycles;
    for (int w : layer.weights)
      time.memoryCycles += fetchCycles(w < int(weightRegion.size()) ? weightRegion[w] : nullptr,
                                       footprint.weights[w].bytes, layer.reuse, *core);
    time.memoryCycles += fetchCycles(activationRegion, layer.activationBytes, 1, *core);
    time.ms = (time.computeCycles + time.memoryCycles) / (core->clockMhz * 1000.0);
    prediction.ms += time.ms;
    prediction.layers.push_back(time);
  }
  return prediction;
}

std::string describeProvenance(const KernelLibrary &library, const Device &device) {
  const Core *core = device.findCore(library.core);
  std::string coreType = core ? core->type : library.core;
  switch (library.provenance) {
  case CostProvenance::Published:
    return "calibrated on a published figure for " + device.id + " (" + library.provenanceFrom +
           ")";
  case CostProvenance::Measured:
    return "derived from measurements on " + coreType + " (" + library.provenanceFrom + ")";
  case CostProvenance::Carried:
    return "carried from " + library.provenanceFrom;
  }
  return "";
}

const std::vector<CalibrationPoint> &an13001Timings() {
  static const std::vector<CalibrationPoint> points = {
      {"AN13001 2.2.2/Table 2: RT1060 LeNet int8 plain", "rt1062", "lenet", "int8", false, 26.0},
      {"AN13001 Table 2/5: RT1060 LeNet int8 CMSIS-NN, weights in RAM", "rt1062", "lenet",
       "int8-cmsis", false, 10.0},
      {"AN13001 Table 5: RT1060 LeNet int8 CMSIS-NN, weights in Flash", "rt1062", "lenet",
       "int8-cmsis", true, 17.0},
      {"AN13001 Table 5: RT1060 CIFAR-10 int8 CMSIS-NN, weights in RAM", "rt1062", "cifar10",
       "int8-cmsis", false, 29.0, false},
      {"AN13001 Table 5: RT1060 CIFAR-10 int8 CMSIS-NN, weights in Flash", "rt1062", "cifar10",
       "int8-cmsis", true, 30.0, false},
      {"AN13001 Table 3: RT685 LeNet int8 plain", "rt685", "lenet", "int8", false, 60.39},
      {"AN13001 Table 3: RT685 LeNet int8 CMSIS-NN", "rt685", "lenet", "int8-cmsis", false, 28.52},
      {"AN13001 Table 3: RT685 LeNet int8 HiFi4", "rt685", "lenet", "int8-hifi4", false, 2.51},
      {"AN13001 Table 3: RT685 LeNet int8 HiFi4 + CMSIS-NN", "rt685", "lenet", "int8-hifi4-cmsis",
       false, 2.49},
  };
  return points;
}

namespace {

Value *constant(Graph &graph, const std::string &name, Shape shape) {
  TensorType type{DType::Float32, shape, {}};
  return graph.addConstant(name, type, std::vector<uint8_t>(type.bytes(), 0));
}

/// Builds the application notes' reference networks as their papers describe
/// them (layer, channels, kernel); every output shape comes from the operator
/// definitions (inferGraphTypes), as for an imported model, not from here.
struct Builder {
  Graph &graph;
  Value *conv(Value *x, const std::string &name, int64_t cin, int64_t cout, int64_t k,
              int64_t pad) {
    Node *node = graph.addNode(
        "Conv", name,
        {x, constant(graph, name + "_w", {cout, cin, k, k}), constant(graph, name + "_b", {cout})},
        {name + "_out"});
    node->attrs.setInts("kernel_shape", {k, k});
    node->attrs.setInts("pads", {pad, pad, pad, pad});
    node->attrs.setInts("strides", {1, 1});
    node->attrs.setInt("group", 1);
    return node->output();
  }
  Value *unary(const std::string &op, Value *x, const std::string &name) {
    return graph.addNode(op, name, {x}, {name + "_out"})->output();
  }
  Value *maxpool(Value *x, const std::string &name, int64_t k, int64_t stride) {
    Node *node = graph.addNode("MaxPool", name, {x}, {name + "_out"});
    node->attrs.setInts("kernel_shape", {k, k});
    node->attrs.setInts("strides", {stride, stride});
    node->attrs.setInt("ceil_mode", 1); // Caffe's pooling rounds up
    return node->output();
  }
  Value *flatten(Value *x, const std::string &name) {
    Node *node = graph.addNode("Flatten", name, {x}, {name + "_out"});
    node->attrs.setInt("axis", 1);
    return node->output();
  }
  Value *gemm(Value *x, const std::string &name, int64_t k, int64_t n) {
    Node *node = graph.addNode(
        "Gemm", name, {x, constant(graph, name + "_w", {n, k}), constant(graph, name + "_b", {n})},
        {name + "_out"});
    node->attrs.setInt("transB", 1);
    return node->output();
  }
};

} // namespace

std::unique_ptr<Graph> buildReferenceModel(const std::string &name) {
  auto graph = std::make_unique<Graph>();
  graph->name = name;
  Builder b{*graph};
  Value *y = nullptr;
  if (name == "lenet") {
    Value *x = graph->addInput("data", TensorType{DType::Float32, {1, 1, 28, 28}, {}});
    y = b.conv(x, "conv1", 1, 20, 5, 0);
    y = b.maxpool(y, "pool1", 2, 2);
    y = b.conv(y, "conv2", 20, 50, 5, 0);
    y = b.maxpool(y, "pool2", 2, 2);
    y = b.flatten(y, "flatten");
    y = b.gemm(y, "fc1", 50 * 4 * 4, 500);
    y = b.unary("Relu", y, "relu1");
    y = b.gemm(y, "fc2", 500, 10);
    y = b.unary("Softmax", y, "softmax");
  } else if (name == "cifar10") {
    Value *x = graph->addInput("data", TensorType{DType::Float32, {1, 3, 32, 32}, {}});
    y = b.conv(x, "conv1", 3, 32, 5, 2);
    y = b.maxpool(y, "pool1", 3, 2);
    y = b.unary("Relu", y, "relu1");
    y = b.conv(y, "conv2", 32, 16, 5, 2);
    y = b.unary("Relu", y, "relu2");
    y = b.maxpool(y, "pool2", 3, 2);
    y = b.conv(y, "conv3", 16, 32, 5, 2);
    y = b.unary("Relu", y, "relu3");
    y = b.maxpool(y, "pool3", 3, 2);
    y = b.flatten(y, "flatten");
    y = b.gemm(y, "fc1", 32 * 4 * 4, 10);
    y = b.unary("Softmax", y, "softmax");
  } else {
    throw Error(ExitCode::Usage, "unknown reference model '" + name + "' (lenet, cifar10)");
  }
  graph->markOutput(y);
  y->isGraphOutput = true;
  inferGraphTypes(*graph); // a wrong fc width above fails here, naming the Gemm
  return graph;
}

} // namespace bundlefit::device
