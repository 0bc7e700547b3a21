#include "bundlefit/reports/GraphDot.h"

#include <map>

namespace bundlefit {

namespace {

// A DOT string: '\n' in `text` becomes a line break of the label; quotes and
// backslashes in names are escaped so they print as themselves.
std::string quoted(const std::string &text) {
  std::string result = "\"";
  for (char c : text)
    result += c == '\n'                 ? std::string("\\n")
              : (c == '"' || c == '\\') ? std::string("\\") + c
                                        : std::string(1, c);
  return result + "\"";
}

std::string valueLabel(const Value &value, const MemoryPlan *plan) {
  std::string label = value.name + "\n" + value.type.str();
  if (plan && plan->hasPlacement(&value)) {
    const Placement &p = plan->placementOf(&value);
    label += "\n" + std::string(regionName(p.region)) + " @" + std::to_string(p.offset) + ", " +
             std::to_string(p.size) + " bytes";
  }
  return label;
}

} // namespace

std::string renderGraphDot(const Graph &graph, const MemoryPlan *plan) {
  std::map<const Node *, int> stepOf;
  if (plan)
    for (size_t step = 0; step < plan->schedule.size(); ++step)
      stepOf[plan->schedule[step]] = int(step);

  std::string dot = "digraph " + quoted(graph.name.empty() ? "graph" : graph.name) + " {\n";
  dot += "  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  std::map<const Value *, std::string> ids;
  auto valueId = [&](const Value *value) {
    auto [it, inserted] = ids.emplace(value, "v" + std::to_string(ids.size()));
    if (inserted) {
      std::string style = value->isConstant()
                              ? "shape=note, style=filled, fillcolor=\"#eeeeee\", fontsize=8"
                          : value->isGraphInput() || value->isGraphOutput
                              ? "shape=ellipse, style=filled, fillcolor=\"#cfe8ff\""
                              : "shape=ellipse";
      dot +=
          "  " + it->second + " [label=" + quoted(valueLabel(*value, plan)) + ", " + style + "];\n";
    }
    return it->second;
  };
  int index = 0;
  for (const Node *node : graph.nodes()) {
    std::string id = "n" + std::to_string(index++);
    std::string label = node->name + "\n" + node->opType;
    if (node->attrs.has("activation"))
      label += " + " + node->attrs.getString("activation", "");
    if (stepOf.count(node))
      label += "\nstep " + std::to_string(stepOf[node]);
    dot += "  " + id + " [label=" + quoted(label) +
           ", shape=box, style=\"rounded,filled\", fillcolor=\"#fff2cc\"];\n";
    for (const Value *input : node->inputs)
      if (input)
        dot += "  " + valueId(input) + " -> " + id + ";\n";
    for (const Value *output : node->outputs)
      dot += "  " + id + " -> " + valueId(output) + ";\n";
  }
  return dot + "}\n";
}

} // namespace bundlefit
