//===- Pipeline.cpp - Load, quantize and transform a model -----------------===//
#include "bundlefit/driver/Pipeline.h"
#include "bundlefit/driver/Progress.h"

#include "bundlefit/ir/Graph.h"
#include "bundlefit/onnx/OnnxImporter.h"
#include "bundlefit/passes/Passes.h"
#include "bundlefit/quant/Profile.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/OutputFile.h"

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

std::unique_ptr<Graph> loadModel(const ModelOptions &options) {
  ImportOptions importOptions;
  for (const std::string &text : options.defineSymbols)
    importOptions.symbols.insert(parseDefineSymbolOption(text));
  for (const std::string &text : options.modelInputs)
    importOptions.inputOverrides.push_back(parseModelInputOption(text));
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

void applyMemoryOptPasses(Graph &graph, const ModelOptions &options) {
  try {
    Stage stage("memory-opt passes");
    runMemoryOptPasses(graph, options.memoryOpt, options.patchRecomputeBudget);
  } catch (const Error &e) {
    throw Error(e.code(), options.path + ": " + e.what());
  }
}

void writeFileAtomically(const std::string &path, const std::string &text) {
  writeOutputFile(path, text);
}

namespace {

std::string joined(const std::vector<std::string> &names) {
  std::string text;
  for (const std::string &name : names)
    text += (text.empty() ? "" : ", ") + name;
  return text;
}

} // namespace

QuantizationOptions resolveQuantOptions(const QuantCliOptions &options) {
  QuantizationOptions resolved;
  if (!parseQuantSchema(options.schema, resolved.schema))
    throw Error(ExitCode::Usage, "--quantization-schema " + options.schema +
                                     ": expected one of " + joined(quantSchemaNames()));
  if (options.biasPrecision == "Int32" || options.biasPrecision == "int32")
    resolved.biasPrecision = BiasPrecision::Int32;
  else if (options.biasPrecision == "Int8" || options.biasPrecision == "int8")
    resolved.biasPrecision = BiasPrecision::Int8;
  else
    throw Error(ExitCode::Usage, "--quantization-precision-bias " + options.biasPrecision +
                                     ": expected Int32 or Int8");
  for (const std::string &name : options.keepOriginal) {
    if (name.empty())
      continue;
    std::string op = opTypeForKindName(name);
    if (op.empty())
      throw Error(ExitCode::Usage,
                  "--keep-original-precision-for-nodes " + name +
                      ": unknown node kind (e.g. Conv/Convolution, Gemm/FullyConnected, Add, Mul, "
                      "Concat, MaxPool, AveragePool/AvgPool, Relu, Clip, Softmax)");
    resolved.keepFloatOps.insert(op);
  }
  resolved.channelwise = options.channelwise;
  return resolved;
}

bool quantizeLoadedModel(Graph &graph, const std::string &modelPath,
                         const QuantCliOptions &options) {
  if (!options.enabled())
    return false;
  QuantizationOptions resolved = resolveQuantOptions(options);
  ProfileData profile = loadProfile(options.profilePath);
  checkProfileMatchesModel(profile, options.profilePath, modelPath);
  QuantizationSummary summary = quantizeGraph(graph, profile, resolved, options.profilePath);
  status(describeQuantization(summary) + ", schema " + quantSchemaName(resolved.schema) +
         ", bias " + (resolved.biasPrecision == BiasPrecision::Int32 ? "Int32" : "Int8") +
         (resolved.channelwise ? ", channelwise" : ""));
  if (verbosity() == Verbosity::Verbose)
    for (const std::string &line : summary.keptFloat)
      status("  float: " + line);
  return true;
}

namespace {

/// A range for every float tensor of `graph`: enough to size the int8 build.
ProfileData syntheticProfile(const Graph &graph) {
  ProfileData profile;
  auto add = [&](const Value *value) {
    if (value && value->type.dtype == DType::Float32 && !value->isConstant())
      profile.tensors.push_back(
          {value->name, -1.0f, 1.0f, std::vector<double>(kProfileHistogramBins, 0.0)});
  };
  for (const Value *input : graph.inputs())
    add(input);
  for (const Node *node : graph.nodes())
    for (const Value *output : node->outputs)
      add(output);
  return profile;
}

} // namespace

std::unique_ptr<Graph> quantizedGraphForSizing(const ModelOptions &model,
                                               const QuantCliOptions &options) {
  std::unique_ptr<Graph> graph = loadModel(model);
  if (options.enabled())
    quantizeLoadedModel(*graph, model.path, options);
  else
    quantizeWithSyntheticProfile(*graph, options);
  return graph;
}

void checkProfileReadable(const QuantCliOptions &options) {
  if (options.enabled())
    (void)loadProfile(options.profilePath);
}

void quantizeWithSyntheticProfile(Graph &graph, const QuantCliOptions &options) {
  QuantizationOptions resolved = resolveQuantOptions(options);
  quantizeGraph(graph, syntheticProfile(graph), resolved, "synthetic sizing profile");
}

} // namespace bundlefit
