//===- GraphCopy.h - A graph copied node by node, with hooks ----*- C++ -*-===//
//
// The sizing paths (driver/VariantFootprint.cpp) plan copies of a graph:
// re-typed as an int8 build, or with kernel scratch as extra outputs. The
// walk is the same each time (inputs, then each node with its operands
// mapped into the copy, then the outputs); the hooks say what differs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace bundlefit {

struct GraphCopyHooks {
  /// The copy's value for a graph input (default: an input of the same name and type).
  std::function<Value *(Graph &copy, const Value &input)> input;
  /// The copy's value for constant operand `index` of `node`, made on the
  /// constant's first use and reused after (default: same name, type, bytes).
  std::function<Value *(Graph &copy, const Node &node, size_t index)> constant;
  /// The name of a node output in the copy (default: the same).
  std::function<std::string(const Value &output)> outputName;
  /// The type of a node output in the copy (default: the same).
  std::function<TensorType(const TensorType &type)> outputType;
  /// Outputs (name, type) the copy of `node` has after its own (default: none).
  std::function<std::vector<std::pair<std::string, TensorType>>(const Node &node)> extraOutputs;
  /// Makes the copy's graph output for `output`, which is `value` in the copy
  /// (default: marks `value` as an output).
  std::function<void(Graph &copy, const Value &output, Value *value)> output;
};

/// A copy of `graph`: its name, inputs, nodes in execution order (opType,
/// name, attributes; every output's type known) and outputs, each through
/// its hook when one is given.
std::unique_ptr<Graph> copyGraph(const Graph &graph, const GraphCopyHooks &hooks = {});

} // namespace bundlefit
