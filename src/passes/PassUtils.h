//===- PassUtils.h - Small graph surgery helpers shared by the passes ------===//
//
// Internal to src/passes. The Graph API offers the primitive edits; these
// helpers name the few compound ones the passes repeat (count readers, make a
// node compute another node's output value, add a float constant).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Bytes.h"
#include "bundlefit/support/CheckedMath.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace bundlefit {
namespace pass_utils {

/// How many node operands read each value (a node reading twice counts 2).
inline std::map<const Value *, size_t> countReads(const Graph &graph) {
  std::map<const Value *, size_t> reads;
  for (const Node *node : graph.nodes())
    for (const Value *input : node->inputs)
      if (input)
        ++reads[input];
  return reads;
}

/// True when `value` is a node output read exactly once, by `reader`, and is
/// not a graph output: the only case in which a pass may swallow it.
inline bool hasSingleReader(const Graph &graph, const Value *value, const Node *reader) {
  if (!value || value->isGraphOutput || value->kind != ValueKind::Intermediate || !value->producer)
    return false;
  size_t reads = 0;
  for (const Node *node : graph.nodes())
    for (const Value *input : node->inputs)
      if (input == value) {
        if (node != reader)
          return false;
        ++reads;
      }
  return reads == 1;
}

/// hasSingleReader with the counts of countReads, for passes that ask once
/// per node: scanning the graph each time makes them quadratic.
inline bool hasSingleReader(const std::map<const Value *, size_t> &reads, const Value *value,
                            const Node *reader) {
  if (!value || value->isGraphOutput || value->kind != ValueKind::Intermediate || !value->producer)
    return false;
  auto it = reads.find(value);
  return it != reads.end() && it->second == 1 &&
         std::count(reader->inputs.begin(), reader->inputs.end(), value) == 1;
}

/// Erases `node` and takes its operand reads out of `reads`.
inline void eraseCounted(Graph &graph, Node *node, std::map<const Value *, size_t> &reads) {
  for (const Value *input : node->inputs)
    if (input)
      --reads[input];
  graph.eraseNode(node);
}

/// Adds `node`'s operand reads to `reads` (a node the pass just inserted).
inline void addReads(const Node &node, std::map<const Value *, size_t> &reads) {
  for (const Value *input : node.inputs)
    if (input)
      ++reads[input];
}

/// Whether a live node reads `value` (Graph::users without the scan).
inline bool isRead(const std::map<const Value *, size_t> &reads, const Value *value) {
  auto it = reads.find(value);
  return it != reads.end() && it->second > 0;
}

/// Which nodes read each value, built once per pass and kept current, for a
/// pass that rewires readers as it goes: Graph-wide replaceReads per node is
/// a scan of every node each time (quadratic on long chains).
class Readers {
public:
  explicit Readers(const Graph &graph) {
    for (Node *node : graph.nodes())
      add(*node);
  }
  const std::map<const Value *, size_t> &counts() const { return reads_; }
  /// Records a node the pass inserted.
  void add(Node &node) {
    for (Value *input : node.inputs)
      if (input) {
        ++reads_[input];
        readers_[input].push_back(&node);
      }
  }
  /// Forgets an erased node's reads.
  void erase(Node &node) {
    erased_.insert(&node);
    for (const Value *input : node.inputs)
      if (input)
        --reads_[input];
  }
  /// replaceReads in O(readers of `from`).
  void replaceReads(Value *from, Value *to) {
    auto it = readers_.find(from);
    if (it == readers_.end())
      return;
    std::vector<Node *> list = std::move(it->second);
    readers_.erase(it);
    std::vector<Node *> &target = readers_[to];
    for (Node *node : list) {
      if (erased_.count(node))
        continue; // Erased after it was listed.
      std::replace(node->inputs.begin(), node->inputs.end(), from, to);
      target.push_back(node);
    }
    reads_[to] += reads_[from];
    reads_[from] = 0;
  }

private:
  std::map<const Value *, size_t> reads_;
  std::map<const Value *, std::vector<Node *>> readers_; // A node twice if it reads twice.
  std::set<const Node *> erased_;
};

/// Makes node operands that read `from` read `to` instead. Unlike
/// Graph::replaceAllUsesWith it leaves the graph output list alone.
inline void replaceReads(Graph &graph, Value *from, Value *to) {
  for (Node *node : graph.nodes())
    std::replace(node->inputs.begin(), node->inputs.end(), from, to);
}

/// Makes `producer` compute `value` (currently computed by another node, which
/// the caller erases next) in place of its current output `index`. The
/// producer's old output value is left unreferenced, for
/// Graph::removeUnusedValues. `value` keeps its name, type and readers.
inline void takeOverOutput(Node *producer, size_t index, Value *value) {
  Value *old = producer->outputs[index];
  if (old && old->producer == producer)
    old->producer = nullptr;
  if (value->producer) {
    for (Value *&out : value->producer->outputs)
      if (out == value)
        out = nullptr;
  }
  producer->outputs[index] = value;
  value->producer = producer;
}

/// Index of `value` among `node`'s outputs (node.outputs.size() if absent).
inline size_t outputIndex(const Node &node, const Value *value) {
  return size_t(std::find(node.outputs.begin(), node.outputs.end(), value) - node.outputs.begin());
}

/// Adds a float32 constant named after `base` (made unique).
inline Value *addFloatConstant(Graph &graph, const std::string &base, const Shape &shape,
                               const std::vector<float> &values) {
  TensorType type;
  type.dtype = DType::Float32;
  type.shape = shape;
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  if (!values.empty())
    copyBytes(bytes.data(), values.data(), bytes.size());
  return graph.addConstant(graph.uniqueValueName(base), type, std::move(bytes));
}

/// A float32 constant (the only dtype the numeric rewrites handle).
inline bool isFloatConstant(const Value *value) {
  return value && value->isConstant() && value->type.dtype == DType::Float32 &&
         value->type.quant.empty();
}

/// The nodes run in order, as the memory estimates of the passes walk them
/// (formPatchStage's and fuseConvPool's): a view's output shares its input's
/// bytes (`owner`, the value that holds them; absent: its own), and
/// `lastUse` is the step of each owner's last read, through its views too.
struct LastUses {
  std::map<const Value *, size_t> lastUse;
  std::map<const Value *, const Value *> owner;

  const Value *ownerOf(const Value *v) const {
    auto it = owner.find(v);
    return it == owner.end() ? v : it->second;
  }
};

inline LastUses lastUses(const std::vector<Node *> &nodes) {
  LastUses uses;
  for (size_t j = 0; j < nodes.size(); ++j) {
    for (const Value *in : nodes[j]->inputs)
      if (in)
        uses.lastUse[uses.ownerOf(in)] = j;
    if (isViewOp(nodes[j]->opType) && nodes[j]->input(0) && nodes[j]->output())
      uses.owner[nodes[j]->output()] = uses.ownerOf(nodes[j]->input(0));
  }
  return uses;
}

/// Bytes as the plan lays activations out, for the memory estimates of the
/// passes: each buffer rounded up to the plan's --buffer-alignment
/// (PlanOptions::bufferAlignment: 16 for a .tflite, 64 for ONNX). Estimated
/// at Glow's 64 under a 16-byte plan, a small tensor weighs up to four times
/// what the plan gives it, and a fusion or stage is judged on bytes that the
/// plan never spends.
struct ArenaSizes {
  uint64_t alignment;

  uint64_t aligned(uint64_t bytes) const { return alignUp(bytes, alignment); }
  /// Bytes a value takes in the activation arena (inputs, outputs and
  /// constants live elsewhere).
  uint64_t arenaBytes(const Value *v) const {
    return v && v->kind == ValueKind::Intermediate && !v->isGraphOutput ? aligned(v->type.bytes())
                                                                        : 0;
  }
};

} // namespace pass_utils
} // namespace bundlefit
