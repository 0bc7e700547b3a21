//===- bench/models - Activation memory of the reference models ------------===//
//
// For each reference model (tests/models/make_models.py): activation arena,
// its lower bound, the peak of the model's own order against the order the
// memory-aware scheduler chose, the layer-by-layer bound (the largest
// inputs + outputs of any one node) and planning time. Prints a table and
// writes bench/results/model_memory.json.
//
// Usage: bench_model_memory MODELS_DIR [OUT.json]
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ir/Graph.h"
#include "bundlefit/onnx/OnnxImporter.h"
#include "bundlefit/passes/Passes.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/schedule/MemoryPlan.h"
#include "bundlefit/schedule/Schedule.h"

#include "SourceCommit.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <iostream>
#include <set>

using namespace bundlefit;

namespace {

uint64_t aligned(uint64_t bytes) { return (bytes + 63) / 64 * 64; }

/// max over nodes of (distinct non-constant inputs + outputs), 64-aligned:
/// no layer-by-layer executor can use less activation memory than this.
uint64_t layerBound(const Graph &graph) {
  uint64_t bound = 0;
  for (const Node *node : graph.nodes()) {
    if (isViewNode(*node))
      continue;
    std::set<const Value *> touched;
    for (const Value *input : node->inputs)
      if (input && !input->isConstant())
        touched.insert(input);
    touched.insert(node->outputs.begin(), node->outputs.end());
    uint64_t bytes = 0;
    for (const Value *value : touched)
      bytes += aligned(value->type.bytes());
    bound = std::max(bound, bytes);
  }
  return bound;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::cerr << "usage: bench_model_memory MODELS_DIR [OUT.json]\n";
    return 2;
  }
  std::string dir = argv[1];
  std::string outPath = argc > 2 ? argv[2] : "bench/results/model_memory.json";
  const std::vector<std::string> models = {
      "lenet", "resnet8", "ds_cnn", "mobilenet_v1_025", "autoencoder", "mobilenet_v2", "branchy"};
  TextTable table({"model", "nodes", "constant", "activations", "lower bound", "peak model order",
                   "peak chosen order", "layer bound", "allocator", "plan ms"},
                  {false, true, true, true, true, true, true, true, false, true});
  nlohmann::json results = nlohmann::json::array();
  for (const std::string &name : models) {
    std::unique_ptr<Graph> graph = importOnnxModel(dir + "/" + name + ".onnx");
    runDefaultPasses(*graph);
    std::vector<const Node *> modelOrder = chooseSchedule(*graph, false);
    std::vector<const Node *> chosenOrder = chooseSchedule(*graph, true);
    uint64_t modelPeak = peakLiveBytes(*graph, modelOrder);
    uint64_t chosenPeak = peakLiveBytes(*graph, chosenOrder);
    auto start = std::chrono::steady_clock::now();
    MemoryPlan plan = planGraphMemory(*graph);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    uint64_t bound = layerBound(*graph);
    char msText[32];
    std::snprintf(msText, sizeof msText, "%.1f", ms);
    table.addRow({name, std::to_string(graph->numNodes()), withThousands(plan.constantSize),
                  withThousands(plan.activationsSize), withThousands(plan.activationsLowerBound),
                  withThousands(modelPeak), withThousands(chosenPeak), withThousands(bound),
                  plan.allocator, msText});
    results.push_back({{"model", name},
                       {"nodes", graph->numNodes()},
                       {"constant", plan.constantSize},
                       {"mutable", plan.mutableSize},
                       {"activations", plan.activationsSize},
                       {"activations_lower_bound", plan.activationsLowerBound},
                       {"peak_model_order", modelPeak},
                       {"peak_chosen_order", chosenPeak},
                       {"layer_bound", bound},
                       {"allocator", plan.allocator},
                       {"plan_ms", ms}});
  }
  std::cout << table.render();
  std::ofstream(outPath) << nlohmann::json{{"benchmark", "model_memory"},
                                           {"commit", bundlefit::bench::sourceCommit()},
                                           {"models", results}}
                                .dump(2)
                         << "\n";
  std::cout << "wrote " << outPath << "\n";
  return 0;
}
