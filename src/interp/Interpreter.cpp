#include "bundlefit/interp/Interpreter.h"
#include "bundlefit/ops/OpRegistry.h"

#include "bundlefit/support/Error.h"
#include "bundlefit/support/MemoryBudget.h"

namespace bundlefit {

std::map<std::string, Tensor> Interpreter::run(const std::map<std::string, Tensor> &inputs) const {
  std::map<const Value *, Tensor> live;
  // Every value stays live until the end (the observer, the outputs): the
  // run needs their sum, checked against the budget before each node.
  uint64_t liveBytes = 0;
  for (const Value *input : graph_.inputs()) {
    auto it = inputs.find(input->name);
    if (it == inputs.end())
      throw Error(ExitCode::BadInputFile,
                  "no data given for graph input '" + input->name + "' " + input->type.str());
    if (!it->second.type.sameShapeAndType(input->type))
      throw Error(ExitCode::BadInputFile, "graph input '" + input->name + "' expects " +
                                              input->type.str() + ", got " + it->second.type.str());
    live[input] = it->second;
    liveBytes += it->second.bytes.size();
    if (observer_)
      observer_(*input, it->second);
  }
  // Constants are materialised lazily, the first time a node reads them.
  auto tensorOf = [&](const Value *value) -> const Tensor * {
    if (!value)
      return nullptr;
    auto it = live.find(value);
    if (it != live.end())
      return &it->second;
    if (!value->isConstant())
      fatalInternal("interpreter: '" + value->name + "' read before it is computed");
    liveBytes += value->data.size();
    return &(live[value] = Tensor(value->type, value->data));
  };
  for (const Node *node : graph_.nodes()) {
    std::vector<const Tensor *> args;
    for (const Value *input : node->inputs)
      args.push_back(tensorOf(input));
    liveBytes += outputBytes(*node);
    checkMemoryBudget(liveBytes, node->describe() + ": running the model up to it");
    std::vector<Tensor> results = evaluateNode(*node, args);
    for (size_t i = 0; i < results.size(); ++i) {
      if (observer_)
        observer_(*node->outputs[i], results[i]);
      live[node->outputs[i]] = std::move(results[i]);
    }
  }
  std::map<std::string, Tensor> outputs;
  for (const Value *output : graph_.outputs())
    outputs[output->name] = *tensorOf(output);
  return outputs;
}

} // namespace bundlefit
