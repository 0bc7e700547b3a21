//===- FusedActivations.cpp - The table of fusable activations -------------===//
#include "bundlefit/ops/FusedActivations.h"

#include "bundlefit/ops/ActivationDefaults.h"

#include "bundlefit/support/Error.h"

#include "bundlefit/kernels/abi.h" // enum bf_activation

#include <cfloat>

namespace bundlefit {

const FusedActivationKind *findFusedActivation(const std::string &name) {
  static const FusedActivationKind kinds[] = {
      {"None", BF_ACT_NONE},
      {"Relu", BF_ACT_RELU},
      {"Clip",
       BF_ACT_CLIP,
       {"activation_min", nullptr, -FLT_MAX},
       {"activation_max", nullptr, FLT_MAX}},
      {"LeakyRelu", BF_ACT_LEAKY_RELU, {"activation_alpha", "alpha", kLeakyReluAlpha}},
      {"Sigmoid", BF_ACT_SIGMOID},
      {"Tanh", BF_ACT_TANH},
      {"HardSigmoid",
       BF_ACT_HARD_SIGMOID,
       {"activation_alpha", "alpha", kHardSigmoidAlpha},
       {"activation_beta", "beta", kHardSigmoidBeta}},
      {"HardSwish", BF_ACT_HARD_SWISH},
      {"Silu", BF_ACT_SILU},
      {"Mish", BF_ACT_MISH},
      // The gate's HardSigmoid attributes.
      {"XHardSigmoid",
       BF_ACT_X_HARD_SIGMOID,
       {"activation_alpha", "alpha", kHardSigmoidAlpha},
       {"activation_beta", "beta", kHardSigmoidBeta}},
  };
  const std::string key = name.empty() || name == "none" ? "None" : name;
  for (const FusedActivationKind &kind : kinds)
    if (key == kind.name)
      return &kind;
  return nullptr;
}

const FusedActivationKind &fusedActivationOf(const Node &node) {
  const std::string name = node.attrs.getString("activation", "");
  const FusedActivationKind *kind = findFusedActivation(name);
  if (!kind)
    throw Error(ExitCode::Unsupported,
                node.describe() + ": attribute 'activation'=\"" + name + "\" is not supported");
  return *kind;
}

bool isInt8ClampActivation(const FusedActivationKind &kind) {
  return kind.code == BF_ACT_NONE || kind.code == BF_ACT_RELU || kind.code == BF_ACT_CLIP;
}

void fusedActivationParams(const FusedActivationKind &kind, const Node &node, float &a, float &b) {
  a = kind.a.attr ? node.attrs.getFloat(kind.a.attr, kind.a.fallback) : 0.0f;
  b = kind.b.attr ? node.attrs.getFloat(kind.b.attr, kind.b.fallback) : 0.0f;
}

} // namespace bundlefit
