//===- QuantOptions.cpp - Parse the int8 options, apply the profile --------===//
#include "QuantOptions.h"
#include "Progress.h"

#include "bundlefit/ir/Graph.h"
#include "bundlefit/quant/Profile.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <cctype>
#include <iostream>

namespace bundlefit {

namespace {

std::string joined(const std::vector<std::string> &names) {
  std::string text;
  for (const std::string &name : names)
    text += (text.empty() ? "" : ", ") + name;
  return text;
}

/// Glow node kinds (include/glow/Graph/Nodes.h names, any case) that bundlefit
/// never quantizes: they stay float whatever the option says, so naming them
/// in -keep-original-precision-for-nodes is accepted and changes nothing.
/// Scripts written for Glow (its doc: Add,Sub,Mul,Div,Exp,SoftMax) keep working.
bool isGlowKindKeptFloatAnyway(const std::string &name) {
  static const char *const kinds[] = {
      "sub", "div", "exp", "log", "max", "min", "pow", "sqrt", "rsqrt", "tanh", "sigmoid",
      "batchnormalization", "localresponsenormalization", "batchedadd", "batchedreduceadd",
      "batchedreducemean", "batchmatmul", "slice", "insertTensor", "tile", "gather", "splat",
      "select", "cmplte", "cmpeq", "cmplt", "abs", "neg", "leakyrelu", "prelu", "swish",
      "erf", "resizenearest", "resizebilinear", "pad", "channelshuffle", "spacetodepth",
      "reciprocal", "sin", "cos", "topk", "argmax", "lstm", "sparselengthssum", "layernormalization",
      "hardswish", "gelu", "square", "logsoftmax", "meanvariancenormalization",
  };
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  for (const char *kind : kinds) {
    std::string k = kind;
    std::transform(k.begin(), k.end(), k.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (lower == k)
      return true;
  }
  return false;
}

} // namespace

void addQuantOptions(CLI::App &command, QuantCliOptions &options, bool requireProfile) {
  CLI::Option *profile = command.add_option(
      "--load-profile", options.profilePath,
      "Quantize to int8 with this profile (bundlefit profile; Glow's YAML)");
  if (requireProfile)
    profile->required();
  command.add_option("--quantization-schema", options.schema,
                     "asymmetric (default) | symmetric | symmetric_with_uint8 | "
                     "symmetric_with_power2_scale");
  command.add_option("--quantization-precision-bias", options.biasPrecision,
                     "Int32 (default: bias at accumulator scale) | Int8");
  command.add_option("--keep-original-precision-for-nodes", options.keepOriginal,
                     "Op kinds that stay float, e.g. Add,Softmax (ONNX or Glow names)")
      ->delimiter(',');
  command.add_flag("--channelwise", options.channelwise,
                   "One weight scale per output channel (Conv, Gemm)");
}

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
  if (options.enabled()) {
    quantizeLoadedModel(*graph, model.path, options);
  } else {
    QuantizationOptions resolved = resolveQuantOptions(options);
    quantizeGraph(*graph, syntheticProfile(*graph), resolved, "synthetic sizing profile");
  }
  return graph; // The device database runs the --memory-opt passes per build.
}

void addCalibrationOptions(CLI::App &command, CalibrationCliOptions &options) {
  command.add_option("inputs", options.inputs,
                     "Calibration inputs: .npy files (a stack of samples along the first "
                     "dimension is split), PNG images, or directories of them")
      ->required();
  command.add_option("--image-mode", options.imageMode,
                     "Pixel p of uint8 .npy / PNG inputs becomes: 0to1 p/255 (default), neg1to1, "
                     "0to255, neg128to127")
      ->check(CLI::IsMember({"0to1", "neg1to1", "0to255", "neg128to127"}));
  command.add_option("--image-layout", options.imageLayout, "Model input layout for PNG: NCHW (default) | NHWC")
      ->check(CLI::IsMember({"NCHW", "NHWC"}));
  command.add_option("--image-channel-order", options.channelOrder, "PNG channel order: RGB (default) | BGR")
      ->check(CLI::IsMember({"RGB", "BGR"}));
}

std::vector<Tensor> loadCalibrationSamples(const Graph &graph,
                                           const CalibrationCliOptions &options) {
  if (graph.inputs().size() != 1)
    throw Error(ExitCode::Unsupported,
                "calibration inputs feed models with exactly one input; this model has " +
                    std::to_string(graph.inputs().size()));
  const Value &input = *graph.inputs()[0];
  if (input.type.dtype != DType::Float32)
    throw Error(ExitCode::Unsupported, "graph input '" + input.name + "' is " + input.type.str() +
                                           "; calibration needs a float32 input");
  ImageOptions image;
  parseImageMode(options.imageMode, image.mode);
  image.nhwc = options.imageLayout == "NHWC";
  image.bgr = options.channelOrder == "BGR";
  return loadAllSamples(options.inputs, input.type.shape, image);
}

SampleProgress::SampleProgress(std::string label, size_t total)
    : label_(std::move(label)), total_(total), enabled_(progressEnabled()) {}

SampleProgress::~SampleProgress() {
  if (enabled_ && done_ > 0)
    std::cerr << "\r\033[K" << std::flush;
}

void SampleProgress::advance() {
  ++done_;
  if (!enabled_ || total_ == 0)
    return;
  // Redraw only when the bar moves (at most 100 times), not once per sample.
  if (done_ != total_ && done_ * 100 / total_ == (done_ - 1) * 100 / total_)
    return;
  constexpr size_t width = 30;
  size_t filled = done_ * width / total_;
  std::cerr << "\r" << label_ << " [" << std::string(filled, '#') << std::string(width - filled, '.')
            << "] " << done_ << "/" << total_ << std::flush;
}

} // namespace bundlefit
