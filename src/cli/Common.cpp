#include "Command.h"
#include "Progress.h"
#include "ReportSupport.h"

#include "bundlefit/ir/Graph.h"
#include "bundlefit/onnx/OnnxImporter.h"
#include "bundlefit/passes/Passes.h"
#include "bundlefit/support/Error.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <unistd.h>

namespace bundlefit {

namespace {
Verbosity currentVerbosity = Verbosity::Normal;
}

Verbosity verbosity() { return currentVerbosity; }
void setVerbosity(Verbosity level) { currentVerbosity = level; }

void status(const std::string &line) {
  if (currentVerbosity == Verbosity::Quiet)
    return;
  std::cout.flush(); // Results first, in a log that captures both streams.
  std::cerr << line << "\n";
}

void addModelOptions(CLI::App &command, ModelOptions &options) {
  command.add_option("model", options.path, "ONNX model file")->required();
  command.add_option("--define-symbol", options.defineSymbols,
                     "Value of a symbolic dimension: name=value (repeatable)");
  command.add_option("--model-input", options.modelInputs,
                     "Override an input's type and shape: name,type,[d0,d1,...] (repeatable)");
  command.add_option("--memory-opt", options.memoryOpt,
                     "Go below the layer-by-layer memory bound: 0 off (Glow's layout), 1 fuse "
                     "Conv+pool, run depthwise and 1x1 convs in place and overlap pools with "
                     "their input, 2 also run the high-resolution prefix in spatial tiles "
                     "(default " + std::to_string(kDefaultMemoryOpt) + ")")
      ->check(CLI::Range(0, kMaxMemoryOpt));
  command.add_option("--patch-recompute-budget", options.patchRecomputeBudget,
                     "--memory-opt 2: extra MACs the tiles' recomputed halos may cost, as a "
                     "fraction of the model's MACs (default 0.2)")
      ->check(CLI::NonNegativeNumber);
}

std::unique_ptr<Graph> loadModel(const ModelOptions &options) {
  ImportOptions importOptions;
  for (const std::string &text : options.defineSymbols)
    importOptions.symbols.insert(parseDefineSymbolOption(text));
  for (const std::string &text : options.modelInputs) {
    ModelInputOverride input = parseModelInputOption(text);
    // Glow's int8q/uint8q describe an input of an already quantized graph.
    // bundlefit quantizes float models itself and keeps their inputs float;
    // an int8 input in front of float layers would not compile.
    if (!input.quant.empty())
      throw Error(ExitCode::Unsupported,
                  "--model-input '" + text + "': quantized inputs (int8q/uint8q) are not "
                  "supported: bundlefit quantizes the float model itself (--load-profile) and "
                  "keeps its inputs float, as Glow's profile-guided flow does; give '" +
                      input.name + "' as float");
    importOptions.inputOverrides.push_back(std::move(input));
  }
  std::unique_ptr<Graph> graph;
  {
    Stage stage("import " + options.path);
    graph = importOnnxModel(options.path, importOptions);
  }
  PassOptions passOptions;
  passOptions.fuseActivations = options.fuseActivations;
  try {
    Stage stage("graph passes");
    runDefaultPasses(*graph, passOptions);
  } catch (const Error &e) {
    throw Error(e.code(), options.path + ": " + e.what());
  }
  return graph;
}

std::string describeMemoryOpt(int level) {
  static const char *const meaning[] = {
      "Glow's activation layout",
      "Conv+pool fused, depthwise and 1x1 convs in place",
      "level 1 plus a patch-based first stage"};
  return "memory-opt " + std::to_string(level) + " (" +
         (level >= 0 && level <= kMaxMemoryOpt ? meaning[level] : "?") +
         "; defaults: bundlefit 2, model-compiler 0)";
}

void applyMemoryOptPasses(Graph &graph, const ModelOptions &options) {
  // The two tools default to different levels, so the same model gets
  // different ACTIVATIONS from each: say which level this run used.
  if (!jsonReplacesText())
    status(describeMemoryOpt(options.memoryOpt));
  try {
    Stage stage("memory-opt passes");
    runMemoryOptPasses(graph, options.memoryOpt, options.patchRecomputeBudget);
  } catch (const Error &e) {
    throw Error(e.code(), options.path + ": " + e.what());
  }
}

void writeFileAtomically(const std::string &path, const std::string &text) {
  std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary);
    if (!out || !out.write(text.data(), std::streamsize(text.size())) || !out.flush()) {
      std::remove(temporary.c_str());
      throw Error(ExitCode::CannotWrite, path + ": cannot write file");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw Error(ExitCode::CannotWrite, path + ": cannot write file");
  }
}

} // namespace bundlefit
