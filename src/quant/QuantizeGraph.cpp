//===- QuantizeGraph.cpp - The int8 rewrite of a profiled float graph ------===//
//
// Two phases: decide which nodes run in int8 (in execution order, because a
// view is int8 exactly when its producer is), then rewrite in the same order,
// inserting Quantize before int8 readers of float values and Dequantize
// before float readers of int8 values. See QuantizeGraph.h for the rules and
// docs/quantized-ir.md for the graph this must produce. Rules that stand on
// their own live beside it (QuantizeRules.h): the sequence inputs quantized
// once (InputsQuantizedOnce.cpp), the weight and bias integers
// (QuantizeWeights.cpp).
//
//===----------------------------------------------------------------------===//
#include "bundlefit/quant/QuantizeGraph.h"

#include "QuantizeRules.h"

#include "bundlefit/quant/FoldQdq.h"
#include "bundlefit/quant/UnfuseActivations.h"

#include "bundlefit/ops/FusedActivations.h"
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

namespace bundlefit {

namespace {

bool isViewOrTranspose(const std::string &op) { return hasOpTrait(op, kOpMovesBytes); }

/// The int8 half of `node`'s definition (a default one for unknown ops).
const Int8Def &int8Of(const Node &node) {
  static const Int8Def none;
  const OpDef *def = OpRegistry::get().find(node.opType);
  return def ? def->int8 : none;
}

/// Ops whose int8 output carries exactly the input's parameters, so their
/// kernels never rescale (docs/quantized-ir.md, "Parameter rules").
bool reusesInputParams(const Node &node) { return int8Of(node).rule == Int8Rule::SameParams; }

/// Operands the int8 kernel reads as int8 activations.
std::vector<size_t> dataInputs(const Node &node) {
  const Int8Def &int8 = int8Of(node);
  return int8.activationInputs ? int8.activationInputs(node) : std::vector<size_t>{0};
}

class Quantizer {
public:
  Quantizer(Graph &graph, const ProfileData &profile, const QuantizationOptions &options,
            const std::string &profileName)
      : graph_(graph), profile_(profile), options_(options), profileName_(profileName) {}

  QuantizationSummary run() {
    if (!options_.preset) {
      // A profiled MatMul by a constant (an unrolled recurrent layer's) is
      // the int8 fully connected layer, its bias Add folded in.
      matMulsByConstantAsGemms(
          graph_, [&](const std::string &name) { return profile_.find(name) != nullptr; },
          [&](const std::string &view, const std::string &of) { rangeAliases_[view] = of; });
      collectRoleRanges();
    }
    // Table activations fused into a layer run after it in int8, where the
    // profile or the model gives the layer's own output parameters.
    unfuseTableActivations(
        graph_,
        [&](const std::string &name) {
          return options_.preset ? options_.preset->activations.count(name) != 0
                                 : profile_.find(name) != nullptr;
        },
        /*gates=*/options_.preset != nullptr);
    makeInputsInt8();
    quantizedOnce_ = inputsQuantizedOnce(graph_, profile_, options_);
    std::vector<Node *> original = graph_.nodes();
    for (Node *node : original) {
      std::string reason = whyFloat(*node);
      if (reason.empty())
        int8_.insert(node);
      else if (isInt8CapableOp(node->opType) && reason != kNotApplicable)
        summary_.keptFloat.push_back(node->describe() + ": " + reason);
      if (!reason.empty() && touchesPreset(*node))
        summary_.warnings.push_back(node->describe() + ": kept in float (" +
                                    (reason == kNotApplicable ? "no int8 kernel" : reason) +
                                    ") between Dequantize and Quantize");
    }
    if (options_.preset)
      for (Value *input : graph_.inputs())
        for (Node *reader : graph_.users(input))
          if (!int8_.count(reader) && !isViewOrTranspose(reader->opType)) {
            quantizeInputAsPreset(input, original.empty() ? nullptr : original.front());
            break;
          }
    for (Node *node : original) {
      if (int8_.count(node)) {
        rewriteInt8(*node);
        ++summary_.int8Nodes;
      } else {
        rewriteFloat(*node);
        ++summary_.floatNodes;
      }
    }
    std::vector<Value *> outputs = graph_.outputs();
    for (Value *output : outputs) {
      if (isInt8Activation(output) && !options_.keepInt8Io)
        dequantizeGraphOutput(output);
      else if (options_.keepInt8Io && output->type.dtype == DType::Float32)
        quantizeGraphOutput(output);
    }
    graph_.removeUnusedValues();
    graph_.verify();
    // A consistency check: inference must agree and keep every parameter.
    inferGraphTypes(graph_);
    return summary_;
  }

private:
  static constexpr const char *kNotApplicable = "-";

  /// The union of the profiled ranges of each recurrent role's outputs
  /// (kRecurrentRoleAttr): one set of int8 parameters for all the steps.
  void collectRoleRanges() {
    for (const Node *node : graph_.nodes()) {
      const Attribute *role = node->attrs.find(kRecurrentRoleAttr);
      const TensorProfile *entry = role && node->outputs.size() == 1 && node->output()
                                       ? profile_.find(node->output()->name)
                                       : nullptr;
      if (!entry)
        continue;
      auto [it, fresh] = roleRanges_.try_emplace(role->s, entry->min, entry->max);
      if (!fresh)
        it->second = {std::min(it->second.first, entry->min),
                      std::max(it->second.second, entry->max)};
    }
  }

  /// The profile's range of `value` (false when it has none): its role's
  /// when a recurrent step computes it.
  bool profiledRange(const Value &value, float &min, float &max) const {
    if (const Node *producer = value.producer)
      if (const Attribute *role = producer->attrs.find(kRecurrentRoleAttr)) {
        auto it = roleRanges_.find(role->s);
        if (it != roleRanges_.end()) {
          min = it->second.first, max = it->second.second;
          return true;
        }
      }
    auto alias = rangeAliases_.find(value.name);
    const TensorProfile *entry =
        profile_.find(alias == rangeAliases_.end() ? value.name : alias->second);
    if (!entry)
      return false;
    min = entry->min, max = entry->max;
    return true;
  }

  /// --int8-io and -model-input int8q: the graph inputs that are int8 themselves.
  void makeInputsInt8() {
    for (const auto &[name, params] : options_.int8Inputs) {
      (void)params;
      const Value *input = graph_.findValue(name);
      if (!input || !isGraphInput(input))
        throw Error(ExitCode::Usage, "--model-input '" + name +
                                         ",int8q,...': the model has no input named '" + name +
                                         "'");
    }
    for (Value *input : graph_.inputs()) {
      if (input->type.dtype != DType::Float32)
        continue;
      std::optional<ScaleZeroPoint> params = inputParams(*input);
      if (!params)
        continue;
      input->type.dtype = DType::Int8;
      input->type.quant = perTensor(*params);
    }
  }

  bool isGraphInput(const Value *value) const {
    const std::vector<Value *> &inputs = graph_.inputs();
    return std::find(inputs.begin(), inputs.end(), value) != inputs.end();
  }

  /// The int8 parameters of graph input `input`, or none when it stays float.
  std::optional<ScaleZeroPoint> inputParams(const Value &input) const {
    auto given = options_.int8Inputs.find(input.name);
    if (options_.preset) {
      auto it = options_.preset->activations.find(input.name);
      bool quantized = it != options_.preset->activations.end();
      if (given == options_.int8Inputs.end())
        return options_.keepInt8Io && quantized ? std::optional(it->second) : std::nullopt;
      if (!quantized || !sameParams(it->second, given->second))
        throw Error(ExitCode::Usage,
                    "--model-input '" + input.name + ",int8q," +
                        std::to_string(given->second.scale) + "," +
                        std::to_string(given->second.zeroPoint) + "': the pre-quantized model " +
                        (quantized ? "quantizes it with scale " + std::to_string(it->second.scale) +
                                         ", zero point " + std::to_string(it->second.zeroPoint)
                                   : "does not quantize it") +
                        "; give the model's parameters (or --int8-io alone)");
      return it->second;
    }
    if (given != options_.int8Inputs.end())
      return given->second;
    if (!options_.keepInt8Io)
      return std::nullopt;
    return rangeParams(input, "graph input");
  }

  static bool sameParams(ScaleZeroPoint a, ScaleZeroPoint b) {
    return a.zeroPoint == b.zeroPoint && std::abs(a.scale - b.scale) <= 1e-6f * a.scale;
  }

  /// The schema's parameters for the profile's range of `value`.
  ScaleZeroPoint rangeParams(const Value &value, const std::string &what) const {
    float min = 0, max = 0;
    if (!profiledRange(value, min, max))
      throw Error(ExitCode::BadInputFile,
                  profileName_ + ": no range recorded for " + what + " '" + value.name +
                      "' (--int8-io); record the profile again with the same model options");
    return chooseQuantParams(min, max, options_.schema);
  }

  /// --int8-io: a float graph output (computed by a float node) becomes int8:
  /// the float value moves to `<name>_float` and a Quantize at the end
  /// computes the output under its name. With a preset, only an output the
  /// model quantizes; others stay float.
  void quantizeGraphOutput(Value *value) {
    ScaleZeroPoint params;
    if (options_.preset) {
      auto it = options_.preset->activations.find(value->name);
      if (it == options_.preset->activations.end())
        return;
      params = it->second;
    } else {
      params = rangeParams(*value, "graph output");
    }
    Node *node = graph_.insertNodeBefore(nullptr, Op::Quantize, value->name + "_quantize", {value},
                                         {value->name + "_int8"});
    Value *output = node->output();
    output->type = TensorType{DType::Int8, value->type.shape, perTensor(params)};
    output->typeKnown = true;
    ++summary_.quantizeNodes;
    std::vector<std::pair<Node *, size_t>> readers;
    for (Node *reader : graph_.nodes())
      for (size_t i = 0; i < reader->inputs.size(); ++i)
        if (reader->inputs[i] == value)
          readers.push_back({reader, i});
    graph_.replaceAllUsesWith(value, output); // moves the output slot
    for (auto &[reader, index] : readers)
      reader->inputs[index] = value;
    std::string name = value->name;
    graph_.renameValue(value, name + "_float");
    graph_.renameValue(output, name);
  }

  /// "" when `node` can run in int8; otherwise why not (kNotApplicable when
  /// the question does not arise: not an int8 op, or a view of a float value).
  std::string whyFloat(const Node &node) const {
    const std::string &op = node.opType;
    if (!isInt8CapableOp(op))
      return kNotApplicable;
    if (isViewOrTranspose(op)) {
      const Value *input = node.input(0);
      // int8 from an int8 node, or an int8 graph input (--keep-int8-io).
      bool int8Input = input && ((input->producer && int8_.count(input->producer)) ||
                                 (input->isGraphInput() && isInt8Activation(input)) ||
                                 quantizedOnce_.count(input));
      return int8Input && node.outputs.size() == 1 ? "" : kNotApplicable;
    }
    if (options_.keepFloatOps.count(op))
      return "kept float (--keep-original-precision-for-nodes)";
    if (node.outputs.size() != 1 || node.output()->type.dtype != DType::Float32)
      return "output is not a single float32 tensor";
    for (size_t index : dataInputs(node)) {
      const Value *input = node.input(index);
      if (input && presetConstantParams(input))
        continue;
      if (!input || input->isConstant())
        return "operand " + std::to_string(index) + " is a constant, not an activation";
      if (input->type.dtype != DType::Float32 && !isInt8Activation(input)) // int8: --keep-int8-io
        return "operand '" + input->name + "' is " + dtypeName(input->type.dtype);
    }
    // The same test as the int8 kernels' (fusedActivationRange): "None" is none.
    std::string activation = node.attrs.getString("activation", "");
    const FusedActivationKind *fused = findFusedActivation(activation);
    if (!fused || !isInt8ClampActivation(*fused))
      return "fused " + activation + " has no int8 kernel";
    // The operator's own conditions (OpDef::int8.whyFloat).
    if (const Int8Def &int8 = int8Of(node); int8.whyFloat)
      if (std::string reason = int8.whyFloat(node); !reason.empty())
        return reason;
    return options_.preset ? whyNotPreset(node) : "";
  }

  /// Whether a value has int8 parameters: from an int8 producer or the model.
  bool hasPresetParams(const Value *value) const {
    return (value->producer && int8_.count(value->producer)) ||
           options_.preset->activations.count(value->name) || presetConstantParams(value);
  }

  /// A pre-quantized model's float constant read as an activation (the
  /// bias of onnxruntime's QLinearAdd): its one scale and zero point, which
  /// give back its stored integers exactly; nullptr otherwise.
  const QuantParams *presetConstantParams(const Value *value) const {
    if (!options_.preset || !value || !value->isConstant() || value->type.dtype != DType::Float32)
      return nullptr;
    auto it = options_.preset->weights.find(value->name);
    return it != options_.preset->weights.end() && it->second.scales.size() == 1 &&
                   it->second.zeroPoints.size() <= 1
               ? &it->second
               : nullptr;
  }

  /// The int8 constant of `value` at its model parameters (presetConstantParams).
  Value *int8Constant(Value *value, const QuantParams &params) {
    const float scale = params.scales[0];
    const int32_t zeroPoint = params.zeroPoints.empty() ? 0 : params.zeroPoints[0];
    std::vector<uint8_t> bytes(size_t(value->type.numElements()));
    for (size_t i = 0; i < bytes.size(); ++i) {
      const float q = std::nearbyint(float(value->elementAsDouble(int64_t(i))) / scale);
      const float v = std::min(127.0f, std::max(-128.0f, q + float(zeroPoint)));
      bytes[i] = uint8_t(int8_t(v));
    }
    TensorType type{DType::Int8, value->type.shape, perTensor({scale, zeroPoint})};
    return graph_.addConstant(graph_.uniqueValueName(value->name + "_int8"), type,
                              std::move(bytes));
  }

  /// Whether the model quantizes any activation `node` reads or writes.
  bool touchesPreset(const Node &node) const {
    if (!options_.preset || isViewOrTranspose(node.opType))
      return false;
    for (const Value *value : node.outputs)
      if (value && options_.preset->activations.count(value->name))
        return true;
    for (const Value *value : node.inputs)
      if (value && !value->isConstant() && options_.preset->activations.count(value->name))
        return true;
    return false;
  }

  /// With a pre-quantized model: "" when the model gives every parameter
  /// the int8 node needs, else what is missing.
  std::string whyNotPreset(const Node &node) const {
    for (size_t index : dataInputs(node))
      if (!hasPresetParams(node.input(index)))
        return "the model does not quantize operand '" + node.input(index)->name + "'";
    if (!reusesInputParams(node) && !int8Of(node).fixedOutput &&
        !options_.preset->activations.count(node.output()->name))
      return "the model does not quantize output '" + node.output()->name + "'";
    return "";
  }

  /// Parameters for activation `value` from the profile.
  ScaleZeroPoint profiledParams(const Value &value, const Node &node) const {
    if (options_.preset) {
      auto it = options_.preset->activations.find(value.name);
      if (it == options_.preset->activations.end())
        fatalInternal("pre-quantized model: no parameters for '" + value.name + "' (" +
                      node.describe() + ")");
      return it->second;
    }
    float min = 0, max = 0;
    if (!profiledRange(value, min, max))
      throw Error(ExitCode::BadInputFile,
                  profileName_ + ": no range recorded for tensor '" + value.name + "' (" +
                      node.describe() + "); record the profile again with the same model options");
    return chooseQuantParams(min, max, options_.schema);
  }

  static bool isInt8Activation(const Value *value) {
    return value && !value->isConstant() && value->type.dtype == DType::Int8 &&
           !value->type.quant.empty();
  }

  Value *quantized(Value *value, Node &reader) {
    auto it = quantized_.find(value);
    if (it != quantized_.end())
      return it->second;
    TensorType type{DType::Int8, value->type.shape, perTensor(profiledParams(*value, reader))};
    Node *node = graph_.insertNodeBefore(&reader, Op::Quantize, value->name + "_quantize", {value},
                                         {value->name + "_int8"});
    node->output()->type = type;
    node->output()->typeKnown = true;
    ++summary_.quantizeNodes;
    return quantized_[value] = node->output();
  }

  /// `before` == nullptr appends at the end of the execution order.
  Value *dequantized(Value *value, Node *before) {
    auto it = dequantized_.find(value);
    if (it != dequantized_.end())
      return it->second;
    Node *node = graph_.insertNodeBefore(before, Op::Dequantize, value->name + "_dequantize",
                                         {value}, {value->name + "_float"});
    node->output()->type = TensorType{DType::Float32, value->type.shape, {}};
    node->output()->typeKnown = true;
    ++summary_.dequantizeNodes;
    return dequantized_[value] = node->output();
  }

  void rewriteFloat(Node &node) {
    for (Value *&input : node.inputs)
      if (isInt8Activation(input))
        input = dequantized(input, &node);
    quantizeAsPreset(node);
  }

  /// A float node whose output the model quantizes (an op without an int8
  /// kernel between Q/DQ pairs): its output is rounded and saturated as the
  /// model's QuantizeLinear does (quantizeAsPreset).
  void quantizeAsPreset(Node &node) {
    if (!options_.preset || isViewOrTranspose(node.opType) || node.outputs.size() != 1 ||
        !node.output() || !options_.preset->activations.count(node.output()->name))
      return;
    std::vector<Node *> order = graph_.nodes(); // O(n), for the few such nodes
    auto at = std::find(order.begin(), order.end(), &node);
    quantizeAsPreset(node.output(),
                     (at == order.end() || at + 1 == order.end()) ? nullptr : *(at + 1));
  }

  /// A float `value` the model quantizes: a Quantize (before `next`) with
  /// the model's parameters computes it under its name, and its readers get
  /// that int8 value (float ones through a Dequantize), not the unrounded
  /// float. Graph inputs too: a float op reading one sees it as onnxruntime
  /// does, after its QuantizeLinear.
  void quantizeAsPreset(Value *value, Node *next) { quantizeAsPreset(value, next, false); }
  void quantizeInputAsPreset(Value *input, Node *first) { quantizeAsPreset(input, first, true); }
  void quantizeAsPreset(Value *value, Node *next, bool graphInput) {
    // A graph output moves to the Quantize (dequantized at the end, as any
    // int8 output); a graph input that is also an output stays as it is.
    if (!value || value->type.dtype != DType::Float32 || (graphInput && value->isGraphOutput))
      return;
    auto it = options_.preset->activations.find(value->name);
    if (it == options_.preset->activations.end())
      return;
    // A graph input keeps its name (the bundle's placeholder).
    const std::string name = value->name;
    if (!graphInput)
      graph_.renameValue(value, name + "_float");
    Node *quantize = graph_.insertNodeBefore(next, Op::Quantize, name + "_quantize", {value},
                                             {graphInput ? name + "_int8" : name});
    Value *q = quantize->output();
    q->type = TensorType{DType::Int8, value->type.shape, perTensor(it->second)};
    q->typeKnown = true;
    graph_.replaceAllUsesWith(value, q);
    quantize->inputs[0] = value;
    quantized_[value] = q;
    ++summary_.quantizeNodes;
  }

  /// The graph output keeps its name and stays float: the int8 value moves to
  /// `<name>_int8` and a Dequantize computes the output.
  void dequantizeGraphOutput(Value *value) {
    Value *output = dequantized(value, nullptr);
    std::vector<std::pair<Node *, size_t>> readers;
    for (Node *node : graph_.nodes())
      for (size_t i = 0; i < node->inputs.size(); ++i)
        if (node->inputs[i] == value)
          readers.push_back({node, i});
    graph_.replaceAllUsesWith(value, output); // moves the output slot
    for (auto &[node, index] : readers)
      node->inputs[index] = value;
    std::string name = value->name;
    graph_.renameValue(value, name + "_int8");
    graph_.renameValue(output, name);
  }

  /// Replaces constant operand `index` of `node` by `type`/`bytes`: in place
  /// when this node is its only reader (the weight keeps its name), else as a
  /// new constant.
  void replaceConstant(Node &node, size_t index, const TensorType &type,
                       std::vector<uint8_t> bytes) {
    Value *constant = node.inputs[index];
    if (graph_.users(constant).size() == 1 && !constant->isGraphOutput) {
      constant->type = type;
      constant->data = std::move(bytes);
      return;
    }
    node.inputs[index] = graph_.addConstant(constant->name + "_int8", type, std::move(bytes));
  }

  /// Quantizes weight operand `index` along `axis`: with the model's scales
  /// and zero points (a pre-quantized model's, asymmetric ones included),
  /// else symmetrically; returns the scale of each output channel (one entry
  /// when per tensor).
  std::vector<float> quantizeWeight(Node &node, size_t index, int axis) {
    // A weight several nodes read (an unrolled layer's steps) is quantized
    // once: the same values and axis give the same integers.
    const auto key = std::make_pair(static_cast<const Value *>(node.input(index)), axis);
    if (!options_.preset)
      if (auto it = weightCache_.find(key); it != weightCache_.end()) {
        node.inputs[index] = it->second.first;
        return it->second.second;
      }
    QuantizedConstant q =
        quantizeWeightValues(node, *node.input(index), axis, options_, summary_.warnings);
    std::vector<float> scales = q.type.quant.scales;
    replaceConstant(node, index, q.type, std::move(q.bytes));
    if (!options_.preset)
      weightCache_[key] = {node.inputs[index], scales};
    return scales;
  }

  /// Quantizes bias operand `index` (absent: nothing) to `channels` values.
  void quantizeBias(Node &node, size_t index, int64_t channels, float inputScale,
                    const std::vector<float> &weightScales) {
    const Value *bias = node.input(index);
    if (!bias)
      return;
    // Shared as the weights are (quantizeWeight), when the steps' input
    // scales agree (their roles' ranges make them agree).
    auto key = std::make_tuple(bias, inputScale, weightScales);
    if (!options_.preset)
      if (auto it = biasCache_.find(key); it != biasCache_.end()) {
        node.inputs[index] = it->second;
        return;
      }
    QuantizedConstant q = quantizeBiasValues(node, *bias, channels, inputScale, weightScales,
                                             options_, summary_.warnings);
    replaceConstant(node, index, q.type, std::move(q.bytes));
    if (!options_.preset)
      biasCache_[key] = node.inputs[index];
  }

  void rewriteInt8(Node &node) {
    for (size_t index : dataInputs(node)) {
      Value *input = node.inputs[index];
      if (const QuantParams *params = presetConstantParams(input))
        node.inputs[index] = int8Constant(input, *params);
      else if (input->type.dtype == DType::Float32)
        node.inputs[index] = quantized(input, node);
    }
    const Int8Def &int8 = int8Of(node);
    // The first activation operand (a Sub table's may be operand 1).
    const Value &x = *node.input(dataInputs(node).front());
    float inputScale = x.type.quant.scales.at(0);
    if (int8.weightAxis) { // Weights (operand 1) per channel, the bias (2) to match.
      const int axis = int8.weightAxis(node);
      int64_t channels = node.input(1)->type.shape[size_t(axis)];
      std::vector<float> weightScales = quantizeWeight(node, 1, axis);
      quantizeBias(node, 2, channels, inputScale, weightScales);
    }
    Value &output = *node.output();
    QuantParams params;
    if (reusesInputParams(node)) {
      params = x.type.quant;
      if (ownsPresetOutput(node))
        params = perTensor(options_.preset->activations.at(output.name));
    } else if (int8.fixedOutput) {
      params = perTensor({int8.outputScale, int8.outputZeroPoint});
    } else
      params = perTensor(profiledParams(output, node));
    output.type.dtype = DType::Int8;
    output.type.quant = params;
    if (reusesInputParams(node) || int8.fixedOutput)
      rescaleToPreset(node, output, params);
  }

  /// A pre-quantized ONNX model's output parameters that the int8 kernel
  /// writes itself (Int8Def::requantizes: the 2-D AveragePool).
  bool ownsPresetOutput(const Node &node) const {
    return options_.preset && options_.onnxArithmetic && int8Of(node).requantizes &&
           node.input(0)->type.rank() == 4 &&
           options_.preset->activations.count(node.output()->name);
  }

  /// The int8 output of a MaxPool, Relu or pooling carries its input's
  /// parameters (the kernels do not rescale), Softmax's are fixed (1/256 and
  /// -128: Int8Def::fixedOutput).
  /// When the model asked for others, a Rescale after `node` brings the
  /// value to them (it keeps the name; the kernel's output is
  /// `<name>_unscaled`), with a warning.
  void rescaleToPreset(Node &node, Value &output, const QuantParams &params) {
    if (!options_.preset || isViewOrTranspose(node.opType))
      return;
    auto it = options_.preset->activations.find(output.name);
    if (it == options_.preset->activations.end())
      return;
    const ScaleZeroPoint want = it->second;
    if (want.scale == params.scales.at(0) && want.zeroPoint == params.zeroPoints.at(0))
      return;
    summary_.warnings.push_back(node.describe() + ": the int8 kernel's output parameters are (" +
                                std::to_string(params.scales[0]) + ", " +
                                std::to_string(params.zeroPoints[0]) + "), the model's (" +
                                std::to_string(want.scale) + ", " + std::to_string(want.zeroPoint) +
                                "): requantized by a Rescale");
    std::vector<Node *> order = graph_.nodes();
    auto at = std::find(order.begin(), order.end(), &node);
    Node *next = (at == order.end() || at + 1 == order.end()) ? nullptr : *(at + 1);
    std::string name = output.name;
    graph_.renameValue(&output, name + "_unscaled");
    Node *rescale =
        graph_.insertNodeBefore(next, Op::Rescale, name + "_rescale", {&output}, {name});
    Value *rescaled = rescale->output();
    rescaled->type = TensorType{DType::Int8, output.type.shape, perTensor(want)};
    rescaled->typeKnown = true;
    graph_.replaceAllUsesWith(&output, rescaled);
    rescale->inputs[0] = &output;
  }

  Graph &graph_;
  const ProfileData &profile_;
  const QuantizationOptions &options_;
  std::string profileName_;
  std::set<const Node *> int8_;
  std::map<const Value *, Value *> quantized_, dequantized_;
  /// Graph inputs quantized once for the views that read them.
  std::set<const Value *> quantizedOnce_;
  std::map<std::string, std::pair<float, float>> roleRanges_;
  /// Values made by the quantizer's rewrites (a batched MatMul's row views)
  /// and the profiled value whose range each takes.
  std::map<std::string, std::string> rangeAliases_;
  std::map<std::pair<const Value *, int>, std::pair<Value *, std::vector<float>>> weightCache_;
  std::map<std::tuple<const Value *, float, std::vector<float>>, Value *> biasCache_;
  QuantizationSummary summary_;
};

} // namespace

bool isInt8CapableOp(const std::string &opType) { return int8RuleOf(opType) != Int8Rule::None; }

std::string opTypeForKindName(const std::string &name) {
  auto lower = [](std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    return text;
  };
  // Glow's node kinds are the op's own name in any case, or one of the
  // names its definition lists (OpDef::glowNames: "convolution" for Conv).
  const std::string key = lower(name);
  for (const std::string &op : OpRegistry::get().supportedOps()) {
    if (lower(op) == key)
      return op;
    for (const std::string &alias : OpRegistry::get().find(op)->glowNames)
      if (alias == key)
        return op;
  }
  return "";
}

std::string describeQuantization(const QuantizationSummary &summary) {
  size_t total = summary.int8Nodes + summary.floatNodes;
  return "quantized " + std::to_string(summary.int8Nodes) + " of " + std::to_string(total) +
         " nodes to int8 (" + std::to_string(summary.quantizeNodes) + " Quantize, " +
         std::to_string(summary.dequantizeNodes) + " Dequantize inserted)";
}

QuantizationSummary quantizeGraph(Graph &graph, const ProfileData &profile,
                                  const QuantizationOptions &options,
                                  const std::string &profileName) {
  return Quantizer(graph, profile, options, profileName).run();
}

} // namespace bundlefit
