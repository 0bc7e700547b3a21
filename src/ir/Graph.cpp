#include "bundlefit/ir/Graph.h"

#include "bundlefit/support/Error.h"

#include <algorithm>
#include <set>

namespace bundlefit {

double Value::elementAsDouble(int64_t index) const {
  switch (type.dtype) {
  case DType::Float32:
    return dataAs<float>()[index];
  case DType::Int8:
    return dataAs<int8_t>()[index];
  case DType::UInt8:
    return dataAs<uint8_t>()[index];
  case DType::Int16:
    return dataAs<int16_t>()[index];
  case DType::Int32:
    return dataAs<int32_t>()[index];
  case DType::Int64:
    return double(dataAs<int64_t>()[index]);
  case DType::Bool:
    return dataAs<uint8_t>()[index] ? 1.0 : 0.0;
  }
  fatalInternal("unknown dtype in constant '" + name + "'");
}

std::vector<int64_t> Value::toInts() const {
  std::vector<int64_t> result;
  int64_t count = type.numElements();
  result.reserve(count);
  for (int64_t i = 0; i < count; ++i)
    result.push_back(type.dtype == DType::Int64 ? dataAs<int64_t>()[i]
                                                : int64_t(elementAsDouble(i)));
  return result;
}

std::vector<float> Value::toFloats() const {
  std::vector<float> result;
  int64_t count = type.numElements();
  result.reserve(count);
  for (int64_t i = 0; i < count; ++i)
    result.push_back(float(elementAsDouble(i)));
  return result;
}

std::string Node::describe() const { return "node '" + name + "' (" + opType + ")"; }

Value *Graph::newValue(const std::string &name) {
  values_.push_back(std::make_unique<Value>());
  Value *value = values_.back().get();
  value->name = uniqueValueName(name);
  valueByName_[value->name] = value;
  return value;
}

Value *Graph::addInput(const std::string &name, const TensorType &type) {
  Value *value = newValue(name);
  value->kind = ValueKind::GraphInput;
  value->type = type;
  value->typeKnown = true;
  inputs_.push_back(value);
  return value;
}

Value *Graph::addConstant(const std::string &name, const TensorType &type,
                          std::vector<uint8_t> bytes) {
  if (bytes.size() != type.bytes())
    fatalInternal("constant '" + name + "' has " + std::to_string(bytes.size()) +
                  " bytes, its type " + type.str() + " needs " + std::to_string(type.bytes()));
  Value *value = newValue(name);
  value->kind = ValueKind::Constant;
  value->type = type;
  value->typeKnown = true;
  value->data = std::move(bytes);
  return value;
}

Node *Graph::addNode(const std::string &opType, const std::string &name,
                     const std::vector<Value *> &inputs,
                     const std::vector<std::string> &outputNames) {
  return insertNodeBefore(nullptr, opType, name, inputs, outputNames);
}

Node *Graph::insertNodeBefore(Node *before, const std::string &opType, const std::string &name,
                              const std::vector<Value *> &inputs,
                              const std::vector<std::string> &outputNames) {
  auto node = std::make_unique<Node>();
  node->opType = opType;
  node->name = uniqueNodeName(name.empty() ? opType : name);
  node->inputs = inputs;
  for (const std::string &outputName : outputNames) {
    Value *value = newValue(outputName.empty() ? node->name + "_out" : outputName);
    value->producer = node.get();
    node->outputs.push_back(value);
  }
  Node *raw = node.get();
  nodeByName_[raw->name] = raw;
  if (before)
    insertBefore_[before].push_back(std::move(node)); // Placed by compact().
  else
    nodes_.push_back(std::move(node)); // After every node, pending ones too.
  return raw;
}

// A const reader may write nodes_ here, so a graph with edits pending must
// not be read by two threads at once; every pass ends with
// removeUnusedValues, which applies them, so a graph passed on is settled.
void Graph::compact() const {
  if (erased_.empty() && insertBefore_.empty())
    return;
  ++compactions_;
  nodesVisited_ += nodes_.size();
  std::vector<std::unique_ptr<Node>> order;
  order.reserve(nodes_.size());
  // A node inserted before a pending node goes before it in turn.
  auto place = [&](std::unique_ptr<Node> &node, auto &self) -> void {
    auto pending = insertBefore_.find(node.get());
    if (pending != insertBefore_.end()) {
      std::vector<std::unique_ptr<Node>> list = std::move(pending->second);
      insertBefore_.erase(pending);
      for (std::unique_ptr<Node> &earlier : list)
        self(earlier, self);
    }
    if (!erased_.count(node.get()))
      order.push_back(std::move(node));
  };
  for (std::unique_ptr<Node> &node : nodes_)
    place(node, place);
  // Inserted before a node that had already left the order: at the end, as
  // a search for it used to do.
  while (!insertBefore_.empty()) {
    std::vector<std::unique_ptr<Node>> list = std::move(insertBefore_.begin()->second);
    insertBefore_.erase(insertBefore_.begin());
    for (std::unique_ptr<Node> &node : list)
      place(node, place);
  }
  nodes_ = std::move(order); // Frees the erased nodes.
  erased_.clear();
}

void Graph::markOutput(Value *value) {
  if (value->isGraphOutput)
    return;
  value->isGraphOutput = true;
  outputs_.push_back(value);
}

std::vector<Node *> Graph::nodes() const {
  compact();
  nodesVisited_ += nodes_.size();
  std::vector<Node *> result;
  result.reserve(nodes_.size());
  for (const auto &node : nodes_)
    result.push_back(node.get());
  return result;
}

std::vector<Value *> Graph::constants() const {
  std::vector<Value *> result;
  for (const auto &value : values_)
    if (value->isConstant())
      result.push_back(value.get());
  return result;
}

Value *Graph::findValue(const std::string &name) const {
  auto it = valueByName_.find(name);
  return it == valueByName_.end() ? nullptr : it->second;
}

Node *Graph::findNode(const std::string &name) const {
  auto it = nodeByName_.find(name);
  return it == nodeByName_.end() ? nullptr : it->second;
}

std::vector<Node *> Graph::users(const Value *value) const {
  compact();
  nodesVisited_ += nodes_.size();
  std::vector<Node *> result;
  for (const auto &node : nodes_)
    if (std::find(node->inputs.begin(), node->inputs.end(), value) != node->inputs.end())
      result.push_back(node.get());
  return result;
}

void Graph::replaceAllUsesWith(Value *from, Value *to) {
  compact();
  nodesVisited_ += nodes_.size();
  for (const auto &node : nodes_)
    std::replace(node->inputs.begin(), node->inputs.end(), from, to);
  for (Value *&output : outputs_) {
    if (output != from)
      continue;
    output = to;
    from->isGraphOutput = false;
    to->isGraphOutput = true;
  }
}

void Graph::makeConstant(Value *value, const TensorType &type, std::vector<uint8_t> bytes) {
  if (bytes.size() != type.bytes())
    fatalInternal("folded constant '" + value->name + "' has the wrong byte count");
  if (value->producer) {
    Node *producer = value->producer;
    auto &outs = producer->outputs;
    // The producer keeps a placeholder so its output arity stays valid.
    for (Value *&out : outs)
      if (out == value)
        out = newValue(value->name + "_folded");
    for (Value *out : outs)
      out->producer = producer;
  }
  value->kind = ValueKind::Constant;
  value->producer = nullptr;
  value->type = type;
  value->typeKnown = true;
  value->data = std::move(bytes);
}

void Graph::eraseNode(Node *node) {
  for (Value *output : node->outputs)
    if (output && output->producer == node)
      output->producer = nullptr;
  nodeByName_.erase(node->name);
  erased_.insert(node);
}

void Graph::removeUnusedValues() {
  compact();
  nodesVisited_ += nodes_.size();
  std::set<const Value *> referenced(inputs_.begin(), inputs_.end());
  referenced.insert(outputs_.begin(), outputs_.end());
  for (const auto &node : nodes_) {
    referenced.insert(node->inputs.begin(), node->inputs.end());
    referenced.insert(node->outputs.begin(), node->outputs.end());
  }
  auto unused = [&](const std::unique_ptr<Value> &value) {
    if (referenced.count(value.get()))
      return false;
    valueByName_.erase(value->name);
    return true;
  };
  values_.erase(std::remove_if(values_.begin(), values_.end(), unused), values_.end());
}

std::string Graph::renameValue(Value *value, const std::string &newName) {
  if (value->name == newName)
    return newName;
  valueByName_.erase(value->name);
  value->name = uniqueValueName(newName);
  valueByName_[value->name] = value;
  return value->name;
}

std::string Graph::renameNode(Node *node, const std::string &newName) {
  if (node->name == newName)
    return newName;
  nodeByName_.erase(node->name);
  node->name = uniqueNodeName(newName);
  nodeByName_[node->name] = node;
  return node->name;
}

void Graph::topologicalSort() {
  compact();
  std::set<const Value *> ready;
  for (const auto &value : values_)
    if (value->kind != ValueKind::Intermediate)
      ready.insert(value.get());
  std::vector<std::unique_ptr<Node>> sorted;
  std::vector<std::unique_ptr<Node>> pending = std::move(nodes_);
  while (!pending.empty()) {
    bool progressed = false;
    for (auto &node : pending) {
      if (!node)
        continue;
      bool inputsReady = std::all_of(node->inputs.begin(), node->inputs.end(),
                                     [&](const Value *v) { return !v || ready.count(v); });
      if (!inputsReady)
        continue;
      ready.insert(node->outputs.begin(), node->outputs.end());
      sorted.push_back(std::move(node));
      progressed = true;
    }
    pending.erase(std::remove(pending.begin(), pending.end(), nullptr), pending.end());
    if (!progressed)
      throw Error(ExitCode::BadInputFile, "graph has a cycle or reads an undefined value at " +
                                              pending.front()->describe());
  }
  nodes_ = std::move(sorted);
}

void Graph::verify() const {
  compact();
  std::set<const Value *> defined;
  for (const auto &value : values_)
    if (value->kind != ValueKind::Intermediate)
      defined.insert(value.get());
  for (const auto &node : nodes_) {
    for (const Value *input : node->inputs)
      if (input && !defined.count(input))
        fatalInternal(node->describe() + " reads '" + input->name + "' before it is defined");
    for (const Value *output : node->outputs) {
      if (output->producer != node.get())
        fatalInternal(node->describe() + " output '" + output->name + "' has a different producer");
      defined.insert(output);
    }
  }
  for (const Value *output : outputs_)
    if (!defined.count(output))
      fatalInternal("graph output '" + output->name + "' is never computed");
}

std::string Graph::uniqueValueName(const std::string &base) const {
  if (!valueByName_.count(base))
    return base;
  for (int suffix = 1;; ++suffix) {
    std::string candidate = base + "__" + std::to_string(suffix);
    if (!valueByName_.count(candidate))
      return candidate;
  }
}

std::string Graph::uniqueNodeName(const std::string &base) const {
  if (!nodeByName_.count(base))
    return base;
  for (int suffix = 1;; ++suffix) {
    std::string candidate = base + "__" + std::to_string(suffix);
    if (!nodeByName_.count(candidate))
      return candidate;
  }
}

} // namespace bundlefit
