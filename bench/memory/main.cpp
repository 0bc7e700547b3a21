//===- bench/memory - Activation memory at each --memory-opt level ----------===//
//
// For each reference model: the layer-by-layer bound (level 0 graph: the
// largest inputs + outputs of any one node, 64-aligned, as bench/models), the
// activation arena at every --memory-opt level, the MACs each level adds, and
// whether its outputs match level 0 (max |diff| / max |output| <= 1e-5 for
// float) on the host and, with --m7, on Cortex-M7 under QEMU when it fits.
// Prints a table and writes bench/results/memory.json.
//
// Usage: bench_memory MODELS_DIR [OUT.json] [--m7] [--no-run] [--only A,B]
//                     [--plan-only A,B]   (plan these models, do not run them)
//
//===----------------------------------------------------------------------===//
#include "BundleCompilation.h"

#include "bundlefit/bundle/BundleRunner.h"
#include "bundlefit/interp/Npy.h"
#include "bundlefit/ir/OpRegistry.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/support/Error.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

using namespace bundlefit;
namespace fs = std::filesystem;

namespace {

uint64_t aligned(uint64_t bytes) { return (bytes + 63) / 64 * 64; }

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

uint64_t totalMacs(const Graph &graph) {
  uint64_t macs = 0;
  for (const Node *node : graph.nodes())
    macs += countNodeMacs(*node);
  return macs;
}

double relativeDiff(const std::map<std::string, Tensor> &a,
                    const std::map<std::string, Tensor> &b) {
  double diff = 0, magnitude = 0;
  for (const auto &[name, reference] : b) {
    const Tensor &t = a.at(name);
    for (int64_t i = 0; i < reference.numElements(); ++i) {
      diff = std::max(diff, std::fabs(t.at(i) - reference.at(i)));
      magnitude = std::max(magnitude, std::fabs(reference.at(i)));
    }
  }
  return magnitude > 0 ? diff / magnitude : diff;
}

struct LevelResult {
  uint64_t activations = 0, macs = 0;
  size_t fused = 0, scratch = 0;
  std::map<std::string, std::map<std::string, Tensor>> outputs; ///< by target
  std::map<std::string, std::string> notes;                     ///< by target
};

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool m7 = false, run = true;
  std::string only, planOnly; // ",a,b," lists
  std::vector<std::string> positional;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--m7")
      m7 = true;
    else if (args[i] == "--no-run")
      run = false;
    else if (args[i] == "--only" && i + 1 < args.size())
      only = "," + args[++i] + ",";
    else if (args[i] == "--plan-only" && i + 1 < args.size())
      planOnly = "," + args[++i] + ",";
    else
      positional.push_back(args[i]);
  }
  if (positional.empty()) {
    std::cerr << "usage: bench_memory MODELS_DIR [OUT.json] [--m7] [--no-run] [--only A,B] "
                 "[--plan-only A,B]\n";
    return 2;
  }
  const std::string dir = positional[0];
  const std::string outPath = positional.size() > 1 ? positional[1] : "bench/results/memory.json";
  setVerbosity(Verbosity::Quiet);
  const std::vector<std::string> models = {"lenet", "resnet8", "ds_cnn", "mobilenet_v1_025",
                                           "mobilenet_v2"};
  std::vector<std::string> targets = {"host"};
  if (m7)
    targets.push_back("cortex-m7");
  std::vector<std::string> header = {"model", "layer bound"};
  std::vector<bool> numeric = {false, true};
  for (int level = 0; level <= kMaxMemoryOpt; ++level) {
    header.push_back("opt " + std::to_string(level));
    numeric.push_back(true);
  }
  header.insert(header.end(), {"best/bound", "extra MACs", "outputs vs opt 0"});
  numeric.insert(numeric.end(), {true, true, false});
  TextTable table(header, numeric);
  nlohmann::json results = nlohmann::json::array();
  fs::path work = fs::temp_directory_path() / "bundlefit-bench-memory";
  for (const std::string &name : models) {
    if (!only.empty() && only.find("," + name + ",") == std::string::npos)
      continue;
    const bool runThis = run && planOnly.find("," + name + ",") == std::string::npos;
    const std::string modelPath = dir + "/" + name + ".onnx";
    std::vector<LevelResult> levels;
    uint64_t bound = 0;
    for (int level = 0; level <= kMaxMemoryOpt; ++level) {
      LevelResult r;
      for (const std::string &target : targets) {
        CompileRequest request;
        request.model.path = modelPath;
        request.model.memoryOpt = level;
        request.target = target;
        request.outputDir = (work / (name + "-" + target + "-" + std::to_string(level))).string();
        request.exactTimeBudgetSeconds = 2;
        try {
          if (!runThis) { // Plan only.
            std::unique_ptr<Graph> graph = loadModel(request.model);
            PlanOptions options;
            options.memoryOpt = level;
            MemoryPlan plan = planGraphMemory(*graph, options);
            r.activations = plan.activationsSize;
            r.macs = totalMacs(*graph);
            r.scratch = plan.scratch.size();
            for (const Node *node : graph->nodes())
              r.fused += node->opType == "ConvPool";
            if (level == 0)
              bound = layerBound(*graph);
            break;
          }
          CompiledBundle bundle = compileBundle(request);
          r.activations = bundle.plan.activationsSize;
          r.macs = totalMacs(*bundle.graph);
          r.scratch = bundle.plan.scratch.size();
          for (const Node *node : bundle.graph->nodes())
            r.fused += node->opType == "ConvPool";
          if (level == 0)
            bound = layerBound(*bundle.graph);
          const Value *input = bundle.graph->inputs().at(0);
          std::map<std::string, Tensor> inputs = {
              {input->name, loadNpy(dir + "/" + name + ".input.npy")}};
          BundleRunSpec spec =
              makeRunSpec(bundle.plan, request.outputDir, bundle.networkName, target);
          spec.timeoutSeconds = 1200;
          r.outputs[target] =
              runBundle(spec, inputs, (work / (name + "-run-" + target)).string());
        } catch (const Error &e) {
          r.notes[target] = e.what();
          std::cerr << name << " level " << level << " on " << target << ": " << e.what() << "\n";
        }
      }
      levels.push_back(std::move(r));
    }
    // Compare with level 0 wherever both ran.
    nlohmann::json levelJson = nlohmann::json::array();
    std::string verdict;
    bool allMatch = true, anyCompared = false;
    uint64_t best = levels[0].activations;
    for (int level = 0; level <= kMaxMemoryOpt; ++level) {
      const LevelResult &r = levels[level];
      best = std::min(best, r.activations);
      nlohmann::json checks = nlohmann::json::object();
      for (const std::string &target : targets) {
        if (!r.outputs.count(target) || !levels[0].outputs.count(target)) {
          checks[target] = r.notes.count(target) ? r.notes.at(target) : "not run";
          continue;
        }
        double rel = relativeDiff(r.outputs.at(target), levels[0].outputs.at(target));
        bool ok = rel <= 1e-5;
        checks[target] = {{"max_relative_diff", rel}, {"ok", ok}};
        if (level > 0) {
          allMatch = allMatch && ok;
          anyCompared = true;
        }
      }
      levelJson.push_back({{"memory_opt", level},
                           {"activations", r.activations},
                           {"macs", r.macs},
                           {"extra_macs", int64_t(r.macs) - int64_t(levels[0].macs)},
                           {"conv_pool_nodes", r.fused},
                           {"scratch_buffers", r.scratch},
                           {"outputs_vs_level0", checks}});
    }
    verdict = !anyCompared ? "not run" : allMatch ? "match" : "DIFFER";
    std::vector<std::string> row = {name, withThousands(bound)};
    for (const LevelResult &r : levels)
      row.push_back(withThousands(r.activations));
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.3f", bound ? double(best) / double(bound) : 0.0);
    row.push_back(ratio);
    row.push_back(std::to_string(int64_t(levels.back().macs) - int64_t(levels[0].macs)));
    row.push_back(verdict);
    table.addRow(row);
    results.push_back({{"model", name},
                       {"dtype", "float32"},
                       {"layer_bound", bound},
                       {"best_over_bound", bound ? double(best) / double(bound) : 0.0},
                       {"levels", levelJson}});
    std::cout << table.render() << std::flush;
  }
  double logSum = 0;
  int count = 0;
  for (const auto &model : results) {
    double ratio = model["best_over_bound"].get<double>();
    if (ratio > 0) {
      logSum += std::log(ratio);
      ++count;
    }
  }
  double geomean = count ? std::exp(logSum / count) : 0.0;
  std::cout << "\ngeometric mean of best/bound: " << geomean << "\n";
  std::ofstream(outPath) << nlohmann::json{{"benchmark", "memory_opt"},
                                           {"targets", targets},
                                           {"geomean_best_over_bound", geomean},
                                           {"models", results}}
                                .dump(2)
                         << "\n";
  std::cout << "wrote " << outPath << "\n";
  return 0;
}
