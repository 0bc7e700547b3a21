//===- InspectCommand.cpp - bundlefit inspect MODEL [--json [FILE]] --------===//
#include "Command.h"
#include "ReportSupport.h"

#include "bundlefit/driver/Compilation.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/reports/TextTable.h"

#include <nlohmann/json.hpp>

#include <iostream>
#include <set>

namespace bundlefit {

namespace {

struct InspectOptions {
  ModelOptions model;
  JsonReportOption json;
  HtmlReportOption html;
};

uint64_t weightBytes(const Node &node) {
  uint64_t bytes = 0;
  std::set<const Value *> seen;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Value *input = node.inputs[i];
    if (input && input->isConstant() && !isParameterOperand(node, i) && seen.insert(input).second)
      bytes += input->type.bytes();
  }
  return bytes;
}

int runInspect(const InspectOptions &options) {
  options.json.checkFileWritable();
  options.html.checkFileWritable();
  std::unique_ptr<Graph> graph = driver::Compilation(options.model).loadTransformedGraph();
  uint64_t totalMacs = 0, totalWeights = 0;
  nlohmann::json nodes = nlohmann::json::array();
  TextTable table({"node", "op", "inputs", "output", "MACs", "weight bytes"},
                  {false, false, false, false, true, true});
  table.setDropOrder({2}); // the output's shape says most; inputs on --wide
  for (const Node *node : graph->nodes()) {
    uint64_t macs = countNodeMacs(*node), weights = weightBytes(*node);
    totalMacs += macs;
    totalWeights += weights;
    std::string inputs;
    nlohmann::json inputTypes = nlohmann::json::array();
    for (const Value *input : node->inputs) {
      if (!input || input->isConstant())
        continue;
      inputs += (inputs.empty() ? "" : " ") + input->type.str();
      inputTypes.push_back({{"name", input->name},
                            {"dtype", dtypeName(input->type.dtype)},
                            {"shape", input->type.shape}});
    }
    nlohmann::json outputs = nlohmann::json::array();
    for (const Value *output : node->outputs)
      outputs.push_back({{"name", output->name},
                         {"dtype", dtypeName(output->type.dtype)},
                         {"shape", output->type.shape}});
    nodes.push_back({{"name", node->name},
                     {"op", node->opType},
                     {"inputs", inputTypes},
                     {"activation", node->attrs.getString("activation", "")},
                     {"outputs", outputs},
                     {"macs", macs},
                     {"weight_bytes", weights}});
    std::string op = node->opType;
    if (node->attrs.has("activation"))
      op += "+" + node->attrs.getString("activation", "");
    table.addRow({node->name, op, inputs, node->output()->type.str(), withThousands(macs),
                  withThousands(weights)});
  }
  table.addSeparator();
  table.addRow({"total", std::to_string(graph->numNodes()) + " nodes", "", "",
                withThousands(totalMacs), withThousands(totalWeights)});
  options.html.writeTable(options.model.path + ": nodes", {}, "Nodes after graph passes", table);
  if (options.json.wanted()) {
    options.json.emit(
        {{"schema", "bundlefit.inspect/1"},
         {"model", options.model.path},
         {"nodes", nodes},
         {"totals",
          {{"nodes", graph->numNodes()}, {"macs", totalMacs}, {"weight_bytes", totalWeights}}}},
        options.model.path);
    if (options.json.replacesText())
      return 0;
  }
  std::cout << table.render();
  return 0;
}

} // namespace

void addInspectCommand(CLI::App &app, CommandAction &action) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App *command = app.add_subcommand(
      "inspect", "List nodes with shapes, MACs and weight bytes after graph passes");
  addModelOptions(*command, options->model);
  // inspect lists the float graph in the model's order: an int8 boundary or a
  // memory-aware order would change nothing it prints, so the flags are refused
  // ("not expected") rather than silently ignored.
  for (const char *unused : {"--int8-io", "--keep-model-order"})
    command->remove_option(command->get_option(unused));
  options->json.addTo(*command, "bundlefit.inspect/1");
  options->html.addTo(*command, "the node table");
  command->callback([options, &action] { action = [options] { return runInspect(*options); }; });
}

} // namespace bundlefit
