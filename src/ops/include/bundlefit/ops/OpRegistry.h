//===- OpRegistry.h - What each supported operator means statically --------===//
//
// For every operator bundlefit supports, an OpSchema says how to compute the
// output types from the input types (static shape/dtype inference) and how
// many multiply-accumulates a node costs. Operators are registered explicitly,
// one family per folder in src/ops/<family>/, listed in src/ops/AllOps.cpp (no
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
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace bundlefit {

/// Static traits of an operator. Passes, the planner, the quantizer and code
/// generation ask the schema (hasOpTrait, isViewOp...) instead of keeping
/// their own lists of op names.
enum OpTrait : uint32_t {
  /// Output 0 is input 0's bytes under another shape (Reshape, Flatten,
  /// Squeeze, Unsqueeze, Identity, Dropout): it may share the input's storage.
  kOpView = 1u << 0,
  /// Copies elements without arithmetic (the views and Transpose): runs on
  /// any dtype, and an int8 output keeps the input's parameters.
  kOpMovesBytes = 1u << 1,
  /// Output element i reads only element i of each input (after
  /// broadcasting; BatchNormalization's per-channel parameters count as
  /// broadcast): the output may overwrite a dying input of the same shape
  /// and dtype, so the kernels must be safe in place.
  kOpElementwise = 1u << 2,
  /// The output depends only on input 0's type, not its values (Shape,
  /// Size, EyeLike): constant folding computes it at compile time.
  kOpReadsShapeOnly = 1u << 3,
};

/// How an operator behaves once quantized (src/quant/QuantizeGraph.cpp).
enum class Int8Rule : uint8_t {
  /// Stays float: the quantizer puts Dequantize/Quantize around it.
  None,
  /// The int8 output carries exactly the input's scale and zero point, so
  /// the kernel never rescales (views, Transpose, MaxPool, Relu, Clip,
  /// AveragePool, GlobalAveragePool).
  SameParams,
  /// The output gets its own parameters from the profiled range and the
  /// int8 kernel rescales (Conv, Gemm, Add, Mul, Concat, Softmax).
  OwnParams,
};

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
  /// OpTrait bits.
  uint32_t traits = 0;
  /// Bit i set: input i is a compile-time parameter (Reshape's shape, Slice's
  /// starts, Clip's bounds...): baked into the code, never a weight.
  uint32_t parameterOperands = 0;
  Int8Rule int8 = Int8Rule::None;
  /// The CMSIS-NN s8 function an int8 node of this op may map to (nullptr:
  /// none). cmsisFunctionFor (src/int8/CmsisLayout.cpp) asks it first, then
  /// decides per node whether the call applies (a depthwise Conv calls the
  /// wrapper's depthwise form).
  const char *cmsisFunction = nullptr;

  // Chainable setters for the registration lines:
  //   registry.add({"Reshape", inferReshape, noMacs}).with(kOpView | kOpMovesBytes)
  //       .parameters(kParametersFrom1).quantized(Int8Rule::SameParams);
  OpSchema &with(uint32_t opTraits) {
    traits |= opTraits;
    return *this;
  }
  OpSchema &parameters(uint32_t mask) {
    parameterOperands = mask;
    return *this;
  }
  OpSchema &quantized(Int8Rule rule) {
    int8 = rule;
    return *this;
  }
  OpSchema &cmsis(const char *function) {
    cmsisFunction = function;
    return *this;
  }
};

/// parameterOperands masks.
constexpr uint32_t kParametersFrom1 = ~1u; ///< every input but the data input 0
constexpr uint32_t kAllParameters = ~0u;

class OpRegistry {
public:
  /// The registry of all supported operators.
  static const OpRegistry &get();

  OpRegistry() = default;
  OpRegistry(const OpRegistry &) = delete; // byName_ points into schemas_
  OpRegistry &operator=(const OpRegistry &) = delete;

  /// Adds a schema; returns it so the registration line can set its traits.
  OpSchema &add(OpSchema schema);
  const OpSchema *find(const std::string &opType) const;
  std::vector<std::string> supportedOps() const;

private:
  // A deque keeps the references add() returns valid.
  std::deque<OpSchema> schemas_;
  std::unordered_map<std::string, const OpSchema *> byName_;
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
/// Whether the registered `opType` has every bit of `traits` (false when unknown).
bool hasOpTrait(const std::string &opType, uint32_t traits);
/// A view op (kOpView): its output may alias its input's storage.
inline bool isViewOp(const std::string &opType) { return hasOpTrait(opType, kOpView); }
/// The int8 rule of `opType` (None when unknown).
Int8Rule int8RuleOf(const std::string &opType);

// One registration function per operator family (src/ops/<family>/<Family>Ops.cpp).
void registerConvOps(OpRegistry &registry);        // Conv, ConvTranspose
void registerPoolOps(OpRegistry &registry);        // MaxPool, AveragePool, Global*Pool
void registerMatMulOps(OpRegistry &registry);      // Gemm, MatMul
void registerNormOps(OpRegistry &registry);        // BatchNormalization, Softmax, LogSoftmax
void registerResizeOps(OpRegistry &registry);      // Resize (Upsample is imported as Resize)
void registerElementwiseOps(OpRegistry &registry); // Add..Min, PRelu, unary activations, Cast
void registerShapeOps(OpRegistry &registry);       // Reshape..Range, Identity, Dropout
void registerReduceOps(OpRegistry &registry);      // ReduceMean, ReduceMax
void registerQuantOps(OpRegistry &registry);       // Quantize, Dequantize, Rescale (internal)
void registerLinearQuantOps(OpRegistry &registry); // ONNX QuantizeLinear, DequantizeLinear
void registerFusedOps(OpRegistry &registry);       // ConvPool (FusedOps.h)
void registerMovementOps(OpRegistry &registry);    // Expand, Tile, DepthToSpace, Trilu...
void registerIndexOps(OpRegistry &registry); // GatherElements, GatherND, ScatterElements, OneHot
void registerUnaryMathOps(OpRegistry &registry); // Neg, Log, Erf, Selu... (UnaryMath.h)
void registerRecurrentOps(OpRegistry &registry); // LSTM, GRU, RNN (unrolled by a pass)

} // namespace bundlefit
