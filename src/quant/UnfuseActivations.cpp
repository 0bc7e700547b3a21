//===- UnfuseActivations.cpp - Split table activations off their producer -===//
#include "bundlefit/quant/UnfuseActivations.h"

#include "bundlefit/ops/ActivationDefaults.h"
#include "bundlefit/ops/FusedActivations.h"
#include "bundlefit/ops/OpRegistry.h"

#include <cmath>
#include <vector>

namespace bundlefit {
namespace {

/// How fused activation `kind` of `layer` runs on its own: one op (`op`),
/// or with `gateOp` a gate multiplied by its input, Mul(t, gateOp(t)).
/// Op::Unknown stands for none.
struct Split {
  Op op = Op::Unknown;
  Op gateOp = Op::Unknown;
};

Split splitOf(const Node &layer, bool gateWanted) {
  const std::string kind = layer.attrs.getString("activation", "");
  // These activations are named as the operator that computes them.
  const Op same = opFromName(kind);
  if (same == Op::Sigmoid || same == Op::Tanh || same == Op::HardSigmoid || same == Op::HardSwish ||
      same == Op::LeakyRelu)
    return {same, Op::Unknown};
  if (kind == "Silu")
    return gateWanted ? Split{Op::Unknown, Op::Sigmoid} : Split{Op::Silu, Op::Unknown};
  if (kind == "XHardSigmoid") {
    // x * HardSigmoid(x; 1/6, 1/2) is HardSwish (MobileNetV3 before opset 14).
    float alpha = 0, beta = 0;
    fusedActivationParams(fusedActivationOf(layer), layer, alpha, beta);
    const bool hardSwish = std::abs(alpha - kHardSwishAlpha) < 1e-7f && beta == kHardSwishBeta;
    return !gateWanted && hardSwish ? Split{Op::HardSwish, Op::Unknown}
                                    : Split{Op::Unknown, Op::HardSigmoid};
  }
  return {};
}

/// `layer` (whose successor in execution order is `next`) computes act(t)
/// into y: becomes layer -> t -> act -> y.
void split(Graph &graph, Node &layer, Node *next, Split how, const std::string &tName,
           const std::string &gName) {
  Value *y = layer.output(0);
  const Op first = how.op != Op::Unknown ? how.op : how.gateOp;
  Node *act = graph.insertNodeBefore(next, first, layer.name + "_" + opName(first), {y}, {tName});
  Value *t = act->output(0);
  // Swap the outputs: the layer writes t, the activation reads it.
  layer.outputs[0] = t, t->producer = &layer;
  t->type = y->type, t->typeKnown = true;
  act->inputs[0] = t;
  // The fused parameters (their defaults in the FusedActivations table) are
  // LeakyRelu's alpha and HardSigmoid's alpha and beta.
  float a = 0, b = 0;
  fusedActivationParams(fusedActivationOf(layer), layer, a, b);
  if (first == Op::LeakyRelu)
    act->attrs.setFloat("alpha", a);
  if (first == Op::HardSigmoid) {
    act->attrs.setFloat("alpha", a);
    act->attrs.setFloat("beta", b);
  }
  Node *last = act;
  if (how.gateOp != Op::Unknown) {
    // act writes the gate (the value Mul is created with); Mul writes y.
    Node *mul = graph.insertNodeBefore(next, Op::Mul, layer.name + "_gate", {t}, {gName});
    Value *gate = mul->output(0);
    act->outputs[0] = gate, gate->producer = act;
    gate->type = y->type, gate->typeKnown = true;
    mul->inputs = {t, gate};
    last = mul;
  }
  last->outputs[0] = y, y->producer = last;
  for (const char *attr : {"activation", "activation_alpha", "activation_beta",
                           kActivationInputAttr, kActivationGateAttr})
    layer.attrs.erase(attr);
}

} // namespace

size_t unfuseTableActivations(Graph &graph,
                              const std::function<bool(const std::string &)> &hasParams,
                              bool gates) {
  std::vector<Node *> nodes = graph.nodes();
  size_t count = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node &layer = *nodes[i];
    const std::string tName = layer.attrs.getString(kActivationInputAttr, "");
    const std::string gName = layer.attrs.getString(kActivationGateAttr, "");
    if (tName.empty() || layer.outputs.size() != 1 || !layer.output(0))
      continue;
    // A gate of its own where the model quantizes it (onnxruntime's QDQ
    // arithmetic); else x * gate(x) in one table.
    const bool gateWanted =
        gates && !gName.empty() && gName != tName && !graph.findValue(gName) && hasParams(gName);
    const Split how = splitOf(layer, gateWanted);
    // Under the name the profile or the model knows, or not at all.
    if ((how.op == Op::Unknown && how.gateOp == Op::Unknown) || graph.findValue(tName) ||
        !hasParams(tName))
      continue;
    if (how.gateOp != Op::Unknown && !gateWanted)
      continue; // a gate other than HardSwish's without parameters
    split(graph, layer, i + 1 < nodes.size() ? nodes[i + 1] : nullptr, how, tName, gName);
    ++count;
  }
  return count;
}

} // namespace bundlefit
