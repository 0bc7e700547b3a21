//===- RecurrentOps.cpp - LSTM, GRU, RNN: shapes and the modes supported ---===//
//
// The recurrent layers of keyword-spotting and sensor models. None has a
// kernel: passes/ExpandRecurrent.cpp unrolls each over its (static) sequence
// into MatMul, Add, Sigmoid, Tanh, Mul and Slice nodes, which every engine
// (interpreter, float and int8 bundles) already runs. Inference here checks
// the operands and the modes that expansion handles:
//   X [S, B, I] (layout 0) or [B, S, I] (layout 1); W [D, G*H, I];
//   R [D, G*H, H]; G = 4 (LSTM, gates iofc), 3 (GRU, zrh), 1 (RNN);
//   D = 2 for direction "bidirectional", else 1.
//   Outputs Y [S, D, B, H] (layout 1: [B, S, D, H]), Y_h and LSTM's Y_c
//   [D, B, H] (layout 1: [B, D, H]).
// The default activations only (Sigmoid/Tanh), no clip, no input_forget.
// (TFLite's LSTMs, cell_clip included, are TfliteLstm nodes: TfliteLstm.h.)
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/OpRegistry.h"

#include "bundlefit/ops/ShapeHelpers.h"
#include "bundlefit/support/CheckedMath.h"
#include "recurrent/TfliteLstm.h"

#include <optional>

namespace bundlefit {

using namespace shape_helpers;

namespace {

int64_t gateCount(const Node &node) {
  return node.opType == "LSTM" ? 4 : node.opType == "GRU" ? 3 : 1;
}

/// The activations ONNX uses when the attribute is absent, per direction.
std::vector<std::string> defaultActivations(const Node &node) {
  if (node.opType == "LSTM")
    return {"Sigmoid", "Tanh", "Tanh"};
  if (node.opType == "GRU")
    return {"Sigmoid", "Tanh"};
  return {"Tanh"};
}

void checkSupportedModes(const Node &node, int64_t directions) {
  // cell_clip is not ONNX's (TFLite's LSTMs are TfliteLstm nodes): refused,
  // not ignored, in a model that carries it.
  for (const char *name : {"clip", "cell_clip", "activation_alpha", "activation_beta"})
    if (node.attrs.has(name))
      unsupported(node, std::string("attribute '") + name + "' is not supported");
  if (node.attrs.getInt("input_forget", 0) != 0)
    unsupported(node, "attribute 'input_forget' = 1 is not supported");
  if (const Attribute *given = node.attrs.find("activations")) {
    std::vector<std::string> expected;
    for (int64_t d = 0; d < directions; ++d)
      for (const std::string &name : defaultActivations(node))
        expected.push_back(name);
    if (given->strings != expected)
      unsupported(node, "attribute 'activations' other than the defaults is not supported");
  }
}

int64_t directionCount(const Node &node) {
  std::string direction = node.attrs.getString("direction", "forward");
  if (direction == "forward" || direction == "reverse")
    return 1;
  if (direction == "bidirectional")
    return 2;
  unsupported(node, "attribute 'direction' is '" + direction +
                        "', not forward, reverse or bidirectional");
}

void requireShape(const Node &node, const Value &value, const char *what, const Shape &expected) {
  if (value.type.shape != expected)
    unsupported(node, std::string("input '") + what + "' is " + value.type.str() + ", expected " +
                          shapeToString(expected));
}

void inferRecurrent(Node &node) {
  const Value &x = requireInput(node, 0, "X");
  const Value &w = requireInput(node, 1, "W");
  const Value &r = requireInput(node, 2, "R");
  if (x.type.dtype != DType::Float32 || w.type.dtype != DType::Float32 ||
      r.type.dtype != DType::Float32)
    unsupported(node, "inputs X, W and R must be float32");
  if (x.type.rank() != 3 || r.type.rank() != 3)
    unsupported(node,
                "inputs X and R must have rank 3, got " + x.type.str() + " and " + r.type.str());
  const int64_t layout = node.attrs.getInt("layout", 0);
  if (layout != 0 && layout != 1)
    unsupported(node, "attribute 'layout' must be 0 or 1");
  const int64_t directions = directionCount(node);
  checkSupportedModes(node, directions);
  const int64_t gates = gateCount(node);
  const int64_t hidden = r.type.shape[2];
  if (hidden <= 0 || node.attrs.getInt("hidden_size", hidden) != hidden)
    unsupported(node, "attribute 'hidden_size' does not match R " + r.type.str());
  const int64_t seq = x.type.shape[layout == 0 ? 0 : 1];
  const int64_t batch = x.type.shape[layout == 0 ? 1 : 0];
  const int64_t inputSize = x.type.shape[2];
  if (seq <= 0 || batch <= 0 || inputSize <= 0)
    unsupported(node, "input 'X' " + x.type.str() + " has an empty dimension");
  // The sizes below are products of model dimensions: checked, as every
  // size computed from an input is.
  auto product = [&](int64_t a, int64_t b) {
    std::optional<int64_t> value = checkedMul(a, b);
    if (!value)
      unsupported(node, "sizes overflow int64");
    return *value;
  };
  const int64_t gateRows = product(gates, hidden);
  requireShape(node, w, "W", {directions, gateRows, inputSize});
  requireShape(node, r, "R", {directions, gateRows, hidden});
  if (const Value *b = node.input(3))
    requireShape(node, *b, "B", {directions, product(2, gateRows)});
  if (const Value *lengths = node.input(4)) {
    if (lengths->type.dtype != DType::Int32 && lengths->type.dtype != DType::Int64)
      unsupported(node, "input 'sequence_lens' must be int32 or int64");
    requireShape(node, *lengths, "sequence_lens", {batch});
  }
  const Shape state =
      layout == 0 ? Shape{directions, batch, hidden} : Shape{batch, directions, hidden};
  for (size_t i : {size_t(5), size_t(6)})
    if (const Value *initial = node.input(i))
      if (i == 5 || node.opType == "LSTM")
        requireShape(node, *initial, i == 5 ? "initial_h" : "initial_c", state);
  if (node.opType == "LSTM")
    if (const Value *peepholes = node.input(7))
      requireShape(node, *peepholes, "P", {directions, product(3, hidden)});
  if (node.inputs.size() > (node.opType == "LSTM" ? 8u : 6u))
    unsupported(node, "has more inputs than " + node.opType + " takes");

  const Shape y =
      layout == 0 ? Shape{seq, directions, batch, hidden} : Shape{batch, seq, directions, hidden};
  const size_t outputs = node.opType == "LSTM" ? 3 : 2;
  if (node.outputs.size() > outputs)
    unsupported(node, "has more outputs than " + node.opType + " writes");
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (Value *out = node.output(i))
      setDTypeAndShape(*out, DType::Float32, i == 0 ? y : state);
}

/// Per step and direction: the input and recurrent products of every gate.
uint64_t recurrentMacs(const Node &node) {
  const Value *x = node.input(0), *r = node.input(2);
  if (!x || !r || x->type.rank() != 3 || r->type.rank() != 3)
    return 0;
  return macProduct(node, {uint64_t(x->type.shape[0]), uint64_t(x->type.shape[1]),
                           uint64_t(r->type.shape[0]), uint64_t(r->type.shape[1]),
                           uint64_t(x->type.shape[2]) + uint64_t(r->type.shape[2])});
}

} // namespace

void registerRecurrentOps(OpRegistry &registry) {
  for (const char *op : {"LSTM", "GRU", "RNN"})
    registry.add({op, inferRecurrent, recurrentMacs});
  registerTfliteLstm(registry);
}

} // namespace bundlefit
