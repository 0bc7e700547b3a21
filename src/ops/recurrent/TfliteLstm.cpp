//===- TfliteLstm.cpp - TFLite's UNIDIRECTIONAL_SEQUENCE_LSTM as one node ---===//
//
// `TfliteLstm`: a UNIDIRECTIONAL_SEQUENCE_LSTM as the TFLite importer writes
// it (tflite/TfliteLstm.cpp), one node with one kernel instead of an
// expansion:
//   X [B, T, I] (time_major: [T, B, I]), the activation;
//   W [4, H, I] and R [4, H, H]: gates i, f, c, o; B [4, H]: the biases;
//   attributes time_major, cell_scale (integer variants), cell_clip (0: none);
//   Y [B, T, H] like X: the hidden state of every step.
// Here: the operands, shape inference, MACs and the kernel scratch (the cell
// state) of every variant. Its kernels: TfliteLstmFloat.cpp (float32
// operands, bf_lstm_f32), TfliteLstmInt8.cpp (int8 and int16x8, bf_lstm_s8
// and bf_lstm_s16); its references: TfliteLstmReference.cpp.
//
//===----------------------------------------------------------------------===//
#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/ops/ShapeHelpers.h"

#include "recurrent/TfliteLstm.h"

namespace bundlefit {

using namespace shape_helpers;

TfliteLstmGeometry tfliteLstmGeometry(const Node &node) {
  const Value &x = requireInput(node, 0, "X");
  const Value &w = requireInput(node, 1, "W");
  const Value &r = requireInput(node, 2, "R");
  const Value &b = requireInput(node, 3, "B");
  if (x.type.rank() != 3 || r.type.rank() != 3)
    unsupported(node, "X and R must have rank 3, got " + x.type.str() + " and " + r.type.str());
  TfliteLstmGeometry g;
  g.timeMajor = node.attrs.getInt("time_major", 0) != 0;
  g.steps = x.type.shape[g.timeMajor ? 0 : 1];
  g.batch = x.type.shape[g.timeMajor ? 1 : 0];
  g.inputs = x.type.shape[2];
  g.cells = r.type.shape[1];
  if (g.steps <= 0 || g.batch <= 0 || g.inputs <= 0 || g.cells <= 0)
    unsupported(node, "X " + x.type.str() + " or R " + r.type.str() + " has an empty dimension");
  // The kernel's indices are below B * T * max(I, H) and 4 * H * max(I, H).
  constexpr int64_t kDimLimit = int64_t(1) << 20;
  if (g.batch > kDimLimit || g.steps > kDimLimit || g.inputs > kDimLimit || g.cells > kDimLimit ||
      g.batch * g.steps * std::max(g.inputs, g.cells) > INT32_MAX ||
      4 * g.cells * std::max(g.inputs, g.cells) > INT32_MAX)
    unsupported(node, "sizes beyond int32");
  if (w.type.dtype == DType::Float32) { // TFLite's float LSTM
    if (x.type.dtype != DType::Float32 || r.type.dtype != DType::Float32 ||
        b.type.dtype != DType::Float32)
      unsupported(node, "float32 W needs float32 X, R and B");
  } else {
    // int64 biases with int16 activations (TFLite's int16x8), int32 otherwise.
    const DType bias = x.type.dtype == DType::Int16 ? DType::Int64 : DType::Int32;
    if (w.type.dtype != DType::Int8 || r.type.dtype != DType::Int8 || b.type.dtype != bias)
      unsupported(node, std::string("W and R must be int8 (or all float32), B ") +
                            (bias == DType::Int64 ? "int64 (int16 X)" : "int32"));
  }
  if (w.type.shape != Shape{4, g.cells, g.inputs} || r.type.shape != Shape{4, g.cells, g.cells} ||
      b.type.shape != Shape{4, g.cells})
    unsupported(node, "W " + w.type.str() + ", R " + r.type.str() + ", B " + b.type.str() +
                          " do not match " + std::to_string(g.cells) + " cells of " +
                          std::to_string(g.inputs) + " inputs");
  return g;
}

namespace {

void inferTfliteLstm(Node &node) {
  const TfliteLstmGeometry g = tfliteLstmGeometry(node);
  const DType dtype = node.input(0)->type.dtype;
  if (dtype != DType::Float32 && dtype != DType::Int8 && dtype != DType::Int16)
    unsupported(node, "X must be float32 (dequantized int8), int8 or int16");
  requireSingleOutput(node, "Y");
  const Shape y = g.timeMajor ? Shape{g.steps, g.batch, g.cells} : Shape{g.batch, g.steps, g.cells};
  setDTypeAndShape(*node.output(0), dtype, y);
}

uint64_t tfliteLstmMacs(const Node &node) {
  const Value *x = node.input(0), *r = node.input(2);
  if (!x || !r || x->type.rank() != 3 || r->type.rank() != 3)
    return 0;
  return macProduct(node, {uint64_t(x->type.shape[0]), uint64_t(x->type.shape[1]), 4,
                           uint64_t(r->type.shape[1]),
                           uint64_t(x->type.shape[2]) + uint64_t(r->type.shape[2])});
}

} // namespace

uint64_t tfliteLstmScratchBytes(const Node &node) {
  const TfliteLstmGeometry g = tfliteLstmGeometry(node);
  // The cell state: int16, or float in the float LSTM.
  const bool isFloat = node.input(1)->type.dtype == DType::Float32;
  return uint64_t(g.batch * g.cells) * (isFloat ? sizeof(float) : sizeof(int16_t));
}

void registerTfliteLstm(OpRegistry &registry) {
  OpDef &def = registry.add({kTfliteLstmOp, inferTfliteLstm, tfliteLstmMacs}).runs(tfliteLstmFloat);
  addTfliteLstmFloatKernel(def);
}

} // namespace bundlefit
