//===- OpRegistry.h - What each supported operator means statically --------===//
//
// For every operator bundlefit supports, an OpSchema says how to compute the
// output types from the input types (static shape/dtype inference) and how
// many multiply-accumulates a node costs. Operators are registered explicitly,
// one family per file in src/ir/ops/, listed in src/ir/ops/AllOps.cpp (no
// static initialisers: they vanish when linking static libraries).
//
// Operand conventions are ONNX opset 13 (see Graph.h). Attributes bundlefit
// adds on top of ONNX:
//   Softmax/LogSoftmax  coerce_to_2d=1  opset<13 semantics: normalise over
//                                      the flattened dims [axis, rank).
//   Conv/Gemm/MatMul    activation="Relu"|"Clip"|"LeakyRelu"|"Sigmoid"|...
//                       activation_min/activation_max/activation_alpha:
//                       an activation fused into the producer (passes).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

struct OpSchema {
  std::string opType;
  /// Sets node.outputs[i]->type (and typeKnown) from the inputs and
  /// attributes. Inputs that must be constants (Reshape's shape, Slice's
  /// starts...) are read from Value::data. Throws Error(Unsupported, ...)
  /// starting with node.describe() when the node is invalid or uses a mode
  /// bundlefit does not support.
  void (*inferTypes)(Node &node) = nullptr;
  /// Multiply-accumulates for one inference (0 for pure data movement).
  uint64_t (*countMacs)(const Node &node) = nullptr;
};

class OpRegistry {
public:
  /// The registry of all supported operators.
  static const OpRegistry &get();

  void add(OpSchema schema);
  const OpSchema *find(const std::string &opType) const;
  std::vector<std::string> supportedOps() const;

private:
  std::vector<OpSchema> schemas_;
};

/// Infers the types of one node (throws if its op is unknown or invalid).
void inferNodeTypes(Node &node);
/// Infers types for every node in execution order.
void inferGraphTypes(Graph &graph);
/// MACs of one node, 0 if unknown.
uint64_t countNodeMacs(const Node &node);
/// Whether input `index` of `node` is a compile-time parameter (Reshape's
/// shape, Slice's starts, Clip's bounds, Resize's scales...) rather than data
/// the kernel reads at run time. Parameters are baked into the code; they
/// never occupy the constant-weight region.
bool isParameterOperand(const Node &node, size_t index);

// One registration function per operator family (src/ir/ops/<Family>.cpp).
void registerConvOps(OpRegistry &registry);        // Conv, ConvTranspose
void registerPoolOps(OpRegistry &registry);        // MaxPool, AveragePool, Global*Pool
void registerMatMulOps(OpRegistry &registry);      // Gemm, MatMul
void registerNormOps(OpRegistry &registry);        // BatchNormalization, Softmax, LogSoftmax
void registerResizeOps(OpRegistry &registry);      // Resize (Upsample is imported as Resize)
void registerElementwiseOps(OpRegistry &registry); // Add..Min, PRelu, unary activations, Cast
void registerShapeOps(OpRegistry &registry);       // Reshape..Range, Identity, Dropout
void registerReduceOps(OpRegistry &registry);      // ReduceMean, ReduceMax
void registerQuantOps(OpRegistry &registry);       // Quantize, Dequantize, Rescale (internal)
void registerFusedOps(OpRegistry &registry);       // ConvPool (FusedOps.h)

} // namespace bundlefit
