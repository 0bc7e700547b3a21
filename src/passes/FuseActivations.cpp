//===- FuseActivations.cpp - Apply activations inside Conv/Gemm/MatMul -----===//
//
// Why: an activation after a Conv, Gemm or MatMul is a full extra pass over
// the output tensor (read + write of RAM) and, unfused, keeps a second buffer
// of that size live. Applied while the producer stores each result, it costs
// one comparison or one call per element and no memory. The producer carries
// the activation as bundlefit attributes (OpRegistry.h, interpreter side in
// src/ops/common/FusedActivation.h) and computes the activation's output value
// itself, so readers and graph outputs keep the same value and name.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/passes/Passes.h"

#include "bundlefit/ops/FusedActivations.h"
#include "bundlefit/ops/OpRegistry.h" // kActivationInputAttr

#include "PassUtils.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace bundlefit {
namespace {

bool isFusableProducer(const Node &node) {
  return node.isAnyOf(Op::Conv, Op::Gemm, Op::MatMul) && !node.attrs.has("activation");
}

/// A Clip bound: omitted -> +-FLT_MAX; must otherwise be a 1-element constant.
bool readClipBound(const Value *bound, float fallback, float &out) {
  if (!bound) {
    out = fallback;
    return true;
  }
  if (!bound->isConstant() || bound->type.numElements() != 1)
    return false;
  double value = bound->elementAsDouble(0);
  if (std::isnan(value))
    return false;
  out = float(std::clamp<double>(value, -FLT_MAX, FLT_MAX));
  return true;
}

/// Sets the fused activation parameters of `kind` on `attrs` from the
/// activation node's own attributes, as the table names both with their
/// defaults (LeakyRelu 0.01, HardSigmoid 0.2 and 0.5), so they are stated once.
void copyActivationParams(const FusedActivationKind &kind, const Node &from, Attributes &attrs) {
  for (const FusedActivationParam *param : {&kind.a, &kind.b})
    if (param->from)
      attrs.setFloat(param->attr, from.attrs.getFloat(param->from, param->fallback));
}

/// Writes the activation attributes of `activation` onto `producer`; false
/// when the activation is not one that can be fused.
bool describeActivation(const Node &activation, Attributes &attrs) {
  attrs.setString("activation", activation.opType);
  if (activation.isAnyOf(Op::Relu, Op::Sigmoid, Op::Tanh, Op::HardSwish, Op::Mish))
    return activation.inputs.size() == 1;
  if (activation.isAnyOf(Op::LeakyRelu, Op::HardSigmoid)) {
    copyActivationParams(*findFusedActivation(activation.opType), activation, attrs);
    return true;
  }
  if (activation.is(Op::Clip)) {
    float low = 0, high = 0;
    if (!readClipBound(activation.input(1), -FLT_MAX, low) ||
        !readClipBound(activation.input(2), FLT_MAX, high))
      return false;
    attrs.setFloat("activation_min", low);
    attrs.setFloat("activation_max", high);
    return true;
  }
  return false;
}

using ReadCounts = std::map<const Value *, size_t>;

bool tryFuse(const ReadCounts &reads, Node &activation, const MayFuseActivation &mayFuse) {
  Value *x = activation.input(0);
  Value *y = activation.output(0);
  if (!y || activation.outputs.size() != 1 || !pass_utils::hasSingleReader(reads, x, &activation))
    return false;
  Node *producer = x->producer;
  if (!isFusableProducer(*producer) || producer->output(0) != x ||
      x->type.dtype != DType::Float32 || y->type.dtype != DType::Float32)
    return false;
  Attributes fused;
  if (!describeActivation(activation, fused) || !mayFuse(*x, activation))
    return false;
  for (const auto &[name, attribute] : fused.all())
    producer->attrs.set(name, attribute);
  producer->attrs.setString(kActivationInputAttr, x->name);
  pass_utils::takeOverOutput(producer, 0, y);
  return true;
}

/// x * f(x) on a producer's output x, f = Sigmoid (SiLU, EfficientNet) or
/// HardSigmoid (HardSwish as MobileNetV3 exports it before opset 14):
/// Mul(x, gate(x)) becomes the producer's activation "Silu" / "XHardSigmoid",
/// so neither gate(x) nor x needs a buffer of its own. Returns the gate
/// node to erase with the Mul, or nullptr.
Node *tryFuseGatedChain(const ReadCounts &reads, Node &mul, const MayFuseActivation &mayFuse) {
  if (!mul.is(Op::Mul) || mul.inputs.size() != 2 || mul.outputs.size() != 1)
    return nullptr;
  for (size_t side = 0; side < 2; ++side) {
    Value *x = mul.input(side), *g = mul.input(1 - side);
    Node *gate = g ? g->producer : nullptr;
    if (!x || !gate || gate->input(0) != x || gate->outputs.size() != 1 ||
        !pass_utils::hasSingleReader(reads, g, &mul))
      continue;
    if (!gate->isAnyOf(Op::Sigmoid, Op::HardSigmoid))
      continue;
    Node *producer = x->producer;
    if (!producer || !isFusableProducer(*producer) || producer->output(0) != x ||
        x->isGraphOutput || reads.at(x) != 2 || x->type.dtype != DType::Float32 ||
        !x->type.sameShapeAndType(mul.output()->type) || !mayFuse(*x, *gate) || !mayFuse(*x, mul))
      continue;
    if (gate->is(Op::Sigmoid)) {
      producer->attrs.setString("activation", "Silu");
    } else {
      producer->attrs.setString("activation", "XHardSigmoid");
      copyActivationParams(*findFusedActivation("XHardSigmoid"), *gate, producer->attrs);
    }
    producer->attrs.setString(kActivationInputAttr, x->name);
    producer->attrs.setString(kActivationGateAttr, g->name);
    pass_utils::takeOverOutput(producer, 0, mul.output());
    return gate;
  }
  return nullptr;
}

} // namespace

size_t fuseActivations(Graph &graph) {
  return fuseActivations(graph, [](const Value &, const Node &) { return true; });
}

size_t fuseActivations(Graph &graph, const MayFuseActivation &mayFuse) {
  size_t fused = 0;
  // Counted once and kept current as nodes go: per-node graph scans made
  // this pass quadratic (4 s of a 20,000-node Relu chain).
  ReadCounts reads = pass_utils::countReads(graph);
  for (Node *node : graph.nodes()) {
    if (Node *gate = tryFuseGatedChain(reads, *node, mayFuse)) {
      pass_utils::eraseCounted(graph, node, reads);
      pass_utils::eraseCounted(graph, gate, reads);
      ++fused;
      continue;
    }
    if (!node->input(0) || !tryFuse(reads, *node, mayFuse))
      continue;
    pass_utils::eraseCounted(graph, node, reads);
    ++fused;
  }
  graph.removeUnusedValues();
  return fused;
}

} // namespace bundlefit
