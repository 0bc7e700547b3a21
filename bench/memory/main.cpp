//===- bench/memory - Activation memory at each --memory-opt level ----------===//
//
// For each reference model, float and int8 (profiled on the model's own
// input by `bundlefit profile`): the layer-by-layer bound (level 0 graph: the
// largest inputs + outputs of any one node, 64-aligned, as bench/models), the
// activation arena at every --memory-opt level, the MACs
// each level adds, and whether its outputs match level 0 (float: max |diff| /
// max |output| <= 1e-5; int8: bit-exact) on the host and, with --m7, on
// Cortex-M7 under QEMU when it fits. The headline set is the issue's: LeNet,
// ResNet-8, DS-CNN and MobileNetV1 0.25 float, MobileNetV2 int8. The
// squeeze-and-excitation nets EfficientNet-B0 and MobileNetV3-small (float,
// host only; built by the bench_models target) follow. Prints a table and
// writes bench/results/memory.json.
//
// Each build is one driver::Compilation, as `bundlefit compile` (or `plan`,
// for --plan-only models) makes it; the level is set in its
// CompilationOptions and nowhere else. The bench runs the written bundle
// (BundleRunner.h) and formats what comes back.
//
// Usage: bench_memory MODELS_DIR [OUT.json] [--m7] [--no-run] [--only A,B]
//                     [--plan-only A,B]   (plan these models, do not run them)
//                     [--m7-skip A,B]     (not on Cortex-M7: too slow or too big)
//
//===----------------------------------------------------------------------===//
#include "bundlefit/driver/Compilation.h"

#include "bundlefit/bundle/BundleRunner.h"
#include "bundlefit/interp/Npy.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/reports/TextTable.h"
#include "bundlefit/support/Error.h"

#include "SourceCommit.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
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
    // Activations only: graph inputs and outputs live in the mutable region
    // (an int8 model's float input is read by its Quantize node).
    std::set<const Value *> touched;
    for (const Value *input : node->inputs)
      if (input && !input->isConstant() && !input->isGraphInput() && !input->isGraphOutput)
        touched.insert(input);
    for (const Value *output : node->outputs)
      if (output && !output->isGraphOutput)
        touched.insert(output);
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

/// A profile of `model` over its own input, written to `path` by `bundlefit
/// profile`: the profile a user records before --load-profile.
void profileModel(const std::string &model, const std::string &input, const std::string &path) {
  const std::string command = std::string("'") + BUNDLEFIT_EXE + "' -q profile '" + model + "' '" +
                              input + "' -o '" + path + "'";
  if (std::system(command.c_str()) != 0) {
    std::cerr << "bench_memory: " << command << " failed\n";
    std::exit(1);
  }
}

struct Variant {
  std::string model;
  bool int8 = false;
  bool headline = false;
  bool onM7 = true; ///< Float EfficientNet-B0 (21 MB of weights) fits no M7 part.
};

struct LevelResult {
  uint64_t activations = 0, macs = 0;
  size_t fused = 0, scratch = 0;
  std::map<std::string, std::map<std::string, Tensor>> outputs; ///< by target
  std::map<std::string, std::string> notes;                     ///< by target

  /// The sizes of one build (the same graph on every target: counted once).
  void record(const Graph &graph, const MemoryPlan &plan) {
    activations = plan.activationsSize;
    macs = totalMacs(graph);
    scratch = plan.scratch.size();
    fused = 0;
    for (const Node *node : graph.nodes())
      fused += node->is(Op::ConvPool) || node->is(Op::PatchStage);
  }
};

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool m7 = false, run = true;
  std::string only, planOnly, m7Skip; // ",a,b," lists
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
    else if (args[i] == "--m7-skip" && i + 1 < args.size())
      m7Skip = "," + args[++i] + ",";
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
  const std::vector<Variant> variants = {{"lenet", false, true},
                                         {"lenet", true},
                                         {"resnet8", false, true},
                                         {"resnet8", true},
                                         {"ds_cnn", false, true},
                                         {"ds_cnn", true},
                                         {"mobilenet_v1_025", false, true},
                                         {"mobilenet_v1_025", true},
                                         {"mobilenet_v2", true, true},
                                         // Squeeze-and-excitation nets (issue 17): SiLU and
                                         // HardSwish fused, patch stages between SE blocks.
                                         {"efficientnet_b0", false, false, false},
                                         {"mobilenet_v3_small", false, false, false}};
  std::vector<std::string> targets = {"host"};
  if (m7)
    targets.push_back("cortex-m7");
  std::vector<std::string> header = {"model", "dtype", "layer bound"};
  std::vector<bool> numeric = {false, false, true};
  for (int level = 0; level <= kMaxMemoryOpt; ++level) {
    header.push_back("opt " + std::to_string(level));
    numeric.push_back(true);
  }
  header.insert(header.end(), {"best/bound", "extra MACs", "outputs vs opt 0"});
  numeric.insert(numeric.end(), {true, true, false});
  TextTable table(header, numeric);
  nlohmann::json results = nlohmann::json::array();
  fs::path work = fs::temp_directory_path() / "bundlefit-bench-memory";
  fs::create_directories(work);
  for (const Variant &variant : variants) {
    const std::string &name = variant.model;
    if (!only.empty() && only.find("," + name + ",") == std::string::npos)
      continue;
    const bool runThis = run && planOnly.find("," + name + ",") == std::string::npos;
    const std::string modelPath = dir + "/" + name + ".onnx";
    const std::string dtype = variant.int8 ? "int8" : "float32";
    std::string profile;
    if (variant.int8) {
      profile = (work / (name + ".yaml")).string();
      profileModel(modelPath, dir + "/" + name + ".input.npy", profile);
    }
    std::vector<LevelResult> levels;
    uint64_t bound = 0;
    for (int level = 0; level <= kMaxMemoryOpt; ++level) {
      LevelResult r;
      for (const std::string &target : targets) {
        if (target != "host" &&
            (!variant.onM7 || m7Skip.find("," + name + ",") != std::string::npos))
          continue;
        driver::CompilationOptions options;
        options.model.path = modelPath;
        options.model.memoryOpt = level;
        options.quant.profilePath = profile;
        options.codegen.target = target;
        options.timeLimitSeconds = 2;
        driver::Compilation compilation(options);
        const std::string bundleDir =
            (work / (name + "-" + dtype + "-" + target + "-" + std::to_string(level))).string();
        try {
          if (!runThis) { // Plan only: what compile would plan, without code generation.
            const PlannedModel &planned = compilation.plan();
            r.record(*planned.graph, planned.plan);
            if (level == 0)
              bound = layerBound(*planned.graph);
            break;
          }
          const CompiledBundle &bundle = compilation.writeBundle(bundleDir);
          r.record(*bundle.graph, bundle.plan);
          if (level == 0)
            bound = layerBound(*bundle.graph);
          const Value *input = bundle.graph->inputs().at(0);
          std::map<std::string, Tensor> inputs = {
              {input->name, loadNpy(dir + "/" + name + ".input.npy")}};
          BundleRunSpec spec = makeRunSpec(bundle.plan, bundleDir, bundle.networkName, target);
          spec.timeoutSeconds = 1200;
          r.outputs[target] =
              runBundle(spec, inputs, (work / (name + "-" + dtype + "-run-" + target)).string());
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
        bool ok = variant.int8 ? rel == 0.0 : rel <= 1e-5; // int8: bit-exact
        checks[target] = {{"max_relative_diff", rel}, {"ok", ok}};
        if (level > 0) {
          allMatch = allMatch && ok;
          anyCompared = true;
        }
      }
      levelJson.push_back(
          {{"memory_opt", level},
           {"activations", r.activations},
           {"macs", r.macs},
           {"extra_macs", int64_t(r.macs) - int64_t(levels[0].macs)},
           // The README quotes this as "x% more MACs".
           {"extra_macs_fraction",
            levels[0].macs ? (double(r.macs) - double(levels[0].macs)) / double(levels[0].macs)
                           : 0.0},
           {"fused_nodes", r.fused},
           {"scratch_buffers", r.scratch},
           {"outputs_vs_level0", checks}});
    }
    verdict = !anyCompared ? "not run" : allMatch ? "match" : "DIFFER";
    std::vector<std::string> row = {name, dtype, withThousands(bound)};
    for (const LevelResult &r : levels)
      row.push_back(withThousands(r.activations));
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.3f", bound ? double(best) / double(bound) : 0.0);
    row.push_back(ratio);
    row.push_back(std::to_string(int64_t(levels.back().macs) - int64_t(levels[0].macs)));
    row.push_back(verdict);
    table.addRow(row);
    results.push_back({{"model", name},
                       {"dtype", dtype},
                       {"headline", variant.headline},
                       {"layer_bound", bound},
                       {"best_over_bound", bound ? double(best) / double(bound) : 0.0},
                       {"levels", levelJson}});
    std::cout << table.render() << std::flush;
  }
  auto geomeanOf = [&](bool headlineOnly, const std::string &dtypeOnly) {
    double logSum = 0;
    int count = 0;
    for (const auto &model : results) {
      double ratio = model["best_over_bound"].get<double>();
      if (ratio <= 0 || (headlineOnly && !model["headline"].get<bool>()) ||
          (!dtypeOnly.empty() && model["dtype"] != dtypeOnly))
        continue;
      logSum += std::log(ratio);
      ++count;
    }
    return count ? std::exp(logSum / count) : 0.0;
  };
  const double geomean = geomeanOf(true, ""), geomeanInt8 = geomeanOf(false, "int8");
  std::cout << "\ngeometric mean of best/bound (LeNet, ResNet-8, DS-CNN, MobileNetV1 float; "
               "MobileNetV2 int8): "
            << geomean << "\nall int8 variants: " << geomeanInt8 << "\n";
  std::ofstream(outPath) << nlohmann::json{{"benchmark", "memory_opt"},
                                           {"commit", bundlefit::bench::sourceCommit()},
                                           {"targets", targets},
                                           {"geomean_best_over_bound", geomean},
                                           {"geomean_best_over_bound_int8", geomeanInt8},
                                           {"patch_recompute_budget", 0.2},
                                           {"models", results}}
                                .dump(2)
                         << "\n";
  std::cout << "wrote " << outPath << "\n";
  return 0;
}
