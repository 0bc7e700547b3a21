//===- Interpreter.h - The reference interpreter ---------------------------===//
//
// Runs a graph node by node with each operator's reference kernel
// (evaluateNode, bundlefit/ops/OpRegistry.h: simple, obviously correct
// loops; for int8 nodes the TFLite formulas in plain C++). It is the
// yardstick for bundles (tests compare against it) and the engine of the
// quantization profiler (the observer sees every tensor). Speed is not a
// goal; clarity is.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/ir/Tensor.h"

#include <functional>
#include <map>
#include <string>

namespace bundlefit {

class Interpreter {
public:
  /// Called after each node output (and each graph input) is computed.
  using Observer = std::function<void(const Value &value, const Tensor &tensor)>;

  explicit Interpreter(const Graph &graph) : graph_(graph) {}
  void setObserver(Observer observer) { observer_ = std::move(observer); }

  /// Runs the graph. `inputs` are keyed by graph input name; the result is
  /// keyed by graph output name. Throws Error(BadInputFile) naming the input
  /// when one is missing or has the wrong type/shape.
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor> &inputs) const;

private:
  const Graph &graph_;
  Observer observer_;
};

} // namespace bundlefit
