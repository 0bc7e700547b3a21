//===- Pipeline.cpp - Load, quantize and transform a model -----------------===//
#include "bundlefit/driver/Pipeline.h"
#include "bundlefit/driver/Progress.h"

#include "bundlefit/ir/Graph.h"
#include "bundlefit/onnx/OnnxImporter.h"
#include "bundlefit/ops/Int8Params.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/passes/Passes.h"
#include "bundlefit/quant/FoldQdq.h"
#include "bundlefit/quant/Profile.h"
#include "bundlefit/support/Error.h"
#include "bundlefit/support/OutputFile.h"
#include "bundlefit/tflite/TfliteImporter.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <unistd.h>

namespace bundlefit {

namespace {
// Atomics and a per-thread override: `fit --batch` and the Python module
// run the driver on several threads at once.
std::atomic<Verbosity> currentVerbosity{Verbosity::Normal};
/// Set by QuietScope: this thread prints no status lines.
thread_local int quietScopes = 0;
/// Set when a JSON report is the whole output: no informational notes then.
std::atomic<bool> statusNotesSuppressed{false};
/// The --memory-opt level the run's last applyMemoryOptPasses used, or -1.
std::atomic<int> memoryOptUsed{-1};
} // namespace

Verbosity verbosity() { return quietScopes > 0 ? Verbosity::Quiet : currentVerbosity.load(); }
void setVerbosity(Verbosity level) { currentVerbosity = level; }

QuietScope::QuietScope() { ++quietScopes; }
QuietScope::~QuietScope() { --quietScopes; }

void setStatusNotesSuppressed(bool suppressed) { statusNotesSuppressed = suppressed; }

void printMemoryOptNote() {
  // The two tools default to different levels, so the same model gets
  // different ACTIVATIONS from each: say which level this run used. Printed
  // after the work, so an error stays the only line of a failed run.
  if (memoryOptUsed >= 0 && !statusNotesSuppressed)
    status(describeMemoryOpt(memoryOptUsed));
}

KeepMemoryOptNote::KeepMemoryOptNote() : level_(memoryOptUsed) {}
KeepMemoryOptNote::~KeepMemoryOptNote() { memoryOptUsed = level_; }

void status(const std::string &line) {
  if (verbosity() == Verbosity::Quiet)
    return;
  std::cout.flush(); // Results first, in a log that captures both streams.
  std::cerr << line << "\n";
}

const std::vector<std::string> &preQuantizedOps() {
  static const std::vector<std::string> ops = [] {
    std::vector<std::string> names;
    for (const std::string &op : OpRegistry::get().supportedOps())
      if (hasOpTrait(op, kOpLinearQuant) || hasOpTrait(op, kOpQOperator))
        names.push_back(op);
    return names;
  }();
  return ops;
}

namespace {

/// The int8 rewrite of a folded QDQ graph with the model's parameters.
/// `tflite`: the Q/DQ pairs came from a TFLite model, whose arithmetic is
/// TFLite Micro's (double rounding), not ONNX's. `keepInt8Io`: --int8-io, or
/// a TFLite model's own int8 inputs and outputs.
void quantizePreQuantized(Graph &graph, const ModelOptions &model, QdqFoldResult &qdq,
                          bool keepInt8Io, bool tflite) {
  const std::string &path = model.path;
  QuantizationOptions options;
  options.keepInt8Io = keepInt8Io;
  options.int8Inputs = int8InputParams(model);
  options.channelwise = true; // for weights the model leaves float or asymmetric
  options.preset = &qdq.params;
  options.onnxArithmetic = !tflite;
  QuantizationSummary summary;
  std::vector<std::string> poolNotes;
  try {
    Stage stage("int8 from the model's Q/DQ parameters");
    matMulsAsGemms(graph, qdq.params);
    averagePoolsAsConvs(graph, qdq.params, poolNotes);
    summary = quantizeGraph(graph, ProfileData{}, options, path);
    // An ONNX model's arithmetic is ONNX's: QLinearConv and QDQ round the
    // exact requantized value once (CompileBundle undoes it for --use-cmsis).
    // A TFLite model's is TFLite Micro's: the kernels' default double rounding.
    setInt8SingleRounding(graph, !tflite);
  } catch (const Error &e) {
    throw Error(e.code(), path + ": " + e.what());
  }
  // Warnings are never silent, even with -q: each one changes the numbers.
  std::cout.flush();
  for (const std::string &line : qdq.warnings)
    std::cerr << "warning: " << line << "\n";
  for (const std::string &line : summary.warnings)
    std::cerr << "warning: " << path << ": " << line << "\n";
  // A pool computed as a depthwise Conv is exact (one rounding, as
  // onnxruntime's): a note on what runs, not a warning about the numbers.
  for (const std::string &line : poolNotes)
    std::cerr << "note: " << path << ": " << line << "\n";
  if (tflite)
    status("int8 TFLite model: " + std::to_string(qdq.pairs) + " quantized activations and " +
           std::to_string(qdq.constants) + " quantized constants; " +
           describeQuantization(summary));
  else
    status("pre-quantized model: " + std::to_string(qdq.pairs) +
           " QuantizeLinear/DequantizeLinear "
           "pairs and " +
           std::to_string(qdq.constants) + " quantized constants folded; " +
           describeQuantization(summary));
}

} // namespace

std::unique_ptr<Graph> loadModel(const ModelOptions &options) {
  ImportOptions importOptions;
  for (const std::string &text : options.defineSymbols)
    importOptions.symbols.insert(parseDefineSymbolOption(text));
  for (const std::string &text : options.modelInputs) {
    ModelInputOverride input = parseModelInputOption(text);
    // int8q: the model's float input, which the quantizer makes int8 with
    // these parameters (int8InputParams); the shape, when given, applies.
    if (!input.quant.empty()) {
      (void)int8InputParams(options); // uint8q: the error
      if (!input.shapeGiven)
        continue;
      input.dtype = DType::Float32;
      input.quant = {};
    }
    importOptions.inputOverrides.push_back(std::move(input));
  }
  std::unique_ptr<Graph> graph;
  // The one place that tells the formats apart: a TFLite flatbuffer by its
  // file identifier (or .tflite extension), anything else as ONNX.
  const bool tflite = isTfliteModelFile(options.path);
  if (tflite) {
    Stage stage("import " + options.path);
    if (!options.defineSymbols.empty() || !options.modelInputs.empty())
      throw Error(ExitCode::Usage,
                  std::string(options.defineSymbols.empty() ? "--model-input" : "--define-symbol") +
                      ": " + options.path +
                      " is a TFLite model, whose input shapes and types are "
                      "static; the option applies to ONNX models");
    // Its int8 tensors arrive as the Q/DQ pairs of a pre-quantized ONNX
    // model and go the same way below.
    graph = importTfliteModel(options.path);
  } else {
    Stage stage("import " + options.path);
    // QLinearConv / QLinearMatMul are not operators of the IR: they become
    // Q/DQ pairs first, then the importer's check runs.
    importOptions.rejectUnsupportedOps = false;
    graph = importOnnxModel(options.path, importOptions);
    expandQOperators(*graph, options.path);
    std::vector<std::string> notes;
    replaceDynamicQuantization(*graph, options.path, notes);
    for (const std::string &line : notes)
      std::cerr << "note: " << line << "\n";
    rejectUnsupportedOps(*graph, options.path);
  }
  if (options.afterImport)
    options.afterImport(*graph);
  // Before the default passes: constant folding would fold the weights'
  // DequantizeLinear nodes and lose their scales.
  std::optional<QdqFoldResult> qdq;
  if (hasLinearQuantNodes(*graph)) {
    // Exporters compute scales and zero points (PyTorch: Shape ->
    // ConstantOfShape -> Cast); fold those chains first, and type every value
    // so the folder can tell a no-op Cast, keeping the Q/DQ nodes themselves.
    try {
      Stage stage("fold quantization parameters");
      foldConstantsAndInferTypes(*graph,
                                 [](const Node &node) { return isLinearQuantOp(node.opType); });
    } catch (const Error &e) {
      throw Error(e.code(), options.path + ": " + e.what());
    }
    qdq = foldQdqPairs(*graph, options.path);
  }
  PassOptions passOptions;
  passOptions.fuseActivations = options.fuseActivations;
  if (qdq) {
    // The model rounds each value it quantizes. A clamp (an activation
    // whose int8 output carries its input's parameters, Int8Rule::SameParams:
    // Relu, Clip) commutes with that rounding when its output keeps the
    // parameters; any other activation fused across it (onnxruntime's
    // QLinearConv -> QLinearLeakyRelu) would skip a rounding onnxruntime does.
    const std::map<std::string, ScaleZeroPoint> &params = qdq->params.activations;
    passOptions.mayFuseActivation = [&params](const Value &x, const Node &activation) {
      auto in = params.find(x.name);
      if (in == params.end())
        return true;
      if (int8RuleOf(activation.opType) != Int8Rule::SameParams)
        return false;
      auto out = params.find(activation.output(0)->name);
      return out == params.end() || (out->second.scale == in->second.scale &&
                                     out->second.zeroPoint == in->second.zeroPoint);
    };
  }
  try {
    Stage stage("graph passes");
    runDefaultPasses(*graph, passOptions);
  } catch (const Error &e) {
    throw Error(e.code(), options.path + ": " + e.what());
  }
  // A TFLite model's int8 inputs and outputs stay int8, as TFLite Micro
  // runs them; float ones (before QUANTIZE, after DEQUANTIZE) stay float.
  const bool keepInt8Io = options.keepInt8Io || (tflite && tfliteModelHasInt8Io(options.path));
  if (qdq)
    quantizePreQuantized(*graph, options, *qdq, keepInt8Io, tflite);
  return graph;
}

bool modelIsPreQuantized(const std::string &modelPath) {
  if (isTfliteModelFile(modelPath)) // int8, or int16x8: integer builds only either way
    return tfliteModelIsQuantized(modelPath) || tfliteModelHasInt16Activations(modelPath);
  return onnxModelHasOps(modelPath, preQuantizedOps());
}

std::map<std::string, ScaleZeroPoint> int8InputParams(const ModelOptions &options) {
  std::map<std::string, ScaleZeroPoint> params;
  for (const std::string &text : options.modelInputs) {
    ModelInputOverride input = parseModelInputOption(text);
    if (input.quant.empty())
      continue;
    // Glow's uint8q would need uint8 kernels at the boundary (its offset is
    // a uint8 zero point); bundlefit's int8 kernels take int8 only.
    if (input.dtype != DType::Int8)
      throw Error(ExitCode::Unsupported,
                  "--model-input '" + text +
                      "': uint8q inputs are not supported (bundlefit's int8 kernels take int8); "
                      "give it as int8q with the offset minus 128");
    params[input.name] = {input.quant.scales.at(0), input.quant.zeroPoints.at(0)};
  }
  return params;
}

ModelOptions floatIoModel(const ModelOptions &model) {
  ModelOptions copy = model;
  copy.keepInt8Io = false;
  copy.modelInputs.clear();
  for (const std::string &text : model.modelInputs) {
    ModelInputOverride input = parseModelInputOption(text);
    if (input.quant.empty()) {
      copy.modelInputs.push_back(text);
    } else if (input.shapeGiven) {
      std::string dims;
      for (int64_t d : input.shape)
        dims += (dims.empty() ? "" : ",") + std::to_string(d);
      copy.modelInputs.push_back(input.name + ",float,[" + dims + "]");
    }
  }
  return copy;
}

void checkInt8IoBuild(const ModelOptions &model, bool int8Build) {
  if (int8Build)
    return;
  if (model.keepInt8Io)
    throw Error(ExitCode::Usage, "--int8-io: " + model.path +
                                     " builds in float; int8 inputs and outputs need an int8 build "
                                     "(--load-profile, or a pre-quantized model)");
  std::map<std::string, ScaleZeroPoint> int8Inputs = int8InputParams(model);
  if (!int8Inputs.empty())
    throw Error(ExitCode::Usage,
                "--model-input '" + int8Inputs.begin()->first + ",int8q,...': " + model.path +
                    " builds in float; an int8q input needs an int8 build (--load-profile, or a "
                    "pre-quantized model)");
}

void markPreQuantized(const std::string &modelPath, QuantCliOptions &options) {
  options.markedModel = modelPath;
  options.preQuantized = modelIsPreQuantized(modelPath);
  options.int16x8 = options.preQuantized && isTfliteModelFile(modelPath) &&
                    tfliteModelHasInt16Activations(modelPath);
}

std::string describeMemoryOpt(int level) {
  static const char *const meaning[] = {"Glow's activation layout",
                                        "Conv+pool fused, depthwise and 1x1 convs in place",
                                        "level 1 plus patch-based stages"};
  return "memory-opt " + std::to_string(level) + " (" +
         (level >= 0 && level <= kMaxMemoryOpt ? meaning[level] : "?") +
         "; defaults: bundlefit 2, model-compiler 0)";
}

void applyMemoryOptPasses(Graph &graph, const ModelOptions &options) {
  memoryOptUsed = options.memoryOpt;
  try {
    Stage stage("memory-opt passes");
    runMemoryOptPasses(graph, options.memoryOpt, options.patchRecomputeBudget,
                       planOptionsFor(options, 0).bufferAlignment);
  } catch (const Error &e) {
    throw Error(e.code(), options.path + ": " + e.what());
  }
}

PlanOptions planOptionsFor(const ModelOptions &model, double timeLimitSeconds) {
  PlanOptions options;
  options.exactTimeBudgetSeconds = timeLimitSeconds;
  options.reorderForMemory = !model.keepModelOrder;
  options.memoryOpt = model.memoryOpt;
  options.patchRecomputeBudget = model.patchRecomputeBudget;
  options.bufferAlignment =
      model.bufferAlignment ? model.bufferAlignment : defaultBufferAlignment(model.path);
  return options;
}

uint64_t defaultBufferAlignment(const std::string &modelPath) {
  return isTfliteModelFile(modelPath) ? MemoryPlan::kMinBufferAlignment : MemoryPlan::kAlignment;
}

PlannedModel planModel(const ModelOptions &model, const QuantCliOptions &quant,
                       const PlanOptions &planOptions) {
  auto start = std::chrono::steady_clock::now(); // The time limit counts from here.
  PlannedModel planned;
  planned.graph = loadModel(model);
  quantizeLoadedModel(*planned.graph, model, quant);
  applyMemoryOptPasses(*planned.graph, model);
  Stage stage("plan memory");
  PlanOptions options = planOptions;
  options.secondsSpentBefore +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  planned.plan = planGraphMemory(*planned.graph, options);
  return planned;
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

namespace {

/// Glow node kinds (include/glow/Graph/Nodes.h names, any case) that bundlefit
/// never quantizes: they stay float whatever the option says, so naming them
/// in -keep-original-precision-for-nodes is accepted and changes nothing.
/// Scripts written for Glow (its doc: Add,Sub,Mul,Div,Exp,SoftMax) keep working.
bool isGlowKindKeptFloatAnyway(const std::string &name) {
  static const char *const kinds[] = {
      "sub",
      "div",
      "exp",
      "log",
      "max",
      "min",
      "pow",
      "sqrt",
      "rsqrt",
      "tanh",
      "sigmoid",
      "batchnormalization",
      "localresponsenormalization",
      "batchedadd",
      "batchedreduceadd",
      "batchedreducemean",
      "batchmatmul",
      "slice",
      "inserttensor",
      "tile",
      "gather",
      "splat",
      "select",
      "cmplte",
      "cmpeq",
      "cmplt",
      "abs",
      "neg",
      "leakyrelu",
      "prelu",
      "swish",
      "erf",
      "resizenearest",
      "resizebilinear",
      "pad",
      "channelshuffle",
      "spacetodepth",
      "reciprocal",
      "sin",
      "cos",
      "topk",
      "argmax",
      "lstm",
      "sparselengthssum",
      "layernormalization",
      "hardswish",
      "gelu",
      "square",
      "logsoftmax",
      "meanvariancenormalization",
  };
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  for (const char *kind : kinds)
    if (lower == kind)
      return true;
  return false;
}

} // namespace

QuantizationOptions resolveQuantOptions(const QuantCliOptions &options) {
  QuantizationOptions resolved;
  if (!parseQuantSchema(options.schema, resolved.schema))
    throw Error(ExitCode::Usage, "--quantization-schema " + options.schema + ": expected one of " +
                                     joined(quantSchemaNames()));
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
    if (op.empty() && isGlowKindKeptFloatAnyway(name)) {
      resolved.keepFloatOps.insert(name); // matches no quantized op: already float
      continue;
    }
    if (op.empty())
      throw Error(ExitCode::Usage,
                  "--keep-original-precision-for-nodes " + name +
                      ": unknown node kind (e.g. Conv/Convolution, Gemm/FullyConnected, Add, Mul, "
                      "Concat, MaxPool, AveragePool/AvgPool, Relu, Clip, SoftMax; Glow's Sub, "
                      "Div, Exp, Tanh, ... are accepted and stay float)");
    resolved.keepFloatOps.insert(op);
  }
  resolved.channelwise = options.channelwise;
  return resolved;
}

bool quantizeLoadedModel(Graph &graph, const ModelOptions &model, const QuantCliOptions &options) {
  const std::string &modelPath = model.path;
  if (!options.enabled()) {
    checkInt8IoBuild(model, false);
    return false;
  }
  if (isInt8Graph(graph) || options.preQuantized) {
    // Pre-quantized: loadModel applied the model's own parameters; an op
    // without an int8 kernel runs in float between Dequantize and Quantize
    // (quantizePreQuantized says which), even when that leaves no int8 op.
    if (!options.profilePath.empty())
      throw Error(ExitCode::Usage, "--load-profile " + options.profilePath + ": " + modelPath +
                                       " is pre-quantized (QuantizeLinear/DequantizeLinear); it "
                                       "takes no profile");
    return true;
  }
  if (options.profilePath.empty())
    throw Error(ExitCode::Unsupported, modelPath + ": no QuantizeLinear/DequantizeLinear "
                                                   "node made it int8; int8 needs --load-profile");
  QuantizationOptions resolved = resolveQuantOptions(options);
  resolved.keepInt8Io = model.keepInt8Io;
  resolved.int8Inputs = int8InputParams(model);
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

bool isInt8Graph(const Graph &graph) {
  for (const Node *node : graph.nodes())
    for (const Value *output : node->outputs)
      if (output && output->type.dtype == DType::Int8 && !output->type.quant.empty())
        return true;
  return false;
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
    quantizeLoadedModel(*graph, model, options);
  else
    quantizeWithSyntheticProfile(*graph, model, options);
  return graph;
}

void checkProfileReadable(const QuantCliOptions &options) {
  if (!options.profilePath.empty())
    (void)loadProfile(options.profilePath);
}

void quantizeWithSyntheticProfile(Graph &graph, const ModelOptions &model,
                                  const QuantCliOptions &options) {
  if (isInt8Graph(graph))
    return; // pre-quantized: sized with the model's own parameters
  QuantizationOptions resolved = resolveQuantOptions(options);
  resolved.keepInt8Io = model.keepInt8Io;
  resolved.int8Inputs = int8InputParams(model);
  quantizeGraph(graph, syntheticProfile(graph), resolved, "synthetic sizing profile");
}

} // namespace bundlefit
