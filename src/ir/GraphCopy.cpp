//===- GraphCopy.cpp - A graph copied node by node, with hooks ------------===//
#include "bundlefit/ir/GraphCopy.h"

#include <map>

namespace bundlefit {

std::unique_ptr<Graph> copyGraph(const Graph &graph, const GraphCopyHooks &hooks) {
  auto copy = std::make_unique<Graph>();
  copy->name = graph.name;
  std::map<const Value *, Value *> mapped;
  for (Value *input : graph.inputs())
    mapped[input] =
        hooks.input ? hooks.input(*copy, *input) : copy->addInput(input->name, input->type);
  auto operand = [&](const Node &node, size_t index) -> Value * {
    const Value *value = node.inputs[index];
    if (!value)
      return nullptr;
    if (!value->isConstant())
      return mapped.at(value);
    auto it = mapped.find(value);
    if (it != mapped.end())
      return it->second;
    Value *constant = hooks.constant ? hooks.constant(*copy, node, index)
                                     : copy->addConstant(value->name, value->type, value->data);
    mapped[value] = constant;
    return constant;
  };

  for (const Node *node : graph.nodes()) {
    std::vector<Value *> inputs;
    for (size_t i = 0; i < node->inputs.size(); ++i)
      inputs.push_back(operand(*node, i));
    std::vector<std::string> names;
    for (const Value *output : node->outputs)
      names.push_back(hooks.outputName ? hooks.outputName(*output) : output->name);
    std::vector<std::pair<std::string, TensorType>> extra;
    if (hooks.extraOutputs)
      extra = hooks.extraOutputs(*node);
    for (const auto &[name, type] : extra)
      names.push_back(name);
    Node *clone = copy->addNode(node->opType, node->name, inputs, names);
    clone->attrs = node->attrs;
    for (size_t i = 0; i < node->outputs.size(); ++i) {
      const TensorType &type = node->outputs[i]->type;
      clone->outputs[i]->type = hooks.outputType ? hooks.outputType(type) : type;
      clone->outputs[i]->typeKnown = true;
      mapped[node->outputs[i]] = clone->outputs[i];
    }
    for (size_t i = 0; i < extra.size(); ++i) {
      Value *value = clone->outputs[node->outputs.size() + i];
      value->type = extra[i].second;
      value->typeKnown = true;
    }
  }
  for (const Value *output : graph.outputs()) {
    if (hooks.output)
      hooks.output(*copy, *output, mapped.at(output));
    else
      copy->markOutput(mapped.at(output));
  }
  return copy;
}

} // namespace bundlefit
