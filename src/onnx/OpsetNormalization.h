//===- OpsetNormalization.h - One spelling per operator (importer-private) -===//
//
// Rewrites a default-domain ONNX node of any supported opset (1..21) into the
// opset-13 operand form the IR uses. The full list of rewrites is at the top
// of OnnxImporter.cpp; this layer knows nothing of protobuf.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace bundlefit {
namespace onnximport {

/// A node on its way into the graph: ONNX operands already resolved to
/// values (nullptr for omitted ones), outputs still ONNX names ("" when
/// omitted).
struct NodeDraft {
  std::string opType;
  std::string name;
  std::vector<Value *> inputs;
  Attributes attrs;
  std::vector<std::string> outputs;

  Value *input(size_t index) const { return index < inputs.size() ? inputs[index] : nullptr; }
  /// "node 'conv1' (Conv)", as Node::describe() will say it.
  std::string describe() const { return "node '" + name + "' (" + opType + ")"; }
};

struct NormalizeContext {
  Graph &graph;
  int64_t opset;    ///< The model's default-domain opset.
  std::string path; ///< Model file, the prefix of every error.
  /// Whether an ONNX value name is read by a node or is a graph output.
  std::function<bool(const std::string &)> isUsed;
  /// A value name no ONNX value uses and the graph does not hold yet.
  std::function<std::string(const std::string &)> freshValueName;
};

/// Rewrites `node` in place (op type, operands, attributes, outputs); may add
/// constants to the graph. Throws Error(Unsupported) for legacy semantics
/// bundlefit cannot express.
void normalizeNode(NodeDraft &node, const NormalizeContext &context);

/// Drops trailing omitted (nullptr) operands: Clip(x, "", "") == Clip(x).
void trimOmittedInputs(std::vector<Value *> &inputs);

} // namespace onnximport
} // namespace bundlefit
