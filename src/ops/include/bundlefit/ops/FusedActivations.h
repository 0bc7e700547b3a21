//===- FusedActivations.h - Activations a producer may apply itself --------===//
//
// Conv, ConvTranspose, Gemm and MatMul (and ConvPool) carry an activation
// fused into them by passes/FuseActivations as the attribute `activation`
// (OpRegistry.h). This table is the one list of them: its name, the kernels'
// bf_activation code, and which attributes are the kernel's a and b: the
// producer's, and the activation node's own that FuseActivations copies.
// "Silu" (x * Sigmoid(x)), "Mish" and "XHardSigmoid" (x * HardSigmoid(x;
// alpha, beta)) are the x*f(x) chains of EfficientNet and MobileNetV3.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <cstdint>
#include <string>

namespace bundlefit {

/// A kernel parameter (a or b) of a fused activation.
struct FusedActivationParam {
  const char *attr = nullptr; ///< The producer's attribute ("activation_alpha").
  /// The activation node's attribute it is copied from when fused ("alpha");
  /// nullptr when it is not an attribute there (Clip's bounds are inputs).
  const char *from = nullptr;
  float fallback = 0; ///< When neither node has it (ONNX's default).
};

struct FusedActivationKind {
  const char *name;
  int32_t code; ///< enum bf_activation (src/kernels/bundlefit_kernels.h)
  FusedActivationParam a = {}, b = {};
};

/// The row named `name` ("" and "None" are the no-op row), or nullptr.
const FusedActivationKind *findFusedActivation(const std::string &name);
/// The activation `node` carries (the no-op row when it has none); throws
/// Error(Unsupported) naming the node when the name is unknown.
const FusedActivationKind &fusedActivationOf(const Node &node);
/// Whether an int8 kernel applies `kind` itself: the ones that are a clamp of
/// the output range (None, Relu, Clip; fusedActivationRange). The others are
/// split off before quantization and run as tables (quant/UnfuseActivations).
bool isInt8ClampActivation(const FusedActivationKind &kind);
/// The kernel parameters a, b of `node`'s fused activation.
void fusedActivationParams(const FusedActivationKind &kind, const Node &node, float &a, float &b);

} // namespace bundlefit
