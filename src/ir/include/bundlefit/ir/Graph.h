//===- Graph.h - The bundlefit graph IR ------------------------------------===//
//
// A graph is a list of nodes in execution order over values. A value is a
// graph input, a constant (with its bytes) or a node output. Nodes keep ONNX
// operator names and the ONNX opset-13 operand conventions (Clip min/max,
// Squeeze axes, Pad pads, Slice starts/ends, Resize scales are *inputs*); the
// importer rewrites older opsets into that form, so every later stage sees one
// spelling per operator. Extra attributes bundlefit adds are documented in
// OpRegistry.h.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Attribute.h"
#include "bundlefit/ir/Op.h"
#include "bundlefit/ir/TensorType.h"

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace bundlefit {

class Node;

enum class ValueKind : uint8_t { GraphInput, Constant, Intermediate };

class Value {
public:
  std::string name;
  TensorType type;
  ValueKind kind = ValueKind::Intermediate;
  /// Constants only: the raw little-endian element bytes (type.bytes() long).
  std::vector<uint8_t> data;
  /// Intermediates only: the node that computes this value.
  Node *producer = nullptr;
  /// Whether the value is one of the graph's outputs (a placeholder).
  bool isGraphOutput = false;
  /// Whether the type has been inferred (or given, for inputs/constants).
  bool typeKnown = false;

  bool isConstant() const { return kind == ValueKind::Constant; }
  bool isGraphInput() const { return kind == ValueKind::GraphInput; }

  /// Reads constant element `index`, converting any numeric dtype.
  double elementAsDouble(int64_t index) const;
  /// All constant elements converted to int64 / float (for shape operands).
  std::vector<int64_t> toInts() const;
  std::vector<float> toFloats() const;

  template <typename T> const T *dataAs() const { return reinterpret_cast<const T *>(data.data()); }
  template <typename T> T *mutableDataAs() { return reinterpret_cast<T *>(data.data()); }
};

class Node {
public:
  std::string name; ///< Unique node name (ONNX name, or generated).
  /// ONNX operator name, e.g. "Conv". Passes match with is(Op::Conv) and
  /// rename with setOp(Op::Relu), never with a string (Op.h says why).
  std::string opType;
  /// Operands in ONNX order; nullptr marks an omitted optional input.
  std::vector<Value *> inputs;
  std::vector<Value *> outputs;
  Attributes attrs;

  Value *input(size_t index) const { return index < inputs.size() ? inputs[index] : nullptr; }
  Value *output(size_t index = 0) const {
    return index < outputs.size() ? outputs[index] : nullptr;
  }
  /// Whether the node is `op` (the same comparison as of the name).
  bool is(Op op) const { return opType == opName(op); }
  /// Whether the node is any of `ops`.
  template <typename... Ops> bool isAnyOf(Ops... ops) const { return (is(ops) || ...); }
  /// The operator's identity, for a switch; Op::Unknown for an unsupported name.
  Op op() const { return opFromName(opType); }
  /// Makes the node another operator (a rewrite that keeps its operands).
  void setOp(Op op) { opType = opName(op); }
  /// "node 'conv1' (Conv)": the prefix every diagnostic about a node uses.
  std::string describe() const;
};

class Graph {
public:
  std::string name; ///< Network name (legalized later for the bundle).

  Value *addInput(const std::string &name, const TensorType &type);
  Value *addConstant(const std::string &name, const TensorType &type, std::vector<uint8_t> bytes);
  /// Adds a node at the end of the execution order. Outputs are created as
  /// intermediates with unknown types, named `outputNames` (made unique).
  Node *addNode(const std::string &opType, const std::string &name,
                const std::vector<Value *> &inputs, const std::vector<std::string> &outputNames);
  Node *addNode(Op op, const std::string &name, const std::vector<Value *> &inputs,
                const std::vector<std::string> &outputNames) {
    return addNode(opName(op), name, inputs, outputNames);
  }
  /// Same, but inserts the node just before `before` in execution order.
  Node *insertNodeBefore(Node *before, const std::string &opType, const std::string &name,
                         const std::vector<Value *> &inputs,
                         const std::vector<std::string> &outputNames);
  Node *insertNodeBefore(Node *before, Op op, const std::string &name,
                         const std::vector<Value *> &inputs,
                         const std::vector<std::string> &outputNames) {
    return insertNodeBefore(before, opName(op), name, inputs, outputNames);
  }
  void markOutput(Value *value);

  const std::vector<Value *> &inputs() const { return inputs_; }
  const std::vector<Value *> &outputs() const { return outputs_; }
  /// Nodes in execution order.
  std::vector<Node *> nodes() const;
  size_t numNodes() const {
    compact();
    return nodes_.size();
  }
  std::vector<Value *> constants() const;

  Value *findValue(const std::string &name) const;
  Node *findNode(const std::string &name) const;
  /// Nodes that read `value`, in execution order.
  std::vector<Node *> users(const Value *value) const;

  /// Makes every reader of `from` (and the graph output list) use `to`.
  void replaceAllUsesWith(Value *from, Value *to);
  /// Turns `value` (a node output) into a constant holding `bytes`; the
  /// producing node keeps running until it is dead-code eliminated.
  void makeConstant(Value *value, const TensorType &type, std::vector<uint8_t> bytes);
  /// Removes a node; its outputs must be unused (or no longer referenced).
  /// O(1): the node leaves the execution order (and is freed) at the next
  /// read of that order, together with every other node erased or inserted
  /// before then, so a pass that erases k nodes costs O(n + k), not O(n k).
  void eraseNode(Node *node);
  /// Removes values that nothing references any more.
  void removeUnusedValues();
  /// Renames a value, keeping names unique (returns the name given).
  std::string renameValue(Value *value, const std::string &newName);
  /// Renames a node, keeping names unique (returns the name given): a
  /// rewrite that replaces a node can give its successor the user's name.
  std::string renameNode(Node *node, const std::string &newName);

  /// Sorts nodes topologically, keeping the current order where valid.
  void topologicalSort();
  /// Throws Internal if an invariant is broken (use before def, dangling refs).
  void verify() const;

  std::string uniqueValueName(const std::string &base) const;
  std::string uniqueNodeName(const std::string &base) const;

  /// Times the execution order was rebuilt to apply erasures and
  /// insertions, and nodes visited by whole-order walks (nodes(), users(),
  /// replaceAllUsesWith, the rebuilds...): what the complexity tests count.
  size_t compactions() const { return compactions_; }
  size_t nodesVisited() const { return nodesVisited_; }

private:
  Value *newValue(const std::string &name);
  /// Applies pending erasures and insertions to nodes_ in one O(n) sweep.
  /// Every reader of nodes_ calls it first; const because they are const.
  void compact() const;

  std::vector<std::unique_ptr<Value>> values_;
  // The execution order, and the edits not applied to it yet (compact()).
  // mutable: a const reader applies them first.
  mutable std::vector<std::unique_ptr<Node>> nodes_;
  mutable std::unordered_set<const Node *> erased_;
  /// Nodes to insert just before a node of nodes_ (or of another list), in order.
  mutable std::unordered_map<const Node *, std::vector<std::unique_ptr<Node>>> insertBefore_;
  mutable size_t compactions_ = 0;
  mutable size_t nodesVisited_ = 0;
  std::vector<Value *> inputs_;
  std::vector<Value *> outputs_;
  std::map<std::string, Value *> valueByName_;
  std::map<std::string, Node *> nodeByName_;
};

} // namespace bundlefit
