//===- bench/models - Activation memory of the reference models ------------===//
//
// For each reference model (tests/models/make_models.py), as `bundlefit plan`
// plans it with the users' defaults (--memory-opt 2: one driver::Compilation
// with default options): constant and mutable sizes, the activation arena and
// its lower bound, the arena when the nodes keep the model's order
// (`plan --keep-model-order`: what the memory-aware order saves), the
// layer-by-layer bound of the loaded model (the largest inputs + outputs of
// any one node: what level 2 goes below) and the wall time of the plan (load,
// passes and planner, as `plan` counts its time limit). Prints a table and
// writes bench/results/model_memory.json.
//
// Usage: bench_model_memory MODELS_DIR [OUT.json]
//
//===----------------------------------------------------------------------===//
#include "bundlefit/driver/Compilation.h"
#include "bundlefit/ir/Graph.h"
#include "bundlefit/reports/TextTable.h"

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
  setVerbosity(Verbosity::Quiet);
  const std::vector<std::string> models = {
      "lenet", "resnet8", "ds_cnn", "mobilenet_v1_025", "autoencoder", "mobilenet_v2", "branchy"};
  TextTable table({"model", "nodes", "constant", "activations", "lower bound", "model order",
                   "layer bound", "allocator", "plan ms"},
                  {false, true, true, true, true, true, true, false, true});
  nlohmann::json results = nlohmann::json::array();
  const driver::CompilationOptions defaults; // The users' defaults: --memory-opt 2.
  for (const std::string &name : models) {
    driver::CompilationOptions options = defaults;
    options.model.path = dir + "/" + name + ".onnx";
    driver::Compilation compilation(options);
    auto start = std::chrono::steady_clock::now();
    const PlannedModel &planned = compilation.plan();
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const MemoryPlan &plan = planned.plan;
    options.model.keepModelOrder = true;
    driver::Compilation modelOrder(options);
    const uint64_t modelOrderArena = modelOrder.plan().plan.activationsSize;
    // The model as loaded (import + default passes), before the level's passes.
    const std::unique_ptr<Graph> loaded = compilation.loadGraph();
    uint64_t bound = layerBound(*loaded);
    char msText[32];
    std::snprintf(msText, sizeof msText, "%.1f", ms);
    table.addRow({name, std::to_string(loaded->numNodes()), withThousands(plan.constantSize),
                  withThousands(plan.activationsSize), withThousands(plan.activationsLowerBound),
                  withThousands(modelOrderArena), withThousands(bound), plan.allocator, msText});
    results.push_back({{"model", name},
                       {"nodes", loaded->numNodes()},
                       {"constant", plan.constantSize},
                       {"mutable", plan.mutableSize},
                       {"activations", plan.activationsSize},
                       {"activations_lower_bound", plan.activationsLowerBound},
                       {"activations_model_order", modelOrderArena},
                       {"layer_bound", bound},
                       {"allocator", plan.allocator},
                       {"plan_ms", ms}});
  }
  std::cout << table.render();
  std::ofstream(outPath) << nlohmann::json{{"benchmark", "model_memory"},
                                           {"commit", bundlefit::bench::sourceCommit()},
                                           {"memory_opt", defaults.model.memoryOpt},
                                           {"models", results}}
                                .dump(2)
                         << "\n";
  std::cout << "wrote " << outPath << "\n";
  return 0;
}
