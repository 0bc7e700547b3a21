//===- TfliteInt16x8.cpp - int16x8 models: int16 activations, int8 weights ===//
//
// TFLite's int16x8 quantization (int16 activations, symmetric int8 weights,
// int64 biases) has no Q/DQ form the int8 quantizer could take: the
// activations are int16 and TFLM's int16 kernels round their own way. Such a
// model is imported as integers directly, in the file's NHWC layout: every
// value carries the file's type (int16, int8, int64) and quantization, data
// movement becomes the IR's own byte-moving operators (Slice, Pad, Reshape)
// and arithmetic becomes the int16x8 operators of ops/int16x8 (TFLM's
// reference arithmetic, one kernel each).
//
// A model is int16x8 when one of its inputs or outputs is int16. Its
// operators are checked against this file's table before any is converted;
// the rest are refused by name.
//
//===----------------------------------------------------------------------===//
#include "TfliteInt16x8.h"

#include "TfliteOperators.h"

#include "bundlefit/ops/OpRegistry.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace bundlefit::tflite_import {

namespace {

class Int16x8Importer {
public:
  Int16x8Importer(const TfliteFile &file, Graph &graph)
      : file_(file), graph_(graph), c_(file, graph, /*int16x8=*/true) {}

  void run() {
    addInputs();
    const auto *ops = file_.subgraph().operators();
    for (size_t i = 0; ops && i < ops->size(); ++i) {
      const tflite::Operator &op = *ops->Get(unsigned(i));
      c_.setOperator(i);
      convert(op, file_.builtinCodeOf(op));
    }
    c_.clearOperator();
    c_.markGraphOutputs();
  }

  Converter &converter() { return c_; }

private:
  std::string nameOf(int32_t t) const {
    const tflite::Tensor &tensor = file_.tensor(t);
    std::string name = tensor.name() ? tensor.name()->str() : "";
    return name.empty() ? "tensor_" + std::to_string(t) : name;
  }

  void addInputs() {
    for (int32_t t : *file_.subgraph().inputs()) {
      if (c_.isConstant(t))
        throw file_.bad(file_.describeTensor(t) + " is a subgraph input and has constant data");
      TensorInfo ti = c_.info(t);
      // int32: TRANSPOSE_CONV's output_shape given as an input.
      if (ti.fileType != tflite::TensorType_INT16 && ti.fileType != tflite::TensorType_INT32)
        throw file_.unsupported(file_.describeTensor(t) +
                                ": an int16x8 model's inputs must be "
                                "int16 or int32, not " +
                                tflite::EnumNameTensorType(ti.fileType));
      const DType dtype = ti.fileType == tflite::TensorType_INT16 ? DType::Int16 : DType::Int32;
      if (dtype == DType::Int16)
        checkActivation(t, ti);
      c_.alias(t, graph_.addInput(nameOf(t), TensorType{dtype, ti.shape, ti.quant}), false);
    }
  }

  /// One scale, zero point 0: what TFLM's int16 kernels require.
  void checkActivation(int32_t t, const TensorInfo &ti) const {
    if (ti.quant.scales.size() != 1 || ti.quant.zeroPoints[0] != 0)
      throw c_.unsupported(file_.describeTensor(t) +
                           ": int16 activations need one scale and zero point 0");
  }

  /// Tensor `t` as the IR holds it: computed, an input, or a constant with
  /// its stored integers and quantization.
  Value *value(int32_t t) {
    if (!c_.isConstant(t))
      return c_.value(t);
    if (Value *held = constants_[t])
      return held;
    TensorInfo ti = c_.info(t);
    if (!ti.quantized())
      return constants_[t] = c_.constant(t);
    ByteSpan data = file_.dataOf(t);
    const DType dtype = ti.fileType == tflite::TensorType_INT8    ? DType::Int8
                        : ti.fileType == tflite::TensorType_INT64 ? DType::Int64
                        : ti.fileType == tflite::TensorType_INT16 ? DType::Int16
                                                                  : DType::Int32;
    TensorType type{dtype, ti.shape, ti.quant};
    if (data.size != type.bytes())
      throw file_.bad(file_.describeTensor(t) + " of shape " + shapeToString(ti.shape) + " holds " +
                      std::to_string(data.size) + " bytes of data; its shape needs " +
                      std::to_string(type.bytes()));
    return constants_[t] = graph_.addConstant(
               nameOf(t), type, std::vector<uint8_t>(data.data, data.data + data.size));
  }

  /// Adds `op` computing int16 tensor `t`; its inferred shape must be
  /// the file's. The output carries t's quantization.
  Node *emit(Op op, const std::vector<Value *> &inputs, const Attributes &attrs, int32_t t) {
    TensorInfo ti = c_.info(t);
    if (ti.fileType != tflite::TensorType_INT16)
      throw c_.unsupported("writes " + file_.describeTensor(t) + " of type " +
                           tflite::EnumNameTensorType(ti.fileType) + "; expected int16");
    checkActivation(t, ti);
    Node *node = addNode(op, inputs, attrs, nameOf(t), &ti.shape);
    node->output()->type.quant = ti.quant;
    c_.alias(t, node->output(), false);
    return node;
  }

  Node *addNode(Op op, const std::vector<Value *> &inputs, const Attributes &attrs,
                const std::string &name, const Shape *expected) {
    Node *node = graph_.addNode(op, graph_.uniqueNodeName(name), inputs, {name});
    node->attrs = attrs;
    try {
      inferNodeTypes(*node);
    } catch (const Error &e) {
      throw Error(e.code(), file_.path() + ": " + c_.where() + ": " + e.what());
    }
    if (expected && node->output()->type.shape != *expected)
      throw c_.bad("its output '" + name + "' is " + shapeToString(node->output()->type.shape) +
                   " by the operator's definition, but the model says " + shapeToString(*expected));
    return node;
  }

  int32_t input(const tflite::Operator &op, size_t i) const {
    const auto *list = op.inputs();
    if (!list || i >= list->size() || list->Get(unsigned(i)) < 0)
      throw c_.bad("has no input " + std::to_string(i));
    return list->Get(unsigned(i));
  }
  int32_t output(const tflite::Operator &op) const {
    if (!op.outputs() || op.outputs()->size() != 1)
      throw c_.bad("must have one output");
    return op.outputs()->Get(0);
  }

  void convert(const tflite::Operator &op, int32_t code) {
    switch (code) {
    case tflite::BuiltinOperator_STRIDED_SLICE:
      return convertStridedSlice(op);
    case tflite::BuiltinOperator_PAD:
    case tflite::BuiltinOperator_PADV2:
      return convertPad(op);
    case tflite::BuiltinOperator_LEAKY_RELU: {
      Attributes attrs;
      attrs.setFloat("alpha", leakyReluAlpha(op));
      emit(Op::Int16LeakyRelu, {value(input(op, 0))}, attrs, output(op));
      return;
    }
    case tflite::BuiltinOperator_ADD:
    case tflite::BuiltinOperator_SUB:
      return convertAddSub(op, code == tflite::BuiltinOperator_SUB);
    case tflite::BuiltinOperator_CONV_2D:
      return convertConv(op);
    case tflite::BuiltinOperator_DEPTHWISE_CONV_2D:
      return convertDepthwiseConv(op);
    case tflite::BuiltinOperator_FULLY_CONNECTED:
      return convertFullyConnected(op);
    case tflite::BuiltinOperator_TRANSPOSE_CONV:
      return convertTransposeConv(op);
    case tflite::BuiltinOperator_QUANTIZE:
      return convertQuantize(op);
    case tflite::BuiltinOperator_AVERAGE_POOL_2D:
      return convertPool(op, Op::Int16AveragePool);
    case tflite::BuiltinOperator_MAX_POOL_2D:
      return convertPool(op, Op::Int16MaxPool);
    case tflite::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM: {
      // TfliteLstm with int16 X and Y (TfliteLstm.cpp checks the operands).
      const IntegerLstm l = integerLstm(c_, op);
      emit(Op::TfliteLstm, {value(l.x), l.w, l.r, l.b}, l.attrs, l.y);
      return;
    }
    case tflite::BuiltinOperator_SOFTMAX: {
      const auto *o = op.builtin_options_as<tflite::SoftmaxOptions>();
      Attributes attrs;
      attrs.setFloat("beta", o ? o->beta() : 1.0f);
      emit(Op::Int16Softmax, {value(input(op, 0))}, attrs, output(op));
      return;
    }
    default:
      fatalInternal(c_.where() + ": no int16x8 converter");
    }
  }

  void convertStridedSlice(const tflite::Operator &op) {
    Value *x = value(input(op, 0));
    const StridedSlice spec = stridedSliceSpec(c_, op, x->type.shape);
    const std::string base = x->name + "_slice";
    std::vector<Value *> inputs = {x, c_.int64Constant(base + "_starts", spec.begin),
                                   c_.int64Constant(base + "_ends", spec.end),
                                   c_.int64Constant(base + "_axes", spec.axes),
                                   c_.int64Constant(base + "_steps", spec.steps)};
    const int32_t y = output(op);
    if (!spec.shrinks) {
      emit(Op::Slice, inputs, Attributes(), y);
      return;
    }
    Value *sliced = addNode(Op::Slice, inputs, Attributes(), base, nullptr)->output();
    sliced->type.quant = x->type.quant;
    emit(Op::Reshape, {sliced, c_.int64Constant(base + "_shape", file_.shapeOf(y))}, Attributes(),
         y);
  }

  /// TFLM pads int16 with the constant operand, or 0 (the zero point).
  void convertPad(const tflite::Operator &op) {
    Value *x = value(input(op, 0));
    std::vector<int64_t> pads = padOnnxPads(c_, op, x->type.rank());
    std::vector<Value *> inputs = {x, c_.int64Constant(x->name + "_pads", pads)};
    if (op.inputs()->size() > 2 && op.inputs()->Get(2) >= 0) {
      Value *fill = value(input(op, 2));
      if (fill->type.dtype != DType::Int16 || fill->type.numElements() != 1 || !fill->isConstant())
        throw c_.unsupported("the pad value must be one constant int16");
      inputs.push_back(fill);
    }
    emit(Op::Pad, inputs, Attributes(), output(op));
  }

  void convertAddSub(const tflite::Operator &op, bool subtract) {
    tflite::ActivationFunctionType fused = tflite::ActivationFunctionType_NONE;
    if (const auto *o = op.builtin_options_as<tflite::AddOptions>()) {
      fused = o->fused_activation_function();
      if (o->pot_scale_int16())
        throw c_.unsupported("pot_scale_int16 (TFLite's power-of-two int16 ADD) is not supported");
    }
    if (const auto *o = op.builtin_options_as<tflite::SubOptions>()) {
      fused = o->fused_activation_function();
      if (o->pot_scale_int16())
        throw c_.unsupported("pot_scale_int16 (TFLite's power-of-two int16 SUB) is not supported");
    }
    Attributes attrs;
    attrs.setInt("subtract", subtract ? 1 : 0);
    setActivationRange(attrs, fused, output(op));
    emit(Op::Int16Add, {value(input(op, 0)), value(input(op, 1))}, attrs, output(op));
  }

  /// A fused RELU, RELU6 or RELU_N1_TO_1 as attribute activation_range: its
  /// bounds in int16 output `y`'s integers, as TFLM's
  /// CalculateActivationRangeQuantized rounds them (round(f / scale) in
  /// float; a bound beyond int32 fails TFLM's Prepare).
  void setActivationRange(Attributes &attrs, tflite::ActivationFunctionType fused,
                          int32_t y) const {
    const TensorInfo ti = c_.info(y);
    const float scale = ti.quant.scales.empty() ? 1.0f : ti.quant.scales[0];
    auto quantize = [&](float f) {
      const float q = std::round(f / scale);
      if (!(q >= -2147483648.0f && q < 2147483648.0f))
        throw c_.unsupported("the fused activation's bound " + std::to_string(f) +
                             " is beyond int32 in " + file_.describeTensor(y) + "'s scale");
      return int64_t(q);
    };
    int64_t lo = -32768, hi = 32767;
    switch (fused) {
    case tflite::ActivationFunctionType_NONE:
      return;
    case tflite::ActivationFunctionType_RELU:
      lo = std::max(lo, quantize(0.0f));
      break;
    case tflite::ActivationFunctionType_RELU6:
      lo = std::max(lo, quantize(0.0f)), hi = std::min(hi, quantize(6.0f));
      break;
    case tflite::ActivationFunctionType_RELU_N1_TO_1:
      lo = std::max(lo, quantize(-1.0f)), hi = std::min(hi, quantize(1.0f));
      break;
    default:
      throw c_.unsupported("int16x8 with fused activation " +
                           std::string(tflite::EnumNameActivationFunctionType(fused)) +
                           " (RELU, RELU6 and RELU_N1_TO_1 are supported)");
    }
    attrs.setInts("activation_range", {lo, hi});
  }

  /// Input `wi`: constant int8 weights.
  Value *int8Weights(const tflite::Operator &op, size_t wi) {
    const int32_t wt = input(op, wi);
    if (!c_.isConstant(wt) || c_.info(wt).fileType != tflite::TensorType_INT8)
      throw c_.unsupported(file_.describeTensor(wt) + ": int16x8 weights must be constant int8");
    return value(wt);
  }

  /// Input `bi` (a constant int64 bias), or int64 zeros for `channels`
  /// outputs when the operator has none (TFLM then adds nothing).
  Value *biasOrZeros(const tflite::Operator &op, size_t bi, const Value *x, int64_t channels) {
    if (op.inputs()->size() > bi && op.inputs()->Get(unsigned(bi)) >= 0) {
      Value *bias = value(input(op, bi));
      if (bias->type.dtype != DType::Int64 || !bias->isConstant())
        throw c_.unsupported(file_.describeTensor(input(op, bi)) +
                             ": int16x8 biases must be constant int64");
      return bias;
    }
    return graph_.addConstant(graph_.uniqueValueName(x->name + "_zero_bias"),
                              TensorType{DType::Int64, {channels}, {}},
                              std::vector<uint8_t>(size_t(channels) * 8, 0));
  }

  /// Input `wi` (constant int8 OHWI weights of `x`'s channels) and input
  /// `bi` (int64 bias; absent: zeros).
  std::pair<Value *, Value *> weightsAndBias(const tflite::Operator &op, const Value *x, size_t wi,
                                             size_t bi) {
    Value *w = int8Weights(op, wi);
    const Shape &xs = x->type.shape, &ws = w->type.shape;
    if (xs.size() != 4 || ws.size() != 4 || ws[3] != xs[3])
      throw c_.unsupported("input " + x->type.str() + " and weights " + w->type.str() +
                           " are not NHWC and OHWI of the same channels (grouped convolutions "
                           "are not supported in int16x8)");
    return {w, biasOrZeros(op, bi, x, ws[0])};
  }

  /// Strides, dilations and pads [top, left, bottom, right] of a window of
  /// `ws` [.,KH,KW,.] over NHWC `xs`, as TFLite's padding computes them.
  Attributes windowAttributes(const Shape &xs, const Shape &ws, int32_t sh, int32_t sw, int32_t dh,
                              int32_t dw, tflite::Padding padding) const {
    if (sh < 1 || sw < 1 || dh < 1 || dw < 1)
      throw c_.bad("has stride " + std::to_string(sh) + "x" + std::to_string(sw) +
                   " and dilation " + std::to_string(dh) + "x" + std::to_string(dw) +
                   " (each must be >= 1)");
    Attributes attrs;
    attrs.setInts("strides", {sh, sw});
    attrs.setInts("dilations", {dh, dw});
    if (padding == tflite::Padding_SAME) {
      auto [top, bottom] = samePadding(xs[1], ws[1], sh, dh);
      auto [left, right] = samePadding(xs[2], ws[2], sw, dw);
      attrs.setInts("pads", {top, left, bottom, right});
    } else {
      attrs.setInts("pads", {0, 0, 0, 0});
    }
    return attrs;
  }

  /// TFLite's CONV_2D as Int16Conv in NHWC/OHWI.
  void convertConv(const tflite::Operator &op) {
    const auto *o = op.builtin_options_as<tflite::Conv2DOptions>();
    if (!o)
      throw c_.bad("has no Conv2DOptions");
    Value *x = value(input(op, 0));
    auto [w, bias] = weightsAndBias(op, x, 1, 2);
    Attributes attrs =
        windowAttributes(x->type.shape, w->type.shape, o->stride_h(), o->stride_w(),
                         o->dilation_h_factor(), o->dilation_w_factor(), o->padding());
    setActivationRange(attrs, o->fused_activation_function(), output(op));
    emit(Op::Int16Conv, {x, w, bias}, attrs, output(op));
  }

  /// DEPTHWISE_CONV_2D as Int16DepthwiseConv: weights [1,KH,KW,C*multiplier]
  /// as the file has them. TFLM loops over the options' depth_multiplier, so
  /// it must be what the shapes say.
  void convertDepthwiseConv(const tflite::Operator &op) {
    const auto *o = op.builtin_options_as<tflite::DepthwiseConv2DOptions>();
    if (!o)
      throw c_.bad("has no DepthwiseConv2DOptions");
    Value *x = value(input(op, 0));
    Value *w = int8Weights(op, 1);
    const Shape &xs = x->type.shape, &ws = w->type.shape;
    if (xs.size() != 4 || ws.size() != 4 || ws[0] != 1 || xs[3] < 1 || ws[3] % xs[3] != 0)
      throw c_.unsupported("input " + x->type.str() + " and weights " + w->type.str() +
                           " are not NHWC and [1,KH,KW,C*multiplier]");
    if (o->depth_multiplier() != ws[3] / xs[3])
      throw c_.unsupported("depth_multiplier " + std::to_string(o->depth_multiplier()) +
                           " but the weights give " + std::to_string(ws[3] / xs[3]) +
                           " output channels per input channel");
    Value *bias = biasOrZeros(op, 2, x, ws[3]);
    Attributes attrs =
        windowAttributes(xs, ws, o->stride_h(), o->stride_w(), o->dilation_h_factor(),
                         o->dilation_w_factor(), o->padding());
    setActivationRange(attrs, o->fused_activation_function(), output(op));
    emit(Op::Int16DepthwiseConv, {x, w, bias}, attrs, output(op));
  }

  /// FULLY_CONNECTED as Int16FullyConnected: weights [O,K], per-tensor.
  void convertFullyConnected(const tflite::Operator &op) {
    const auto *o = op.builtin_options_as<tflite::FullyConnectedOptions>();
    Attributes attrs;
    if (o) {
      setActivationRange(attrs, o->fused_activation_function(), output(op));
      if (o->weights_format() != tflite::FullyConnectedOptionsWeightsFormat_DEFAULT)
        throw c_.unsupported("shuffled FULLY_CONNECTED weights are not supported");
      attrs.setInt("keep_num_dims", o->keep_num_dims() ? 1 : 0);
    }
    Value *x = value(input(op, 0));
    Value *w = int8Weights(op, 1);
    const Shape &ws = w->type.shape;
    if (ws.size() != 2)
      throw c_.unsupported("weights " + w->type.str() + " are not [O, K]");
    if (w->type.quant.scales.size() != 1)
      throw c_.unsupported(file_.describeTensor(input(op, 1)) +
                           ": int16x8 FULLY_CONNECTED weights need one scale "
                           "(TFLM's int16 kernel is per-tensor)");
    emit(Op::Int16FullyConnected, {x, w, biasOrZeros(op, 2, x, ws[0])}, attrs, output(op));
  }

  /// AVERAGE_POOL_2D / MAX_POOL_2D: TFLite's window and padding, and the
  /// fused activation's range.
  void convertPool(const tflite::Operator &op, Op kind) {
    const auto *o = op.builtin_options_as<tflite::Pool2DOptions>();
    if (!o)
      throw c_.bad("has no Pool2DOptions");
    Value *x = value(input(op, 0));
    const int32_t y = output(op);
    const Shape window = {1, o->filter_height(), o->filter_width(), 1};
    if (window[1] < 1 || window[2] < 1)
      throw c_.bad("has a " + std::to_string(window[1]) + "x" + std::to_string(window[2]) +
                   " filter (each must be >= 1)");
    if (x->type.rank() != 4)
      throw c_.unsupported("input " + x->type.str() + " is not NHWC");
    Attributes attrs =
        windowAttributes(x->type.shape, window, o->stride_h(), o->stride_w(), 1, 1, o->padding());
    attrs.erase("dilations");
    attrs.setInts("kernel_shape", {window[1], window[2]});
    setActivationRange(attrs, o->fused_activation_function(), y);
    emit(kind, {x}, attrs, y);
  }

  /// QUANTIZE int16 <-> int32: the output written with its own
  /// quantization (emit() takes int16 outputs only).
  void convertQuantize(const tflite::Operator &op) {
    Value *x = value(input(op, 0));
    const int32_t y = output(op);
    TensorInfo ti = c_.info(y);
    if (!ti.quantized() || ti.quant.scales.size() != 1 || x->type.quant.scales.size() != 1)
      throw c_.unsupported("QUANTIZE needs one scale on its input and output");
    Attributes attrs;
    attrs.setInt("output_bits", ti.fileType == tflite::TensorType_INT32 ? 32 : 16);
    Node *node = addNode(Op::Int16Requantize, {x}, attrs, nameOf(y), &ti.shape);
    node->output()->type.quant = ti.quant;
    c_.alias(y, node->output(), false);
  }

  /// TRANSPOSE_CONV (output_shape, weights, input, bias): its padding is
  /// TFLite's ComputePaddingHeightWidth over the output's size; TFLM clamps
  /// to the fused activation as its convolutions do.
  void convertTransposeConv(const tflite::Operator &op) {
    const auto *o = op.builtin_options_as<tflite::TransposeConvOptions>();
    if (!o)
      throw c_.bad("has no TransposeConvOptions");
    Value *shapeOperand = value(input(op, 0));
    Value *x = value(input(op, 2));
    auto [w, bias] = weightsAndBias(op, x, 1, 3);
    const Shape out = file_.shapeOf(output(op)), &ws = w->type.shape;
    const int32_t sh = o->stride_h(), sw = o->stride_w();
    if (sh < 1 || sw < 1 || out.size() != 4)
      throw c_.bad("has stride " + std::to_string(sh) + "x" + std::to_string(sw) +
                   " or an output that is not 4-D");
    auto pad = [&](int64_t size, int64_t kernel, int64_t stride) -> int64_t {
      const int64_t computed = o->padding() == tflite::Padding_SAME
                                   ? (size + stride - 1) / stride
                                   : (size - kernel + stride) / stride;
      return std::max<int64_t>(0, (computed - 1) * stride + kernel - size) / 2;
    };
    Attributes attrs;
    attrs.setInts("strides", {sh, sw});
    attrs.setInts("pads", {pad(out[1], ws[1], sh), pad(out[2], ws[2], sw)});
    attrs.setInts("output_shape", out);
    setActivationRange(attrs, o->fused_activation_function(), output(op));
    emit(Op::Int16TransposeConv, {x, w, bias, shapeOperand}, attrs, output(op));
  }

  const TfliteFile &file_;
  Graph &graph_;
  Converter c_;
  std::map<int32_t, Value *> constants_;
};

} // namespace

bool isInt16x8Model(const TfliteFile &file) {
  for (const auto *list : {file.subgraph().inputs(), file.subgraph().outputs()})
    for (int32_t t : *list)
      if (file.tensor(t).type() == tflite::TensorType_INT16)
        return true;
  return false;
}

std::string int16x8Unsupported(const TfliteFile &file, const tflite::Operator &op,
                               int32_t builtinCode) {
  switch (builtinCode) {
  case tflite::BuiltinOperator_STRIDED_SLICE:
  case tflite::BuiltinOperator_PAD:
  case tflite::BuiltinOperator_PADV2:
  case tflite::BuiltinOperator_LEAKY_RELU:
  case tflite::BuiltinOperator_ADD:
  case tflite::BuiltinOperator_SUB:
  case tflite::BuiltinOperator_CONV_2D:
  case tflite::BuiltinOperator_DEPTHWISE_CONV_2D:
  case tflite::BuiltinOperator_FULLY_CONNECTED:
  case tflite::BuiltinOperator_TRANSPOSE_CONV:
  case tflite::BuiltinOperator_AVERAGE_POOL_2D:
  case tflite::BuiltinOperator_MAX_POOL_2D:
  case tflite::BuiltinOperator_SOFTMAX:
    return "";
  case tflite::BuiltinOperator_QUANTIZE: {
    // int16 <-> int32 requantization (the seanet models' boundaries).
    const auto type = [&](int32_t t) { return t < 0 ? -1 : int(file.tensor(t).type()); };
    const int in = op.inputs() && op.inputs()->size() ? type(op.inputs()->Get(0)) : -1;
    const int out = op.outputs() && op.outputs()->size() ? type(op.outputs()->Get(0)) : -1;
    if ((in == tflite::TensorType_INT16 && out == tflite::TensorType_INT32) ||
        (in == tflite::TensorType_INT32 && out == tflite::TensorType_INT16))
      return "";
    return "QUANTIZE int16x8 (other than int16 <-> int32)";
  }
  case tflite::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM: {
    // Its int16 variant; an int8 or float LSTM inside an int16x8 model is not.
    const auto *inputs = op.inputs();
    if (inputs && inputs->size() && inputs->Get(0) >= 0 &&
        file.tensor(inputs->Get(0)).type() != tflite::TensorType_INT16)
      return std::string("UNIDIRECTIONAL_SEQUENCE_LSTM int16x8 with a ") +
             tflite::EnumNameTensorType(file.tensor(inputs->Get(0)).type()) + " input";
    return unsupportedLstmVariant(file, op);
  }
  default:
    return file.operatorName(op) + " int16x8";
  }
}

void importInt16x8(const TfliteFile &file, Graph &graph) {
  Int16x8Importer importer(file, graph);
  importer.run();
}

} // namespace bundlefit::tflite_import
