//===- PoolsAsConvs.cpp - Average pools with their own scale as convolutions -===//
//
// The int8 average pooling kernels keep the input's parameters. When a
// pre-quantized model gives the pool's output other ones, pooling then a
// Rescale rounds twice (up to 4 LSB off onnxruntime on one layer, measured
// in tests/qdq). A depthwise Conv whose weights are all 1/count computes the
// same average with one rounding: acc = sum(x - zp) times the multiplier
// inScale / (count * outScale), as onnxruntime's float requantization does.
// Only for windows that always hold `count` elements: no padding, no
// ceil_mode, 4-D input.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/quant/FoldQdq.h"

#include "bundlefit/ops/OpRegistry.h"

#include <cstring>

namespace bundlefit {

namespace {

bool paramsDiffer(const PresetQuantParams &preset, const Value &x, const Value &y) {
  auto in = preset.activations.find(x.name), out = preset.activations.find(y.name);
  if (in == preset.activations.end() || out == preset.activations.end())
    return false;
  return in->second.scale != out->second.scale || in->second.zeroPoint != out->second.zeroPoint;
}

/// The window of `node` when every position averages the same count, else {}.
std::vector<int64_t> fullWindow(const Node &node, const Shape &x) {
  if (node.is(Op::GlobalAveragePool))
    return {x[2], x[3]};
  if (node.attrs.getInt("ceil_mode", 0) != 0 ||
      node.attrs.getString("auto_pad", "NOTSET") != "NOTSET")
    return {};
  for (int64_t p : node.attrs.getInts("pads", {}))
    if (p != 0)
      return {};
  std::vector<int64_t> kernel = node.attrs.getInts("kernel_shape", {});
  return kernel.size() == 2 ? kernel : std::vector<int64_t>{};
}

} // namespace

size_t averagePoolsAsConvs(Graph &graph, PresetQuantParams &preset,
                           std::vector<std::string> &notes) {
  size_t count = 0;
  for (Node *node : graph.nodes()) {
    if (!node->isAnyOf(Op::AveragePool, Op::GlobalAveragePool))
      continue;
    const Value &x = *node->input(0);
    if (x.type.rank() != 4 || node->outputs.size() != 1 ||
        !paramsDiffer(preset, x, *node->output()))
      continue;
    std::vector<int64_t> window = fullWindow(*node, x.type.shape);
    if (window.empty())
      continue;
    const int64_t channels = x.type.shape[1];
    const int64_t elements = window[0] * window[1];
    // All `elements` weights of a channel are 1/elements: as int8, 1 at that scale.
    const float weight = 1.0f / float(elements);
    std::vector<float> values(static_cast<size_t>(channels * elements), weight);
    std::vector<uint8_t> bytes(values.size() * sizeof(float));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    Value *w = graph.addConstant(
        graph.uniqueValueName(node->name + "_average_weight"),
        TensorType{DType::Float32, {channels, 1, window[0], window[1]}, {}}, std::move(bytes));
    QuantParams wq;
    wq.scales = {weight};
    wq.zeroPoints = {0};
    preset.weights[w->name] = wq;
    std::vector<int64_t> strides = node->is(Op::GlobalAveragePool)
                                       ? std::vector<int64_t>{1, 1}
                                       : node->attrs.getInts("strides", {1, 1});
    notes.push_back(node->describe() +
                    ": output parameters differ from the input's; computed as "
                    "a depthwise Conv with weights 1/" +
                    std::to_string(elements) + " (one rounding, not pooling and a Rescale)");
    node->setOp(Op::Conv);
    node->attrs = Attributes();
    node->attrs.setInts("kernel_shape", window);
    node->attrs.setInts("strides", strides);
    node->attrs.setInts("pads", {0, 0, 0, 0});
    node->attrs.setInts("dilations", {1, 1});
    node->attrs.setInt("group", channels);
    node->inputs.push_back(w);
    inferNodeTypes(*node);
    ++count;
  }
  return count;
}

} // namespace bundlefit
