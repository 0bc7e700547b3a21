//===- UnfuseActivations.h - Split table activations off their producer ---===//
//
// The default passes fuse an activation into the Conv/Gemm/MatMul before it
// (FuseActivations.cpp), which float code wants. In int8 only Relu and Clip
// run inside the layer; Sigmoid, Tanh, HardSigmoid, HardSwish, LeakyRelu and
// the gated x * Sigmoid(x) (Silu) / x * HardSigmoid(x) run as lookup tables
// (src/ops/lut/) on the layer's int8 output, which needs that output's own
// parameters. This puts the activation back as the ONNX nodes it was, under
// the value names it had (kActivationInputAttr), so that the profiler
// records their ranges and the quantizer finds them, or a QDQ model's own.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <functional>
#include <string>

namespace bundlefit {

/// Splits every fused table activation whose input `hasParams` accepts off
/// its producer; returns how many. A gated one (x * Sigmoid(x), x *
/// HardSigmoid(x)) becomes one op (Silu, HardSwish), or with `gates` and
/// parameters for the gate, the gate op and a Mul (a QDQ model's arithmetic).
size_t unfuseTableActivations(Graph &graph,
                              const std::function<bool(const std::string &)> &hasParams,
                              bool gates = false);

} // namespace bundlefit
