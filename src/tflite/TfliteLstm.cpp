//===- TfliteLstm.cpp - UNIDIRECTIONAL_SEQUENCE_LSTM into the IR -----------===//
//
// TFLite's operand list (lstm_shared.h): 0 input; 1-4 input-to-gate
// weights i, f, c, o [cells, inputs]; 5-8 recurrent weights i, f, c, o
// [cells, outputs]; 9-11 peepholes; 12-15 biases i, f, c, o; 16-17
// projection; 18-19 the output and cell state (variable tensors, zero at
// the first Invoke); 20-23 layer-norm coefficients.
//
// The float variant without peepholes, projection, layer norm or CIFG is
// TFLM's float LSTM (gates sigmoid, cell and output tanh, the cell state
// clipped to +-cell_clip): one `TfliteLstm` node with float32 operands (the
// four gates stacked i, f, c, o; ops/recurrent/TfliteLstmFloat.cpp), whose
// kernel bf_lstm_f32 writes each step's hidden state straight into the
// output, as TFLM does.
//
// The int8 variant (int8 weights, int32 biases, int16 cell state) keeps
// TFLM's int16 gates, which no int8 expansion reproduces: it becomes one
// `TfliteLstm` node (ops/recurrent/TfliteLstmInt8.cpp) reading the stored
// integers stacked gate by gate (i, f, c, o) and writing the hidden states
// with the output state's quantization. The int16x8 variant (int16 input
// and output state, int8 weights, int64 biases) becomes the same node with
// int16 X and Y (TfliteInt16x8.cpp emits it). Every other variant is refused by
// name before any work (unsupportedLstmVariant, consulted with the list of
// unsupported ops). The bundle starts each inference from zero state, as a
// fresh TFLM interpreter does; TFLM's variable tensors carry state across
// Invokes.
//
//===----------------------------------------------------------------------===//
#include "TfliteOperators.h"

#include <cfloat>
#include <cmath>

namespace bundlefit::tflite_import {

namespace {

// Operand indices (TFLite's lstm_shared.h).
constexpr size_t kInput = 0;
constexpr size_t kInputWeights[4] = {1, 2, 3, 4};     // i, f, c, o
constexpr size_t kRecurrentWeights[4] = {5, 6, 7, 8}; // i, f, c, o
constexpr size_t kPeepholes[3] = {9, 10, 11};
constexpr size_t kBiases[4] = {12, 13, 14, 15}; // i, f, c, o
constexpr size_t kProjection[2] = {16, 17};
constexpr size_t kOutputState = 18;
constexpr size_t kCellState = 19;
constexpr size_t kFirstLayerNorm = 20;
constexpr size_t kLayerNormEnd = 24;

bool present(const tflite::Operator &op, size_t i) {
  const auto *list = op.inputs();
  return list && i < list->size() && list->Get(unsigned(i)) >= 0;
}

/// Gate operand i: a constant of `shape` (the variants stack four of them).
int32_t gateOperand(Converter &c, const tflite::Operator &op, size_t i, const Shape &shape) {
  const TfliteFile &file = c.file();
  if (!present(op, i))
    throw c.bad("has no input " + std::to_string(i));
  const int32_t t = op.inputs()->Get(unsigned(i));
  if (!c.isConstant(t))
    throw c.unsupported(file.describeTensor(t) + " must be a constant");
  if (file.shapeOf(t) != shape)
    throw c.bad(file.describeTensor(t) + " is " + shapeToString(file.shapeOf(t)) + "; expected " +
                shapeToString(shape));
  return t;
}

} // namespace

namespace {

/// The integer variants' operand types: "" or why they are refused. int8
/// (TFLM's 8x8->16 LSTM): int32 biases and an int8 output state; int16x8:
/// int64 biases and an int16 output state. Both: int8 weights, an int16
/// cell state.
std::string unsupportedIntegerLstm(const TfliteFile &file, const tflite::Operator &op, bool int16) {
  const std::string name =
      std::string("UNIDIRECTIONAL_SEQUENCE_LSTM ") + (int16 ? "int16x8" : "int8");
  const tflite::TensorType biasType = int16 ? tflite::TensorType_INT64 : tflite::TensorType_INT32;
  const tflite::TensorType hiddenType = int16 ? tflite::TensorType_INT16 : tflite::TensorType_INT8;
  auto typeOf = [&](size_t i) { return file.tensor(op.inputs()->Get(unsigned(i))).type(); };
  for (size_t i = 1; i < 9; ++i)
    if (present(op, i) && typeOf(i) != tflite::TensorType_INT8)
      return name + " with " + tflite::EnumNameTensorType(typeOf(i)) + " weights: not supported";
  for (size_t i : kBiases)
    if (present(op, i) && typeOf(i) != biasType)
      return name + " with " + tflite::EnumNameTensorType(typeOf(i)) + " biases: not supported";
  if (!present(op, kOutputState) || !present(op, kCellState))
    return name + " without its output and cell state tensors: not supported";
  if (typeOf(kOutputState) != hiddenType || typeOf(kCellState) != tflite::TensorType_INT16)
    return name + " with a " + tflite::EnumNameTensorType(typeOf(kOutputState)) +
           " output state and a " + tflite::EnumNameTensorType(typeOf(kCellState)) +
           " cell state (TFLM's " + tflite::EnumNameTensorType(hiddenType) +
           " and INT16): not supported";
  return "";
}

/// An integer variant's TfliteLstm operands and attributes
/// (ops/recurrent/TfliteLstmInt8.cpp); the int16x8 variant's biases are int64.
IntegerLstm integerLstm(Converter &c, const tflite::Operator &op,
                        const tflite::UnidirectionalSequenceLSTMOptions &options, int32_t x,
                        int32_t y, const Shape &xs, int64_t cells) {
  const TfliteFile &file = c.file();
  const bool int16 = file.tensor(x).type() == tflite::TensorType_INT16;
  auto operand = [&](size_t i) { return op.inputs()->Get(unsigned(i)); };
  const std::string base =
      file.tensor(y).name() ? file.tensor(y).name()->str() : "lstm_" + std::to_string(y);
  // The four gates' stored integers stacked [4, rows, columns] (sizes of
  // constants the file holds: no overflow), one scale per gate.
  auto stack = [&](const size_t(&indices)[4], const Shape &shape, DType dtype,
                   const std::string &name) {
    const size_t elementSize = dtype == DType::Int8 ? 1 : dtype == DType::Int32 ? 4 : 8;
    std::vector<uint8_t> bytes;
    QuantParams quant;
    quant.axis = 0;
    for (size_t g : indices) {
      const int32_t t = gateOperand(c, op, g, shape);
      // TFLM reads the weights' scales, not the biases' (they are at the
      // accumulator's scale by the converter's construction).
      const TensorInfo info = c.info(t);
      if (dtype == DType::Int8 &&
          (info.quant.scales.size() != 1 || info.quant.zeroPoints.at(0) != 0))
        throw c.unsupported(file.describeTensor(t) +
                            " must be quantized per tensor with zero point 0");
      const ByteSpan data = file.dataOf(t);
      if (data.size != size_t(numElements(shape)) * elementSize)
        throw c.bad(file.describeTensor(t) + " holds " + std::to_string(data.size) +
                    " bytes; its shape needs " +
                    std::to_string(size_t(numElements(shape)) * elementSize));
      bytes.insert(bytes.end(), data.data, data.data + data.size);
      if (dtype == DType::Int8) {
        quant.scales.push_back(info.quant.scales[0]);
        quant.zeroPoints.push_back(0);
      }
    }
    if (quant.scales.empty())
      quant.axis = -1;
    Shape stacked = {4};
    stacked.insert(stacked.end(), shape.begin(), shape.end());
    return c.graph().addConstant(base + name, TensorType{dtype, stacked, quant}, std::move(bytes));
  };
  Value *w = stack(kInputWeights, {cells, xs[2]}, DType::Int8, "_W");
  Value *r = stack(kRecurrentWeights, {cells, cells}, DType::Int8, "_R");
  Value *b = stack(kBiases, {cells}, int16 ? DType::Int64 : DType::Int32, "_B");

  // TFLM copies the output state into the output: the two must agree.
  const TensorInfo hidden = c.info(operand(kOutputState));
  const TensorInfo out = c.info(y);
  if (hidden.quant.scales.size() != 1 || out.quant.scales.size() != 1 ||
      hidden.quant.scales != out.quant.scales || hidden.quant.zeroPoints != out.quant.zeroPoints)
    throw c.unsupported(file.describeTensor(y) + " is not quantized as the output state " +
                        file.describeTensor(operand(kOutputState)));
  // The int16 cell state is the kernel's own (outside int16x8 models,
  // Converter::info refuses int16 tensors): its one scale, a power of two (TFLM's CheckedLog2).
  const int32_t cellState = operand(kCellState);
  const tflite::QuantizationParameters *q = file.tensor(cellState).quantization();
  const bool single = q && q->scale() && q->scale()->size() == 1 &&
                      (!q->zero_point() || q->zero_point()->size() <= 1);
  const float cellScale = single ? q->scale()->Get(0) : 0.0f;
  const int64_t cellZero =
      single && q->zero_point() && q->zero_point()->size() == 1 ? int64At(*q->zero_point(), 0) : 0;
  int power = 0;
  if (!single || cellZero != 0 || !(cellScale > 0.0f) || cellScale > FLT_MAX ||
      std::frexp(cellScale, &power) != 0.5f)
    throw c.unsupported(file.describeTensor(cellState) +
                        " must have one scale, a power of two, and zero point 0 (TFLM's rule)");

  Attributes attrs;
  attrs.setInt("time_major", options.time_major() ? 1 : 0);
  attrs.setFloat("cell_scale", cellScale);
  if (options.cell_clip() > 0.0f)
    attrs.setFloat("cell_clip", options.cell_clip());
  return {x, y, w, r, b, attrs};
}

} // namespace

std::string unsupportedLstmVariant(const TfliteFile &file, const tflite::Operator &op) {
  const std::string name = "UNIDIRECTIONAL_SEQUENCE_LSTM";
  if (!present(op, kInput))
    return ""; // the converter reports the missing operand as a bad file
  const tflite::TensorType inputType = file.tensor(op.inputs()->Get(kInput)).type();
  if (inputType != tflite::TensorType_FLOAT32 && inputType != tflite::TensorType_INT8 &&
      inputType != tflite::TensorType_INT16)
    return name + " with a " + tflite::EnumNameTensorType(inputType) + " input: not supported";
  const bool integer = inputType != tflite::TensorType_FLOAT32;
  const bool int16 = inputType == tflite::TensorType_INT16;
  const std::string variant = !integer ? name : int16 ? name + " int16x8" : name + " int8";
  if (!integer)
    for (size_t i = 1; i < 16; ++i)
      if (present(op, i) &&
          file.tensor(op.inputs()->Get(unsigned(i))).type() != tflite::TensorType_FLOAT32)
        return name + " hybrid (quantized weights, float input): not supported yet";
  if (!present(op, kInputWeights[0]) || !present(op, kRecurrentWeights[0]))
    return variant + " CIFG (no input gate): not supported yet";
  for (size_t i : kPeepholes)
    if (present(op, i))
      return variant + " with peephole weights: not supported yet";
  for (size_t i : kProjection)
    if (present(op, i))
      return variant + " with projection: not supported yet";
  for (size_t i = kFirstLayerNorm; i < kLayerNormEnd; ++i)
    if (present(op, i))
      return variant + " with layer normalization: not supported yet";
  if (const auto *o = op.builtin_options_as<tflite::UnidirectionalSequenceLSTMOptions>()) {
    if (!(o->cell_clip() >= 0.0f) || o->cell_clip() > FLT_MAX)
      return variant + " with cell_clip " + std::to_string(o->cell_clip()) + ": not supported";
    if (o->fused_activation_function() != tflite::ActivationFunctionType_TANH)
      return variant + " with fused activation " +
             tflite::EnumNameActivationFunctionType(o->fused_activation_function()) +
             " (only TANH): not supported yet";
    if (o->diagonal_recurrent_tensors())
      return variant + " with diagonal recurrent weights: not supported yet";
  }
  return integer ? unsupportedIntegerLstm(file, op, int16) : "";
}

namespace {

/// What both the float and the integer variants read first: the options,
/// input x [batch, time, inputs] (or time-major), output y and the cells.
struct LstmOperands {
  const tflite::UnidirectionalSequenceLSTMOptions *options;
  int32_t x, y;
  Shape xs;
  int64_t cells;
};

LstmOperands lstmOperands(Converter &c, const tflite::Operator &op) {
  const TfliteFile &file = c.file();
  const auto *options = op.builtin_options_as<tflite::UnidirectionalSequenceLSTMOptions>();
  if (!options)
    throw c.bad("has no UnidirectionalSequenceLSTMOptions");
  auto operand = [&](size_t i) {
    if (!present(op, i))
      throw c.bad("has no input " + std::to_string(i));
    return op.inputs()->Get(unsigned(i));
  };
  const int32_t x = operand(kInput);
  const int32_t y = op.outputs()->Get(0);
  const Shape xs = file.shapeOf(x);
  if (xs.size() != 3)
    throw c.unsupported(file.describeTensor(x) + " is " + shapeToString(xs) +
                        "; expected [batch, time, inputs] (or time-major)");
  const Shape r0 = file.shapeOf(operand(kRecurrentWeights[0]));
  if (r0.size() != 2)
    throw c.bad(file.describeTensor(operand(kRecurrentWeights[0])) + " is " + shapeToString(r0) +
                "; expected [cells, outputs]");
  const int64_t cells = r0[0];
  if (r0[1] != cells)
    throw c.bad("has " + std::to_string(cells) + " cells but " + std::to_string(r0[1]) +
                " outputs without a projection");
  const Shape ys = file.shapeOf(y);
  const Shape expected = {xs[0], xs[1], cells};
  if (ys != expected)
    throw c.bad(file.describeTensor(y) + " is " + shapeToString(ys) + "; the LSTM writes " +
                shapeToString(expected));
  return {options, x, y, xs, cells};
}

} // namespace

IntegerLstm integerLstm(Converter &c, const tflite::Operator &op) {
  const LstmOperands l = lstmOperands(c, op);
  return integerLstm(c, op, *l.options, l.x, l.y, l.xs, l.cells);
}

void convertSequenceLstm(Converter &c, const tflite::Operator &op) {
  const TfliteFile &file = c.file();
  const auto [options, x, y, xs, cells] = lstmOperands(c, op);
  if (file.tensor(x).type() == tflite::TensorType_INT8) {
    const IntegerLstm l = integerLstm(c, op, *options, x, y, xs, cells);
    c.emit(Op::TfliteLstm, {c.value(x), l.w, l.r, l.b}, l.attrs, y, false);
    return;
  }
  const std::string base =
      file.tensor(y).name() ? file.tensor(y).name()->str() : "lstm_" + std::to_string(y);
  // Stacks the four gates' float constants (i, f, c, o), each of `shape`
  // checked: [4, shape...] (its size is four constants' the file holds: no
  // overflow).
  auto stack = [&](const size_t(&indices)[4], const Shape &shape, const std::string &name) {
    std::vector<float> all;
    for (size_t g : indices) {
      const std::vector<float> part = c.constant(gateOperand(c, op, g, shape))->toFloats();
      all.insert(all.end(), part.begin(), part.end());
    }
    Shape stacked = {4};
    stacked.insert(stacked.end(), shape.begin(), shape.end());
    return c.floatConstant(base + name, all, stacked);
  };
  Value *w = stack(kInputWeights, {cells, xs[2]}, "_W");
  Value *r = stack(kRecurrentWeights, {cells, cells}, "_R");
  Value *b = stack(kBiases, {cells}, "_B");
  Attributes attrs;
  attrs.setInt("time_major", options->time_major() ? 1 : 0);
  if (options->cell_clip() > 0.0f)
    attrs.setFloat("cell_clip", options->cell_clip());
  c.emit(Op::TfliteLstm, {c.value(x), w, r, b}, attrs, y, false);
}

} // namespace bundlefit::tflite_import
