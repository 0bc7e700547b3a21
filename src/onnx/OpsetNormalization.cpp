//===- OpsetNormalization.cpp - Older opsets into the opset-13 form --------===//
//
// One function per rewritten operator; the list and its rationale are at the
// top of OnnxImporter.cpp. Every rewrite keeps the node's name, so
// diagnostics later still point at the node the user sees in Netron.
//
//===----------------------------------------------------------------------===//

#include "OpsetNormalization.h"

#include "bundlefit/support/Bytes.h"
#include "bundlefit/support/Error.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iterator>

namespace bundlefit {
namespace onnximport {

namespace {

/// The Reduce operators whose axes moved from attribute to operand in opset 18.
bool isReduce(Op op) {
  switch (op) {
  case Op::ReduceL1:
  case Op::ReduceL2:
  case Op::ReduceLogSum:
  case Op::ReduceLogSumExp:
  case Op::ReduceMax:
  case Op::ReduceMean:
  case Op::ReduceMin:
  case Op::ReduceProd:
  case Op::ReduceSum:
  case Op::ReduceSumSquare:
    return true;
  default:
    return false;
  }
}

template <typename T> std::vector<uint8_t> toBytes(const std::vector<T> &values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!values.empty())
    copyBytes(bytes.data(), values.data(), bytes.size());
  return bytes;
}

class Normalizer {
public:
  Normalizer(NodeDraft &node, const NormalizeContext &context)
      : node_(node), context_(context), attrs_(node.attrs) {}

  void run();

private:
  Error unsupported(const std::string &problem) const {
    return Error(ExitCode::Unsupported, context_.path + ": " + node_.describe() + ": " + problem);
  }

  /// A rank-1 int64 constant named after the node and operand.
  Value *int64Constant(const std::string &operand, const std::vector<int64_t> &values) {
    TensorType type{DType::Int64, {int64_t(values.size())}, {}};
    return context_.graph.addConstant(context_.freshValueName(node_.name + "_" + operand), type,
                                      toBytes(values));
  }
  Value *floatConstant(const std::string &operand, const std::vector<float> &values) {
    TensorType type{DType::Float32, {int64_t(values.size())}, {}};
    return context_.graph.addConstant(context_.freshValueName(node_.name + "_" + operand), type,
                                      toBytes(values));
  }
  /// A rank-0 float32 constant (Clip bounds, Pad's constant_value).
  Value *floatScalar(const std::string &operand, float value) {
    TensorType type{DType::Float32, {}, {}};
    return context_.graph.addConstant(context_.freshValueName(node_.name + "_" + operand), type,
                                      toBytes(std::vector<float>{value}));
  }
  void setInput(size_t index, Value *value) {
    if (node_.inputs.size() <= index)
      node_.inputs.resize(index + 1, nullptr);
    node_.inputs[index] = value;
  }
  /// Moves an INTS attribute into operand `index` as an int64 constant.
  void intsAttrToInput(const std::string &attr, size_t index) {
    if (!attrs_.has(attr))
      return;
    setInput(index, int64Constant(attr, attrs_.getInts(attr)));
    attrs_.erase(attr);
  }
  static bool isEmptyConstant(const Value *value) {
    return value && value->isConstant() && value->type.numElements() == 0;
  }
  /// Drops optional trailing outputs no one reads; `what` names them in the
  /// error if one is read after all.
  void dropUnusedOutputsFrom(size_t first, const std::string &what) {
    for (size_t i = first; i < node_.outputs.size(); ++i)
      if (!node_.outputs[i].empty() && context_.isUsed(node_.outputs[i]))
        throw unsupported("output '" + node_.outputs[i] + "' (" + what +
                          ") is used; bundlefit compiles inference only");
    if (node_.outputs.size() > first)
      node_.outputs.resize(first);
  }

  void legacyBroadcast();
  void clip();
  void squeezeOrUnsqueeze();
  void split();
  void pad();
  void slice();
  void upsample();
  void resize();
  void softmaxFamily();
  void dropout();
  void legacyPRelu();
  void batchNormalization();
  void maxPool();
  void reduceAxesOperand();
  void castSaturate();
  void linearQuant();
  void legacyReshape();
  void legacyCast();

  NodeDraft &node_;
  const NormalizeContext &context_;
  Attributes &attrs_;
};

void Normalizer::run() {
  // The ONNX spelling's identity (Op::Unknown for what bundlefit lacks,
  // which the importer reports once every node is read).
  const Op op = opFromName(node_.opType);
  const int64_t opset = context_.opset;
  attrs_.erase("consumed_inputs"); // Opset < 6: an in-place hint, no semantics.
  if (opset < 7 && attrs_.has("broadcast"))
    legacyBroadcast();
  if (op == Op::Concat && opset < 4)
    attrs_.setInt("axis", attrs_.getInt("axis", 1));
  if (op == Op::Tile && opset < 6)
    throw unsupported("Tile-1 (tiles and axis operands) is not supported; re-export the "
                      "model with opset 6 or newer");
  if (op == Op::Clip && opset < 11)
    clip();
  else if ((op == Op::Squeeze || op == Op::Unsqueeze) && opset < 13)
    squeezeOrUnsqueeze();
  else if (op == Op::Split && opset < 13)
    split();
  else if (op == Op::Pad && opset < 11)
    pad();
  else if (op == Op::Slice && opset < 10)
    slice();
  else if (op == Op::Upsample)
    upsample();
  else if (op == Op::Resize)
    resize();
  else if (op == Op::Softmax || op == Op::LogSoftmax || op == Op::Hardmax)
    softmaxFamily();
  else if (op == Op::Dropout)
    dropout();
  else if (op == Op::PRelu && opset < 7)
    legacyPRelu();
  else if (op == Op::BatchNormalization)
    batchNormalization();
  else if (op == Op::MaxPool)
    maxPool();
  else if ((op == Op::ReduceSum && opset >= 13) || (isReduce(op) && opset >= 18))
    reduceAxesOperand();
  else if (op == Op::Cast && opset >= 19)
    castSaturate();
  else if ((op == Op::QuantizeLinear || op == Op::DequantizeLinear) && opset >= 19)
    linearQuant();
  else if (op == Op::Reshape && opset < 5)
    legacyReshape();
  else if (op == Op::Cast && opset < 6)
    legacyCast();
  trimOmittedInputs(node_.inputs);
}

// Opset < 7 binary ops (and Gemm) broadcast only with broadcast=1, aligning
// B with A's dimensions from `axis` on (default: the trailing ones). That is
// numpy broadcasting when B lines up with A's trailing dimensions; a
// constant B aligned elsewhere is reshaped with trailing 1s so it does.
void Normalizer::legacyBroadcast() {
  const bool hasAxis = attrs_.has("axis");
  const int64_t axis = attrs_.getInt("axis", 0);
  attrs_.erase("broadcast");
  if (opFromName(node_.opType) == Op::Gemm || !hasAxis)
    return;
  attrs_.erase("axis");
  Value *a = node_.input(0);
  Value *b = node_.input(1);
  if (!a || !b || !a->typeKnown || !b->typeKnown)
    throw unsupported("opset-" + std::to_string(context_.opset) +
                      " broadcast with axis=" + std::to_string(axis) +
                      " needs the operands' ranks, unknown at import; re-export the "
                      "model with opset 7 or newer");
  const int64_t rankA = int64_t(a->type.rank());
  const int64_t rankB = int64_t(b->type.rank());
  const int64_t first = axis < 0 ? axis + rankA : axis;
  if (first < 0 || first + rankB > rankA)
    throw unsupported("broadcast axis " + std::to_string(axis) + " does not fit ranks " +
                      std::to_string(rankA) + " and " + std::to_string(rankB));
  if (first + rankB == rankA)
    return; // Already numpy-aligned.
  if (!b->isConstant())
    throw unsupported("opset-" + std::to_string(context_.opset) +
                      " broadcast of a non-constant operand along axis " + std::to_string(axis) +
                      "; re-export with opset 7 or newer");
  TensorType type = b->type;
  type.shape.resize(size_t(rankA - first), 1);
  node_.inputs[1] =
      context_.graph.addConstant(context_.freshValueName(b->name + "_broadcast"), type, b->data);
}

// Clip-6: attributes min/max (float) -> Clip-11+ operands 1 and 2.
void Normalizer::clip() {
  Value *x = node_.input(0);
  Value *min = attrs_.has("min") ? floatScalar("min", attrs_.getFloat("min", 0)) : nullptr;
  Value *max = attrs_.has("max") ? floatScalar("max", attrs_.getFloat("max", 0)) : nullptr;
  node_.inputs = {x, min, max};
  attrs_.erase("min");
  attrs_.erase("max");
}

// Squeeze-1/11, Unsqueeze-1/11: attribute axes -> operand 1 (int64).
void Normalizer::squeezeOrUnsqueeze() { intsAttrToInput("axes", 1); }

// Split-2/11: attribute split -> operand 1 (int64); axis stays.
void Normalizer::split() { intsAttrToInput("split", 1); }

// Pad-2: attributes pads, value -> operands 1 (int64) and 2 (float scalar);
// mode stays an attribute.
void Normalizer::pad() {
  if (attrs_.has("paddings") && !attrs_.has("pads")) { // Pad-1 spelling.
    attrs_.setInts("pads", attrs_.getInts("paddings"));
    attrs_.erase("paddings");
  }
  if (!attrs_.has("pads"))
    throw unsupported("has no 'pads' attribute");
  Value *x = node_.input(0);
  Value *pads = int64Constant("pads", attrs_.getInts("pads"));
  Value *value = nullptr;
  if (attrs_.getString("mode", "constant") == "constant")
    value = floatScalar("value", attrs_.getFloat("value", 0.0f));
  node_.inputs = {x, pads, value};
  attrs_.erase("pads");
  attrs_.erase("value");
}

// Slice-1: attributes starts, ends, axes -> operands 1, 2, 3 (int64).
void Normalizer::slice() {
  if (!attrs_.has("starts") || !attrs_.has("ends"))
    throw unsupported("needs 'starts' and 'ends' attributes");
  node_.inputs.resize(1);
  intsAttrToInput("starts", 1);
  intsAttrToInput("ends", 2);
  intsAttrToInput("axes", 3);
}

// Upsample-7 (attribute scales), -9/-10 (operand scales), and Upsample-1's
// height_scale/width_scale -> Resize(X, roi=omitted, scales) with
// coordinate_transformation_mode="asymmetric", nearest_mode="floor" (what
// Upsample computes); mode "bilinear" (Upsample-1) is spelled "linear".
void Normalizer::upsample() {
  Value *x = node_.input(0);
  Value *scales = node_.input(1);
  if (attrs_.has("scales")) {
    scales = floatConstant("scales", attrs_.getFloats("scales"));
  } else if (attrs_.has("height_scale") || attrs_.has("width_scale")) {
    scales = floatConstant("scales", {1.0f, 1.0f, attrs_.getFloat("height_scale", 1.0f),
                                      attrs_.getFloat("width_scale", 1.0f)});
  }
  if (!scales)
    throw unsupported("has no scales");
  std::string mode = attrs_.getString("mode", "nearest");
  if (mode == "bilinear")
    mode = "linear";
  node_.opType = opName(Op::Resize);
  node_.inputs = {x, nullptr, scales};
  node_.attrs = Attributes();
  attrs_.setString("mode", mode);
  attrs_.setString("coordinate_transformation_mode", "asymmetric");
  attrs_.setString("nearest_mode", "floor");
}

// Resize-10 (X, scales) -> Resize(X, roi=omitted, scales) with the opset-10
// semantics made explicit: coordinate_transformation_mode="asymmetric",
// nearest_mode="floor". Resize-11/12 must pass roi and scales even when
// unused; empty constants there become omitted operands.
void Normalizer::resize() {
  if (context_.opset < 11) {
    node_.inputs = {node_.input(0), nullptr, node_.input(1)};
    attrs_.setString("coordinate_transformation_mode", "asymmetric");
    attrs_.setString("nearest_mode", "floor");
    return;
  }
  for (size_t index : {size_t(1), size_t(2)})
    if (isEmptyConstant(node_.input(index)))
      node_.inputs[index] = nullptr;
}

// Softmax/LogSoftmax/Hardmax: the axis is always explicit (default 1 before
// opset 13, -1 from 13); before 13 they normalise over the flattened
// dimensions [axis, rank): attribute coerce_to_2d=1 (OpRegistry.h).
void Normalizer::softmaxFamily() {
  if (context_.opset < 13) {
    attrs_.setInt("axis", attrs_.getInt("axis", 1));
    attrs_.setInt("coerce_to_2d", 1);
  } else {
    attrs_.setInt("axis", attrs_.getInt("axis", -1));
  }
}

// Dropout: inference only. Operands ratio/training_mode and attributes
// ratio/is_test/seed go; the mask output goes when unused.
void Normalizer::dropout() {
  // Dropout-12+: operand 2 training_mode. True (or unknown at compile time)
  // means random masking, unless the ratio is a constant 0.
  if (const Value *trainingMode = node_.input(2)) {
    const Value *ratio = node_.input(1);
    bool zeroRatio = ratio && ratio->isConstant() && ratio->type.numElements() == 1 &&
                     ratio->elementAsDouble(0) == 0.0;
    if (!trainingMode->isConstant())
      throw unsupported("operand training_mode is not a constant; bundlefit compiles "
                        "inference only");
    bool training = trainingMode->type.numElements() > 0 && trainingMode->elementAsDouble(0) != 0;
    if (training && !zeroRatio)
      throw unsupported("training_mode=1 is not supported; bundlefit compiles inference only");
  }
  node_.inputs.resize(std::min<size_t>(node_.inputs.size(), 1));
  attrs_.erase("ratio");
  attrs_.erase("is_test");
  attrs_.erase("seed");
  dropUnusedOutputsFrom(1, "the dropout mask");
}

// PRelu-6: the slope is per channel (axis 1) when it has C = X.shape[1]
// elements; PRelu-7+ broadcasts it numpy-style (unidirectionally) instead,
// so a constant 1-D slope [C] becomes [C,1,...,1].
void Normalizer::legacyPRelu() {
  Value *x = node_.input(0);
  Value *slope = node_.input(1);
  if (!x || !slope || !slope->typeKnown || slope->type.rank() != 1 ||
      slope->type.numElements() <= 1)
    return;
  if (!x->typeKnown)
    throw unsupported("opset-6 per-channel slope needs the input's rank, unknown at import; "
                      "re-export the model with opset 7 or newer");
  const int64_t rank = int64_t(x->type.rank());
  if (rank <= 2 || x->type.shape[1] != slope->type.numElements())
    return; // Already numpy-aligned, or left to type inference to reject.
  if (!slope->isConstant())
    throw unsupported("opset-6 per-channel slope that is not a constant; re-export the model "
                      "with opset 7 or newer");
  TensorType type = slope->type;
  type.shape.resize(size_t(rank - 1), 1);
  node_.inputs[1] = context_.graph.addConstant(
      context_.freshValueName(slope->name + "_per_channel"), type, slope->data);
}

// BatchNormalization: inference only. spatial=1 (the default), is_test and
// consumed_inputs are dropped; spatial=0 and training_mode=1 are rejected;
// the running/saved statistics outputs go when unused.
void Normalizer::batchNormalization() {
  if (attrs_.getInt("spatial", 1) == 0)
    throw unsupported("spatial=0 (per-activation statistics) is not supported");
  if (attrs_.getInt("training_mode", 0) != 0)
    throw unsupported("training_mode=1 is not supported; bundlefit compiles inference only");
  for (const char *legacy : {"spatial", "is_test", "consumed_inputs", "training_mode"})
    attrs_.erase(legacy);
  dropUnusedOutputsFrom(1, "training statistics");
}

// MaxPool-8+: the optional Indices output goes when unused.
void Normalizer::maxPool() {
  if (node_.outputs.size() > 1 && (node_.outputs[1].empty() || !context_.isUsed(node_.outputs[1])))
    node_.outputs.resize(1);
}

// ReduceSum-13 and every Reduce op from opset 18 take axes as operand 1;
// the IR keeps them in attribute `axes` (the opset < 18 form) when they are
// constant.
void Normalizer::reduceAxesOperand() {
  Value *axes = node_.input(1);
  if (axes && !axes->isConstant())
    return; // Left as an operand for constant folding to settle.
  // Empty axes keep their opset-13 meaning through noop_with_empty_axes.
  if (axes && axes->type.numElements() > 0)
    attrs_.setInts("axes", axes->toInts());
  node_.inputs.resize(1);
}

// Cast-19: `saturate` only concerns float8 targets, which bundlefit does not
// compute in (such a Cast is refused by its type).
void Normalizer::castSaturate() { attrs_.erase("saturate"); }

// QuantizeLinear-19/21, DequantizeLinear-21: `saturate` (float8 only) goes;
// blocked quantization (block_size, 21) is refused; QuantizeLinear-21's
// output_dtype without a zero point becomes a zero zero point of that type.
void Normalizer::linearQuant() {
  attrs_.erase("saturate");
  if (attrs_.getInt("block_size", 0) != 0)
    throw unsupported("block_size=" + std::to_string(attrs_.getInt("block_size", 0)) +
                      " (blocked quantization, opset 21) is not supported; quantize per tensor "
                      "or per axis");
  attrs_.erase("block_size");
  if (!attrs_.has("output_dtype"))
    return;
  const int64_t code = attrs_.getInt("output_dtype", 0);
  attrs_.erase("output_dtype");
  if (code == 0)
    return;
  if (code != 2 && code != 3) // UINT8, INT8
    throw unsupported("output_dtype=" + std::to_string(code) +
                      " (ONNX data type) is not supported; bundlefit quantizes to int8 or uint8");
  if (node_.input(2))
    return; // The zero point's type rules (ONNX requires them to agree).
  TensorType type{code == 3 ? DType::Int8 : DType::UInt8, {}, {}};
  setInput(2, context_.graph.addConstant(context_.freshValueName(node_.name + "_zero_point"), type,
                                         std::vector<uint8_t>(1, 0)));
}

// Reshape-1: attribute shape -> int64 operand 1.
void Normalizer::legacyReshape() {
  if (!attrs_.has("shape"))
    return;
  node_.inputs.resize(1);
  intsAttrToInput("shape", 1);
}

// Cast-1: attribute `to` is a type name ("FLOAT"); from opset 6 it is the
// ONNX TensorProto data type number, which the IR keeps.
void Normalizer::legacyCast() {
  const Attribute *to = attrs_.find("to");
  if (!to || to->kind != Attribute::Kind::String)
    return;
  static const char *const kTypeNames[] = {"UNDEFINED", "FLOAT",  "UINT8",  "INT8",   "UINT16",
                                           "INT16",     "INT32",  "INT64",  "STRING", "BOOL",
                                           "FLOAT16",   "DOUBLE", "UINT32", "UINT64"};
  std::string name = to->s;
  for (char &c : name)
    c = char(std::toupper(static_cast<unsigned char>(c)));
  for (int64_t code = 1; code < int64_t(std::size(kTypeNames)); ++code)
    if (name == kTypeNames[code]) {
      attrs_.setInt("to", code);
      return;
    }
  throw unsupported("unknown cast target type '" + to->s + "'");
}

} // namespace

void trimOmittedInputs(std::vector<Value *> &inputs) {
  while (!inputs.empty() && !inputs.back())
    inputs.pop_back();
}

void normalizeNode(NodeDraft &node, const NormalizeContext &context) {
  Normalizer(node, context).run();
}

} // namespace onnximport
} // namespace bundlefit
