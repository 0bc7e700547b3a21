//===- ElementwiseOps.cpp - Arithmetic, activations and Cast ---------------===//
//
// Binary arithmetic (Add, Sub, Mul, Div, Pow, Mod), comparisons, logical ops,
// Where and the variadic Max/Min/Sum/Mean use numpy multidirectional
// broadcasting; PRelu broadcasts its slope unidirectionally
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
#include "elementwise/Elementwise.h"

#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/ShapeHelpers.h"

#include "bundlefit/ops/BroadcastShape.h"
#include "bundlefit/support/Error.h"

namespace bundlefit {

using shape_helpers::requireInput;
using shape_helpers::unsupported;
namespace {

void setOutput(Node &node, DType dtype, const Shape &shape) {
  Value *out = node.output(0);
  if (!out)
    unsupported(node, "has no output");
  out->type.dtype = dtype;
  out->type.shape = shape;
}

bool isNumeric(DType dtype) { return dtype != DType::Bool; }

/// Add, Sub, Mul, Div, Max, Min: all inputs share one dtype; shapes broadcast.
void inferBroadcastOp(Node &node) {
  if (node.inputs.empty())
    unsupported(node, "needs at least one input");
  const char *names[] = {"A", "B"};
  bool variadic =
      node.opType == "Max" || node.opType == "Min" || node.opType == "Sum" || node.opType == "Mean";
  if (!variadic && node.inputs.size() != 2)
    unsupported(node, "expects 2 inputs (A, B), got " + std::to_string(node.inputs.size()));
  const Value &first = requireInput(node, 0, variadic ? "data_0" : "A");
  DType dtype = first.type.dtype;
  if (!isNumeric(dtype))
    unsupported(node, std::string("input '") + first.name + "' has unsupported dtype " +
                          dtypeName(dtype));
  Shape shape = first.type.shape;
  // An int8 Sub with a float scalar constant is a table of its other operand
  // (src/ops/lut, GRU's 1 - z): the constant stays float.
  auto tableScalar = [&](const Value &v) {
    return node.opType == "Sub" && v.isConstant() && v.type.dtype == DType::Float32 &&
           v.type.numElements() == 1;
  };
  if (tableScalar(first) && node.inputs.size() == 2 && node.input(1) &&
      node.input(1)->type.dtype == DType::Int8)
    dtype = DType::Int8;
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    std::string inputName = variadic ? "data_" + std::to_string(i) : names[i];
    const Value &input = requireInput(node, i, inputName.c_str());
    if (input.type.dtype != dtype && !(dtype == DType::Int8 && tableScalar(input)))
      unsupported(node, "input '" + inputName + "' is " + input.type.str() + " but input '" +
                            (variadic ? "data_0" : "A") + "' is " + first.type.str() +
                            " (dtypes must match)");
    Shape next;
    if (!broadcastShapes(shape, input.type.shape, next))
      unsupported(node, "cannot broadcast input '" + inputName + "' " + input.type.str() +
                            " with " + shapeToString(shape));
    shape = next;
  }
  setOutput(node, dtype, shape);
}

void inferPRelu(Node &node) {
  const Value &x = requireInput(node, 0, "X");
  const Value &slope = requireInput(node, 1, "slope");
  if (slope.type.dtype != x.type.dtype)
    unsupported(node, "input 'slope' is " + slope.type.str() + " but 'X' is " + x.type.str());
  Shape shape;
  if (!broadcastShapes(x.type.shape, slope.type.shape, shape) || shape != x.type.shape)
    unsupported(node, "input 'slope' " + slope.type.str() +
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
      unsupported(node, std::string("input '") + names[i] + "' must be a scalar, got " +
                            bound->type.str());
    if (bound->type.dtype != x.type.dtype)
      unsupported(node, std::string("input '") + names[i] + "' is " + bound->type.str() +
                            " but 'input' is " + x.type.str());
  }
  setOutput(node, x.type.dtype, x.type.shape);
}

/// Reads Cast's `to`: an ONNX TensorProto::DataType number (FLOAT=1, UINT8=2,
/// INT8=3, INT32=6, INT64=7, BOOL=9) or, for hand-built graphs, a dtype name.
DType castTargetDType(const Node &node) {
  const Attribute *to = node.attrs.find("to");
  if (!to)
    unsupported(node, "missing attribute 'to'");
  if (to->kind == Attribute::Kind::String) {
    DType dtype;
    if (!parseDType(to->s, dtype))
      unsupported(node, "attribute 'to' names unsupported type '" + to->s + "'");
    return dtype;
  }
  switch (to->i) {
  case 1:
    return DType::Float32;
  case 2:
    return DType::UInt8;
  case 3:
    return DType::Int8;
  case 6:
    return DType::Int32;
  case 7:
    return DType::Int64;
  case 9:
    return DType::Bool;
  }
  unsupported(node, "attribute 'to' = " + std::to_string(to->i) +
                        " (ONNX data type) is not supported; bundlefit supports float32, "
                        "uint8, int8, int32, int64 and bool");
}

void inferCast(Node &node) {
  const Value &x = requireInput(node, 0, "input");
  setOutput(node, castTargetDType(node), x.type.shape);
}

/// The broadcast shape of every input of `node` (numpy rules).
Shape broadcastAll(const Node &node) {
  Shape shape;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Value &input = requireInput(node, i, ("input " + std::to_string(i)).c_str());
    Shape next;
    if (!broadcastShapes(shape, input.type.shape, next))
      unsupported(node, "cannot broadcast input '" + input.name + "' " + input.type.str() +
                            " with " + shapeToString(shape));
    shape = next;
  }
  return shape;
}

void requireInputCount(const Node &node, size_t count) {
  if (node.inputs.size() != count)
    unsupported(node, "expects " + std::to_string(count) + " inputs, got " +
                          std::to_string(node.inputs.size()));
}

/// Pow: X and Y broadcast; Y may have another numeric dtype; Y's dtype is X's.
void inferPow(Node &node) {
  requireInputCount(node, 2);
  const Value &x = requireInput(node, 0, "X");
  const Value &y = requireInput(node, 1, "Y");
  if (!isNumeric(x.type.dtype) || !isNumeric(y.type.dtype))
    unsupported(node, "inputs must be numeric");
  setOutput(node, x.type.dtype, broadcastAll(node));
}

/// Mod: integer remainder with the divisor's sign (fmod=0) or C's fmod
/// (fmod=1, required for float, as in ONNX).
void inferMod(Node &node) {
  inferBroadcastOp(node);
  if (node.input(0)->type.dtype == DType::Float32 && node.attrs.getInt("fmod", 0) == 0)
    unsupported(node, "float Mod needs fmod=1 (ONNX)");
}

/// Equal, Less, LessOrEqual, Greater, GreaterOrEqual: same dtype, bool output.
void inferCompare(Node &node) {
  requireInputCount(node, 2);
  const Value &a = requireInput(node, 0, "A");
  const Value &b = requireInput(node, 1, "B");
  if (a.type.dtype != b.type.dtype)
    unsupported(node, "input 'B' is " + b.type.str() + " but 'A' is " + a.type.str());
  if (a.type.dtype == DType::Bool && node.opType != "Equal")
    unsupported(node, "compares numbers, input 'A' is " + a.type.str());
  setOutput(node, DType::Bool, broadcastAll(node));
}

/// And, Or, Xor (two inputs) and Not (one): bool in, bool out.
void inferLogical(Node &node) {
  requireInputCount(node, node.opType == "Not" ? 1 : 2);
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Value &v = requireInput(node, i, i == 0 ? "A" : "B");
    if (v.type.dtype != DType::Bool)
      unsupported(node, "input '" + v.name + "' is " + v.type.str() + ", expected bool");
  }
  setOutput(node, DType::Bool, broadcastAll(node));
}

/// Where(condition, X, Y): condition bool, X and Y one dtype; all broadcast.
void inferWhere(Node &node) {
  requireInputCount(node, 3);
  const Value &c = requireInput(node, 0, "condition");
  const Value &x = requireInput(node, 1, "X");
  const Value &y = requireInput(node, 2, "Y");
  if (c.type.dtype != DType::Bool)
    unsupported(node, "input 'condition' is " + c.type.str() + ", expected bool");
  if (x.type.dtype != y.type.dtype)
    unsupported(node, "input 'Y' is " + y.type.str() + " but 'X' is " + x.type.str());
  setOutput(node, x.type.dtype, broadcastAll(node));
}

/// IsNaN, IsInf: float32 in, bool out.
void inferFloatTest(Node &node) {
  const Value &x = requireInput(node, 0, "X");
  if (x.type.dtype != DType::Float32)
    unsupported(node, "input 'X' is " + x.type.str() + "; only float32 is supported");
  setOutput(node, DType::Bool, x.type.shape);
}

uint64_t outputElements(const Node &node) {
  const Value *out = node.output(0);
  return out ? uint64_t(out->type.numElements()) : 0;
}

} // namespace

void registerElementwiseOps(OpRegistry &registry) {
  using namespace elementwise_interp;
  for (const char *op : {"Add", "Mul", "Sub", "Div", "Max", "Min", "Sum", "Mean"})
    registry.add({op, inferBroadcastOp, outputElements}).with(kOpElementwise).runs(binaryKernel);
  registry.add({"PRelu", inferPRelu, outputElements}).with(kOpElementwise).runs(preluKernel);
  registry.add({"Relu", inferUnary, outputElements}).with(kOpElementwise).runs(reluKernel);
  for (const char *op : {"LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Exp", "Sqrt"})
    registry.add({op, inferUnary, outputElements}).with(kOpElementwise).runs(floatUnaryKernel);
  registry.add({"Clip", inferClip, outputElements})
      .with(kOpElementwise)
      .parameters(kParametersFrom1)
      .runs(clipKernel);
  registry.add({"Cast", inferCast, outputElements}).with(kOpElementwise).runs(castKernel);
  registry.add({"Pow", inferPow, outputElements}).with(kOpElementwise).runs(powKernel);
  registry.add({"Mod", inferMod, outputElements}).with(kOpElementwise).runs(binaryKernel);
  for (const char *op : {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"})
    registry.add({op, inferCompare, outputElements}).with(kOpElementwise).runs(compareKernel);
  for (const char *op : {"And", "Or", "Xor", "Not"})
    registry.add({op, inferLogical, outputElements}).with(kOpElementwise).runs(logicalKernel);
  registry.add({"Where", inferWhere, outputElements}).with(kOpElementwise).runs(whereKernel);
  for (const char *op : {"IsNaN", "IsInf"})
    registry.add({op, inferFloatTest, outputElements}).with(kOpElementwise).runs(floatTestKernel);
  registerElementwiseLowering(registry);
}

} // namespace bundlefit
