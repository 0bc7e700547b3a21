//===- ElementwiseOps.cpp - Arithmetic, activations and Cast ---------------===//
//
// Binary arithmetic (Add, Sub, Mul, Div) and the variadic Max/Min use numpy
// multidirectional broadcasting; PRelu broadcasts its slope unidirectionally
// onto X. Unary activations keep their input's shape and dtype. Cast reads
// ONNX's `to` attribute (a TensorProto::DataType number, as in the model).
//
// Type inference sets only dtype and shape of the outputs: quantization
// parameters a pass attached to an output are left alone.
//
// MACs: every op here costs one "MAC" per output element (an elementwise op
// does one arithmetic step per element; the counts are for cost reports).
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ir/OpRegistry.h"

#include "BroadcastShape.h"
#include "bundlefit/support/Error.h"

namespace bundlefit {
namespace {

[[noreturn]] void fail(const Node &node, const std::string &message) {
  throw Error(ExitCode::Unsupported, node.describe() + ": " + message);
}

const Value &requireInput(const Node &node, size_t index, const char *name) {
  const Value *value = node.input(index);
  if (!value)
    fail(node, std::string("missing input '") + name + "'");
  return *value;
}

void setOutput(Node &node, DType dtype, const Shape &shape) {
  Value *out = node.output(0);
  if (!out)
    fail(node, "has no output");
  out->type.dtype = dtype;
  out->type.shape = shape;
}

bool isNumeric(DType dtype) { return dtype != DType::Bool; }

/// Add, Sub, Mul, Div, Max, Min: all inputs share one dtype; shapes broadcast.
void inferBroadcastOp(Node &node) {
  if (node.inputs.empty())
    fail(node, "needs at least one input");
  const char *names[] = {"A", "B"};
  bool variadic = node.opType == "Max" || node.opType == "Min";
  if (!variadic && node.inputs.size() != 2)
    fail(node, "expects 2 inputs (A, B), got " + std::to_string(node.inputs.size()));
  const Value &first = requireInput(node, 0, variadic ? "data_0" : "A");
  DType dtype = first.type.dtype;
  if (!isNumeric(dtype))
    fail(node, std::string("input '") + first.name + "' has unsupported dtype " +
                   dtypeName(dtype));
  Shape shape = first.type.shape;
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    std::string inputName = variadic ? "data_" + std::to_string(i) : names[i];
    const Value &input = requireInput(node, i, inputName.c_str());
    if (input.type.dtype != dtype)
      fail(node, "input '" + inputName + "' is " + input.type.str() + " but input '" +
                     (variadic ? "data_0" : "A") + "' is " + first.type.str() +
                     " (dtypes must match)");
    Shape next;
    if (!broadcastShapes(shape, input.type.shape, next))
      fail(node, "cannot broadcast input '" + inputName + "' " + input.type.str() +
                     " with " + shapeToString(shape));
    shape = next;
  }
  setOutput(node, dtype, shape);
}

void inferPRelu(Node &node) {
  const Value &x = requireInput(node, 0, "X");
  const Value &slope = requireInput(node, 1, "slope");
  if (slope.type.dtype != x.type.dtype)
    fail(node, "input 'slope' is " + slope.type.str() + " but 'X' is " + x.type.str());
  Shape shape;
  if (!broadcastShapes(x.type.shape, slope.type.shape, shape) || shape != x.type.shape)
    fail(node, "input 'slope' " + slope.type.str() +
                   " does not broadcast unidirectionally to 'X' " + x.type.str());
  setOutput(node, x.type.dtype, x.type.shape);
}

/// Relu, LeakyRelu, Sigmoid, Tanh, HardSigmoid, HardSwish, Exp, Sqrt.
void inferUnary(Node &node) {
  const Value &x = requireInput(node, 0, "X");
  setOutput(node, x.type.dtype, x.type.shape);
}

void inferClip(Node &node) {
  const Value &x = requireInput(node, 0, "input");
  const char *names[] = {"input", "min", "max"};
  for (size_t i = 1; i < 3; ++i) {
    const Value *bound = node.input(i);
    if (!bound)
      continue;
    if (bound->type.numElements() != 1)
      fail(node, std::string("input '") + names[i] + "' must be a scalar, got " +
                     bound->type.str());
    if (bound->type.dtype != x.type.dtype)
      fail(node, std::string("input '") + names[i] + "' is " + bound->type.str() +
                     " but 'input' is " + x.type.str());
  }
  setOutput(node, x.type.dtype, x.type.shape);
}

/// Reads Cast's `to`: an ONNX TensorProto::DataType number (FLOAT=1, UINT8=2,
/// INT8=3, INT32=6, INT64=7, BOOL=9) or, for hand-built graphs, a dtype name.
DType castTargetDType(const Node &node) {
  const Attribute *to = node.attrs.find("to");
  if (!to)
    fail(node, "missing attribute 'to'");
  if (to->kind == Attribute::Kind::String) {
    DType dtype;
    if (!parseDType(to->s, dtype))
      fail(node, "attribute 'to' names unsupported type '" + to->s + "'");
    return dtype;
  }
  switch (to->i) {
  case 1: return DType::Float32;
  case 2: return DType::UInt8;
  case 3: return DType::Int8;
  case 6: return DType::Int32;
  case 7: return DType::Int64;
  case 9: return DType::Bool;
  }
  fail(node, "attribute 'to' = " + std::to_string(to->i) +
                 " (ONNX data type) is not supported; bundlefit supports float32, "
                 "uint8, int8, int32, int64 and bool");
}

void inferCast(Node &node) {
  const Value &x = requireInput(node, 0, "input");
  setOutput(node, castTargetDType(node), x.type.shape);
}

uint64_t outputElements(const Node &node) {
  const Value *out = node.output(0);
  return out ? uint64_t(out->type.numElements()) : 0;
}

} // namespace

void registerElementwiseOps(OpRegistry &registry) {
  for (const char *op : {"Add", "Sub", "Mul", "Div", "Max", "Min"})
    registry.add({op, inferBroadcastOp, outputElements});
  registry.add({"PRelu", inferPRelu, outputElements});
  for (const char *op :
       {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Exp", "Sqrt"})
    registry.add({op, inferUnary, outputElements});
  registry.add({"Clip", inferClip, outputElements});
  registry.add({"Cast", inferCast, outputElements});
}

} // namespace bundlefit
