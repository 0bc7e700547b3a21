//===- QuantGraphBuilder.h - Hand-built quantized graphs for tests ---------===//
//
// Builds graphs with the types the quantizer would set (docs/quantized-ir.md),
// without running quantization, so kernel and codegen tests control every
// scale and zero point. Shared by tests/quant_kernels and tests/cmsis.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace bundlefit::test {

TensorType int8Type(const Shape &shape, float scale, int32_t zeroPoint) {
  TensorType t;
  t.dtype = DType::Int8;
  t.shape = shape;
  t.quant.scales = {scale};
  t.quant.zeroPoints = {zeroPoint};
  return t;
}

TensorType floatType(const Shape &shape) {
  TensorType t;
  t.shape = shape;
  return t;
}

/// Builds a graph with explicit output types (what the quantizer would set).
class Builder {
public:
  /// \p seed fixes the random weights, so a failing case repeats.
  explicit Builder(const std::string &name, unsigned seed = 12345)
      : graph(std::make_unique<Graph>()), rng_(seed) {
    graph->name = name;
  }

  Value *input(const std::string &name, const Shape &shape) {
    return graph->addInput(name, floatType(shape));
  }
  /// Random symmetric int8 weights; per-channel scales along `axis` when
  /// `scales` has more than one entry.
  Value *weights(const std::string &name, const Shape &shape, std::vector<float> scales,
                 int axis = 0) {
    TensorType t = int8Type(shape, 1.0f, 0);
    t.quant.scales = scales;
    t.quant.zeroPoints.assign(scales.size(), 0);
    t.quant.axis = scales.size() > 1 ? axis : -1;
    std::uniform_int_distribution<int> d(-127, 127);
    std::vector<uint8_t> bytes(size_t(numElements(shape)));
    for (uint8_t &b : bytes)
      b = uint8_t(int8_t(d(rng_)));
    return graph->addConstant(name, t, bytes);
  }
  Value *int32Bias(const std::string &name, int64_t n, std::vector<float> scales) {
    TensorType t;
    t.dtype = DType::Int32;
    t.shape = {n};
    t.quant.scales = scales;
    t.quant.zeroPoints.assign(scales.size(), 0);
    std::uniform_int_distribution<int> d(-2000, 2000);
    std::vector<int32_t> values(static_cast<size_t>(n));
    for (int32_t &v : values)
      v = d(rng_);
    std::vector<uint8_t> bytes(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return graph->addConstant(name, t, bytes);
  }
  Value *floatScalar(const std::string &name, float value) {
    std::vector<uint8_t> bytes(4);
    std::memcpy(bytes.data(), &value, 4);
    return graph->addConstant(name, floatType({}), bytes);
  }
  Value *int64s(const std::string &name, const std::vector<int64_t> &values) {
    TensorType t;
    t.dtype = DType::Int64;
    t.shape = {int64_t(values.size())};
    std::vector<uint8_t> bytes(values.size() * 8);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return graph->addConstant(name, t, bytes);
  }
  Value *op(const std::string &opType, const std::string &name, const std::vector<Value *> &in,
            const TensorType &type, const std::function<void(Attributes &)> &attrs = {}) {
    Node *node = graph->addNode(opType, name, in, {name});
    if (attrs)
      attrs(node->attrs);
    node->outputs[0]->type = type;
    node->outputs[0]->typeKnown = true;
    return node->outputs[0];
  }

  std::unique_ptr<Graph> graph;

private:
  std::mt19937 rng_;
};

} // namespace bundlefit::test
