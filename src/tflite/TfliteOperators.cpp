//===- TfliteOperators.cpp - One converter per TFLite builtin --------------===//
//
// Each converter writes the ONNX-convention nodes (Graph.h) computing one
// TFLite operator, with TFLite's semantics spelled out where the two differ:
//
//   CONV_2D, DEPTHWISE_CONV_2D  Conv on channels-first values; weights
//       OHWI -> OIHW, depthwise 1HW(C*M) -> (C*M)1HW with group = C; SAME
//       padding as TFLite computes it (the odd pixel after).
//   FULLY_CONNECTED  Gemm(transB = 1) on the input flattened to
//       [rows, in]; a channels-first 4-D input is flattened as it is held
//       and the weight columns are permuted to match (no transpose).
//   AVERAGE_POOL_2D  AveragePool, count_include_pad = 0 (TFLite divides by
//       the window's pixels inside the input).
//   fused activations  Conv/Gemm get the `activation` attribute (fused in
//       int8 as TFLM clamps); other operators a Relu / Clip node whose input
//       carries the output's quantization.
//   RESHAPE, SQUEEZE, CONCATENATION, PAD, MEAN, STRIDED_SLICE, SOFTMAX
//       read and write the file's layout (their axes are NHWC axes).
//   QUANTIZE float -> int8 and DEQUANTIZE int8 -> float  the Q/DQ pairs
//       themselves: the output tensor's real values are the input's.
//   UNIDIRECTIONAL_SEQUENCE_LSTM  float, int8, int16x8: one TfliteLstm
//       (TfliteLstm.cpp).
//
//===----------------------------------------------------------------------===//
#include "TfliteOperators.h"

#include "bundlefit/ops/OpRegistry.h"

#include <cfloat>
#include <map>

namespace bundlefit::tflite_import {

float leakyReluAlpha(const tflite::Operator &op) {
  const auto *options = op.builtin_options_as<tflite::LeakyReluOptions>();
  return options ? options->alpha() : 0.0f;
}

std::pair<int64_t, int64_t> samePadding(int64_t in, int64_t kernel, int64_t stride,
                                        int64_t dilation) {
  const int64_t effective = (kernel - 1) * dilation + 1;
  const int64_t out = (in + stride - 1) / stride;
  const int64_t total = std::max<int64_t>(0, (out - 1) * stride + effective - in);
  return {total / 2, total - total / 2};
}

namespace {

/// The operator being converted, with its operands.
class OpContext {
public:
  OpContext(Converter &c, const tflite::Operator &op) : c(c), op(op) {}

  int32_t input(size_t i) const {
    const auto *list = op.inputs();
    if (!list || i >= list->size() || list->Get(unsigned(i)) < 0)
      throw c.bad("has no input " + std::to_string(i));
    return list->Get(unsigned(i));
  }
  bool hasInput(size_t i) const {
    const auto *list = op.inputs();
    return list && i < list->size() && list->Get(unsigned(i)) >= 0;
  }
  size_t numInputs() const { return op.inputs() ? op.inputs()->size() : 0; }
  int32_t output(size_t i = 0) const {
    if (i >= op.outputs()->size())
      throw c.bad("has no output " + std::to_string(i));
    return op.outputs()->Get(unsigned(i));
  }
  template <typename T> const T &options(const char *name) const {
    const T *options = op.builtin_options_as<T>();
    if (!options)
      throw c.bad(std::string("has no ") + name);
    return *options;
  }
  /// The values of constant int32/int64 tensor `t` (shape operands).
  std::vector<int64_t> ints(int32_t t) const {
    if (!c.isConstant(t))
      throw c.unsupported(c.file().describeTensor(t) +
                          " must be a constant (bundlefit compiles static shapes)");
    Value *v = c.constant(t);
    if (v->type.dtype != DType::Int32 && v->type.dtype != DType::Int64)
      throw c.bad(c.file().describeTensor(t) + " is " + v->type.str() + "; expected int32");
    return v->toInts();
  }
  Shape shape(int32_t t) const { return c.file().shapeOf(t); }

  Converter &c;
  const tflite::Operator &op;
};

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Sets strides, dilations and ONNX pads [top, left, bottom, right] of a
/// 2-D window over channels-first `x`.
void setWindow(const OpContext &ctx, Attributes &attrs, const Shape &nhwcInput, int64_t kh,
               int64_t kw, int32_t strideH, int32_t strideW, int32_t dilationH, int32_t dilationW,
               tflite::Padding padding) {
  if (strideH < 1 || strideW < 1 || dilationH < 1 || dilationW < 1)
    throw ctx.c.bad("has stride " + std::to_string(strideH) + "x" + std::to_string(strideW) +
                    " and dilation " + std::to_string(dilationH) + "x" + std::to_string(dilationW) +
                    " (each must be >= 1)");
  if (kh < 1 || kw < 1 || kh > nhwcInput[1] + 1000000 || kw > nhwcInput[2] + 1000000)
    throw ctx.c.bad("has a window of " + std::to_string(kh) + "x" + std::to_string(kw));
  attrs.setInts("strides", {strideH, strideW});
  attrs.setInts("dilations", {dilationH, dilationW});
  attrs.setInts("kernel_shape", {kh, kw});
  if (padding == tflite::Padding_SAME) {
    auto [top, bottom] = samePadding(nhwcInput[1], kh, strideH, dilationH);
    auto [left, right] = samePadding(nhwcInput[2], kw, strideW, dilationW);
    attrs.setInts("pads", {top, left, bottom, right});
  } else if (padding == tflite::Padding_VALID) {
    attrs.setInts("pads", {0, 0, 0, 0});
  } else {
    throw ctx.c.bad("has padding " + std::to_string(int(padding)));
  }
}

/// Conv/Gemm: TFLite's fused activation as the IR's `activation` attribute.
void setFusedActivation(const OpContext &ctx, Attributes &attrs,
                        tflite::ActivationFunctionType fused) {
  switch (fused) {
  case tflite::ActivationFunctionType_NONE:
    return;
  case tflite::ActivationFunctionType_RELU:
    attrs.setString("activation", "Relu");
    return;
  case tflite::ActivationFunctionType_RELU6:
  case tflite::ActivationFunctionType_RELU_N1_TO_1:
    attrs.setString("activation", "Clip");
    attrs.setFloat("activation_min", fused == tflite::ActivationFunctionType_RELU6 ? 0.0f : -1.0f);
    attrs.setFloat("activation_max", fused == tflite::ActivationFunctionType_RELU6 ? 6.0f : 1.0f);
    return;
  case tflite::ActivationFunctionType_TANH:
    attrs.setString("activation", "Tanh");
    return;
  default:
    throw ctx.c.unsupported("fused activation " + std::to_string(int(fused)) +
                            " (SIGN_BIT or unknown) is not supported");
  }
}

/// Any other operator: its computation into an intermediate quantized like
/// the output, then the activation as a node writing the output tensor.
void emitWithActivation(OpContext &ctx, Op op, const std::vector<Value *> &inputs,
                        const Attributes &attrs, bool channelsFirst,
                        tflite::ActivationFunctionType fused) {
  const int32_t out = ctx.output();
  if (fused == tflite::ActivationFunctionType_NONE) {
    ctx.c.emit(op, inputs, attrs, out, channelsFirst);
    return;
  }
  Converter &c = ctx.c;
  const tflite::Tensor &tensor = c.file().tensor(out);
  const std::string name =
      (tensor.name() ? tensor.name()->str() : "tensor_" + std::to_string(out)) + "_preactivation";
  Value *pre = c.emitIntermediate(op, inputs, attrs, name, out);
  Attributes none;
  switch (fused) {
  case tflite::ActivationFunctionType_RELU:
    c.emit(Op::Relu, {pre}, none, out, channelsFirst);
    return;
  case tflite::ActivationFunctionType_RELU6:
  case tflite::ActivationFunctionType_RELU_N1_TO_1: {
    bool six = fused == tflite::ActivationFunctionType_RELU6;
    c.emit(Op::Clip,
           {pre, c.floatConstant(name + "_min", {six ? 0.0f : -1.0f}),
            c.floatConstant(name + "_max", {six ? 6.0f : 1.0f})},
           none, out, channelsFirst);
    return;
  }
  case tflite::ActivationFunctionType_TANH:
    c.emit(Op::Tanh, {pre}, none, out, channelsFirst);
    return;
  default:
    throw c.unsupported("fused activation " + std::to_string(int(fused)) +
                        " (SIGN_BIT or unknown) is not supported");
  }
}

/// The bias operand (optional input 2) as a float value (DQ of int32).
Value *optionalBias(OpContext &ctx, size_t index, int64_t channels) {
  if (!ctx.hasInput(index))
    return nullptr;
  int32_t b = ctx.input(index);
  if (!ctx.c.isConstant(b))
    throw ctx.c.unsupported(ctx.c.file().describeTensor(b) + ": the bias must be constant");
  Shape shape = ctx.shape(b);
  if (numElements(shape) != channels)
    throw ctx.c.bad(ctx.c.file().describeTensor(b) + " has " + std::to_string(numElements(shape)) +
                    " elements for " + std::to_string(channels) + " output channels");
  return ctx.c.constant(b, {}, {}, {channels});
}

Value *constantWeights(OpContext &ctx, size_t index, size_t rank) {
  int32_t w = ctx.input(index);
  if (!ctx.c.isConstant(w))
    throw ctx.c.unsupported(ctx.c.file().describeTensor(w) +
                            ": the weights must be constant (bundlefit compiles weights in)");
  if (ctx.shape(w).size() != rank)
    throw ctx.c.bad(ctx.c.file().describeTensor(w) + " is " + shapeToString(ctx.shape(w)) +
                    "; expected rank " + std::to_string(rank));
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Converters
//===----------------------------------------------------------------------===//

void convertConv2D(OpContext &ctx) {
  const auto &o = ctx.options<tflite::Conv2DOptions>("Conv2DOptions");
  const int32_t x = ctx.input(0), w = ctx.input(1);
  constantWeights(ctx, 1, 4);
  const Shape xs = ctx.shape(x), ws = ctx.shape(w);
  if (xs.size() != 4)
    throw ctx.c.unsupported("input is " + shapeToString(xs) + "; CONV_2D takes 4-D NHWC");
  if (ws[3] < 1 || xs[3] % ws[3] != 0)
    throw ctx.c.bad("weights " + shapeToString(ws) + " do not divide the input's " +
                    std::to_string(xs[3]) + " channels");
  Attributes attrs;
  setWindow(ctx, attrs, xs, ws[1], ws[2], o.stride_h(), o.stride_w(), o.dilation_h_factor(),
            o.dilation_w_factor(), o.padding());
  attrs.setInt("group", xs[3] / ws[3]);
  setFusedActivation(ctx, attrs, o.fused_activation_function());
  std::vector<Value *> inputs = {ctx.c.channelsFirst(x), ctx.c.constant(w, kToChannelsFirst)};
  if (Value *bias = optionalBias(ctx, 2, ws[0]))
    inputs.push_back(bias);
  ctx.c.emit(Op::Conv, inputs, attrs, ctx.output(), true);
}

void convertDepthwiseConv2D(OpContext &ctx) {
  const auto &o = ctx.options<tflite::DepthwiseConv2DOptions>("DepthwiseConv2DOptions");
  const int32_t x = ctx.input(0), w = ctx.input(1);
  constantWeights(ctx, 1, 4);
  const Shape xs = ctx.shape(x), ws = ctx.shape(w);
  if (xs.size() != 4)
    throw ctx.c.unsupported("input is " + shapeToString(xs) + "; DEPTHWISE_CONV_2D takes 4-D NHWC");
  if (ws[0] != 1 || ws[3] % xs[3] != 0)
    throw ctx.c.bad("weights " + shapeToString(ws) + " are not [1, H, W, " + std::to_string(xs[3]) +
                    " x multiplier]");
  Attributes attrs;
  setWindow(ctx, attrs, xs, ws[1], ws[2], o.stride_h(), o.stride_w(), o.dilation_h_factor(),
            o.dilation_w_factor(), o.padding());
  attrs.setInt("group", xs[3]);
  setFusedActivation(ctx, attrs, o.fused_activation_function());
  // [1, KH, KW, C*M] -> [C*M, 1, KH, KW]: output channel o = c*M + m reads
  // input channel o / M, as ONNX's grouped convolution does.
  std::vector<Value *> inputs = {ctx.c.channelsFirst(x), ctx.c.constant(w, {3, 0, 1, 2})};
  if (Value *bias = optionalBias(ctx, 2, ws[3]))
    inputs.push_back(bias);
  ctx.c.emit(Op::Conv, inputs, attrs, ctx.output(), true);
}

void convertFullyConnected(OpContext &ctx) {
  const auto *o = ctx.op.builtin_options_as<tflite::FullyConnectedOptions>();
  if (o && o->weights_format() != tflite::FullyConnectedOptionsWeightsFormat_DEFAULT)
    throw ctx.c.unsupported("shuffled weights (weights_format) are not supported");
  const int32_t x = ctx.input(0), w = ctx.input(1);
  constantWeights(ctx, 1, 2);
  const Shape xs = ctx.shape(x), ws = ctx.shape(w);
  const int64_t in = ws[1], outChannels = ws[0];
  const int64_t count = numElements(xs);
  if (in < 1 || count % in != 0)
    throw ctx.c.bad("input " + shapeToString(xs) + " is not a whole number of rows of " +
                    std::to_string(in));
  const int64_t rows = count / in;
  const Shape outShape = ctx.shape(ctx.output());
  const bool keepDims = o && o->keep_num_dims();
  Attributes attrs;
  attrs.setInt("transB", 1);
  setFusedActivation(ctx, attrs,
                     o ? o->fused_activation_function() : tflite::ActivationFunctionType_NONE);
  Value *input = nullptr, *weights = nullptr;
  if (ctx.c.heldChannelsFirst(x) && xs.size() == 4 && rows == xs[0]) {
    // Flatten the channels-first tensor as it is held; weight column
    // h*W*C + w*C + c moves to c*H*W + h*W + w.
    Value *held = ctx.c.channelsFirst(x);
    input = ctx.c.emitIntermediate(Op::Flatten, {held}, Attributes(), held->name + "_flat", x);
    weights =
        ctx.c.constant(w, {0, 3, 1, 2}, {outChannels, xs[1], xs[2], xs[3]}, {outChannels, in});
  } else {
    input = ctx.c.value(x);
    if (input->type.shape != Shape{rows, in}) {
      Attributes none;
      input = ctx.c.emitIntermediate(
          Op::Reshape, {input, ctx.c.int64Constant(input->name + "_rows", {rows, in})}, none,
          input->name + "_rows", x);
    }
    weights = ctx.c.constant(w);
  }
  std::vector<Value *> inputs = {input, weights};
  if (Value *bias = optionalBias(ctx, 2, outChannels))
    inputs.push_back(bias);
  if (outShape == Shape{rows, outChannels} || !keepDims) {
    ctx.c.emit(Op::Gemm, inputs, attrs, ctx.output(), false);
    return;
  }
  Value *flat = ctx.c.emitIntermediate(Op::Gemm, inputs, attrs, input->name + "_fc", ctx.output());
  ctx.c.emit(Op::Reshape, {flat, ctx.c.int64Constant(flat->name + "_shape", outShape)},
             Attributes(), ctx.output(), false);
}

void convertPool(OpContext &ctx, Op op) {
  const auto &o = ctx.options<tflite::Pool2DOptions>("Pool2DOptions");
  const int32_t x = ctx.input(0);
  const Shape xs = ctx.shape(x);
  if (xs.size() != 4)
    throw ctx.c.unsupported("input is " + shapeToString(xs) + "; pools take 4-D NHWC");
  Attributes attrs;
  setWindow(ctx, attrs, xs, o.filter_height(), o.filter_width(), o.stride_h(), o.stride_w(), 1, 1,
            o.padding());
  attrs.erase("dilations");
  if (op == Op::AveragePool)
    attrs.setInt("count_include_pad", 0);
  emitWithActivation(ctx, op, {ctx.c.channelsFirst(x)}, attrs, true, o.fused_activation_function());
}

/// Elementwise binary operators: in the layout the first input is held in,
/// when every operand can follow it.
void convertBinary(OpContext &ctx, Op op, tflite::ActivationFunctionType fused) {
  const int32_t a = ctx.input(0), b = ctx.input(1);
  const Shape as = ctx.shape(a), bs = ctx.shape(b);
  const bool channelsFirst = ctx.c.heldChannelsFirst(a) && as.size() == 4 && bs.size() == 4;
  std::vector<Value *> inputs =
      channelsFirst ? std::vector<Value *>{ctx.c.channelsFirst(a), ctx.c.channelsFirst(b)}
                    : std::vector<Value *>{ctx.c.value(a), ctx.c.value(b)};
  emitWithActivation(ctx, op, inputs, Attributes(), channelsFirst, fused);
}

/// Unary elementwise operators keep the layout their input is held in.
void convertUnary(OpContext &ctx, Op op, const Attributes &attrs = {}) {
  const int32_t x = ctx.input(0);
  const bool channelsFirst = ctx.c.heldChannelsFirst(x);
  Value *input = channelsFirst ? ctx.c.channelsFirst(x) : ctx.c.value(x);
  ctx.c.emit(op, {input}, attrs, ctx.output(), channelsFirst);
}

void convertClip(OpContext &ctx, float lo, float hi) {
  const int32_t x = ctx.input(0);
  const bool channelsFirst = ctx.c.heldChannelsFirst(x);
  Value *input = channelsFirst ? ctx.c.channelsFirst(x) : ctx.c.value(x);
  ctx.c.emit(Op::Clip,
             {input, ctx.c.floatConstant(input->name + "_min", {lo}),
              ctx.c.floatConstant(input->name + "_max", {hi})},
             Attributes(), ctx.output(), channelsFirst);
}

void convertReshape(OpContext &ctx) {
  const Shape outShape = ctx.shape(ctx.output());
  Value *input = ctx.c.value(ctx.input(0));
  if (numElements(outShape) != input->type.numElements())
    throw ctx.c.bad("reshapes " + input->type.str() + " to " + shapeToString(outShape));
  // The output tensor's static shape says it all (new_shape / the shape
  // operand may hold -1).
  ctx.c.emit(Op::Reshape, {input, ctx.c.int64Constant(input->name + "_reshaped", outShape)},
             Attributes(), ctx.output(), false);
}

void convertSoftmax(OpContext &ctx) {
  const auto *o = ctx.op.builtin_options_as<tflite::SoftmaxOptions>();
  const float beta = o ? o->beta() : 1.0f;
  if (beta != 1.0f)
    throw ctx.c.unsupported("beta " + std::to_string(beta) + " (only 1 is supported)");
  Attributes attrs;
  attrs.setInt("axis", -1);
  ctx.c.emit(Op::Softmax, {ctx.c.value(ctx.input(0))}, attrs, ctx.output(), false);
}

void convertConcatenation(OpContext &ctx) {
  const auto &o = ctx.options<tflite::ConcatenationOptions>("ConcatenationOptions");
  const int64_t rank = int64_t(ctx.shape(ctx.output()).size());
  int64_t axis = o.axis() < 0 ? o.axis() + rank : o.axis();
  if (axis < 0 || axis >= rank)
    throw ctx.c.bad("has axis " + std::to_string(o.axis()) + " for rank " + std::to_string(rank));
  bool channelsFirst = rank == 4;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    channelsFirst = channelsFirst && ctx.c.heldChannelsFirst(ctx.input(i));
  std::vector<Value *> inputs;
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    inputs.push_back(channelsFirst ? ctx.c.channelsFirst(ctx.input(i)) : ctx.c.value(ctx.input(i)));
  Attributes attrs;
  // NHWC axis a is NCHW axis kToChannelsLast[a].
  attrs.setInt("axis", channelsFirst ? kToChannelsLast[size_t(axis)] : axis);
  emitWithActivation(ctx, Op::Concat, inputs, attrs, channelsFirst, o.fused_activation_function());
}

} // namespace

std::vector<int64_t> padOnnxPads(Converter &c, const tflite::Operator &op, size_t rank) {
  OpContext ctx(c, op);
  std::vector<int64_t> paddings = ctx.ints(ctx.input(1));
  if (paddings.size() != 2 * rank)
    throw ctx.c.bad("has " + std::to_string(paddings.size()) + " paddings for rank " +
                    std::to_string(rank));
  std::vector<int64_t> pads(2 * rank);
  for (size_t i = 0; i < rank; ++i) {
    pads[i] = paddings[2 * i];
    pads[rank + i] = paddings[2 * i + 1];
  }
  return pads;
}

namespace {

void convertPad(OpContext &ctx) {
  Value *input = ctx.c.value(ctx.input(0));
  std::vector<int64_t> pads = padOnnxPads(ctx.c, ctx.op, input->type.rank());
  std::vector<Value *> inputs = {input, ctx.c.int64Constant(input->name + "_pads", pads)};
  if (ctx.hasInput(2))
    inputs.push_back(ctx.c.value(ctx.input(2)));
  ctx.c.emit(Op::Pad, inputs, Attributes(), ctx.output(), false);
}

void convertMean(OpContext &ctx) {
  const auto *o = ctx.op.builtin_options_as<tflite::ReducerOptions>();
  Value *input = ctx.c.value(ctx.input(0));
  std::vector<int64_t> axes = ctx.ints(ctx.input(1));
  const int64_t rank = int64_t(input->type.rank());
  for (int64_t &axis : axes) {
    if (axis < -rank || axis >= rank)
      throw ctx.c.bad("has axis " + std::to_string(axis) + " for rank " + std::to_string(rank));
    axis = axis < 0 ? axis + rank : axis;
  }
  Attributes attrs;
  attrs.setInts("axes", axes);
  attrs.setInt("keepdims", o && o->keep_dims() ? 1 : 0);
  ctx.c.emit(Op::ReduceMean, {input}, attrs, ctx.output(), false);
}

void convertSqueeze(OpContext &ctx) {
  Value *input = ctx.c.value(ctx.input(0));
  const Shape outShape = ctx.shape(ctx.output());
  if (numElements(outShape) != input->type.numElements())
    throw ctx.c.bad("squeezes " + input->type.str() + " to " + shapeToString(outShape));
  ctx.c.emit(Op::Reshape, {input, ctx.c.int64Constant(input->name + "_squeezed", outShape)},
             Attributes(), ctx.output(), false);
}

void convertTranspose(OpContext &ctx) {
  Value *input = ctx.c.value(ctx.input(0));
  Attributes attrs;
  attrs.setInts("perm", ctx.ints(ctx.input(1)));
  ctx.c.emit(Op::Transpose, {input}, attrs, ctx.output(), false);
}

} // namespace

StridedSlice stridedSliceSpec(Converter &c, const tflite::Operator &op, const Shape &in) {
  OpContext ctx(c, op);
  const auto *o = ctx.op.builtin_options_as<tflite::StridedSliceOptions>();
  if (o && (o->ellipsis_mask() || o->new_axis_mask() || o->offset()))
    throw ctx.c.unsupported("ellipsis_mask, new_axis_mask and offset are not supported");
  std::vector<int64_t> begin = ctx.ints(ctx.input(1)), end = ctx.ints(ctx.input(2));
  std::vector<int64_t> strides =
      ctx.hasInput(3) ? ctx.ints(ctx.input(3)) : std::vector<int64_t>(in.size(), 1);
  if (begin.size() != in.size() || end.size() != in.size() || strides.size() != in.size())
    throw ctx.c.bad("begin/end/strides do not have one entry per dimension of " +
                    shapeToString(in));
  const int32_t beginMask = o ? o->begin_mask() : 0, endMask = o ? o->end_mask() : 0;
  const int32_t shrinkMask = o ? o->shrink_axis_mask() : 0;
  std::vector<int64_t> axes;
  for (size_t i = 0; i < in.size(); ++i) {
    if (strides[i] == 0)
      throw ctx.c.bad("has stride 0 on axis " + std::to_string(i));
    const bool forward = strides[i] > 0;
    if (beginMask >> i & 1)
      begin[i] = forward ? 0 : in[i] - 1;
    if (shrinkMask >> i & 1) {
      int64_t b = begin[i] < 0 ? begin[i] + in[i] : begin[i];
      end[i] = b + 1;
      strides[i] = 1;
    } else if (endMask >> i & 1) {
      end[i] = forward ? INT64_MAX : INT64_MIN;
    }
    axes.push_back(int64_t(i));
  }
  return {begin, end, axes, strides, shrinkMask != 0};
}

namespace {

void convertStridedSlice(OpContext &ctx) {
  Value *input = ctx.c.value(ctx.input(0));
  const StridedSlice spec = stridedSliceSpec(ctx.c, ctx.op, input->type.shape);
  const std::string base = input->name + "_slice";
  std::vector<Value *> inputs = {input, ctx.c.int64Constant(base + "_starts", spec.begin),
                                 ctx.c.int64Constant(base + "_ends", spec.end),
                                 ctx.c.int64Constant(base + "_axes", spec.axes),
                                 ctx.c.int64Constant(base + "_steps", spec.steps)};
  const Shape outShape = ctx.shape(ctx.output());
  if (!spec.shrinks) {
    ctx.c.emit(Op::Slice, inputs, Attributes(), ctx.output(), false);
    return;
  }
  Value *sliced = ctx.c.emitIntermediate(Op::Slice, inputs, Attributes(), base, ctx.output());
  ctx.c.emit(Op::Reshape, {sliced, ctx.c.int64Constant(base + "_shape", outShape)}, Attributes(),
             ctx.output(), false);
}

void convertResizeNearest(OpContext &ctx) {
  const auto *o = ctx.op.builtin_options_as<tflite::ResizeNearestNeighborOptions>();
  const int32_t x = ctx.input(0);
  const Shape xs = ctx.shape(x), ys = ctx.shape(ctx.output());
  if (xs.size() != 4)
    throw ctx.c.unsupported("input is " + shapeToString(xs) + "; expected 4-D NHWC");
  Attributes attrs;
  attrs.setString("mode", "nearest");
  // TFLite: in = min(floor(out * in / out_size), in - 1) by default,
  // rounding with align_corners, +0.5 with half_pixel_centers.
  if (o && o->align_corners()) {
    attrs.setString("coordinate_transformation_mode", "align_corners");
    attrs.setString("nearest_mode", "round_prefer_ceil");
  } else if (o && o->half_pixel_centers()) {
    attrs.setString("coordinate_transformation_mode", "tf_half_pixel_for_nn");
    attrs.setString("nearest_mode", "floor");
  } else {
    attrs.setString("coordinate_transformation_mode", "asymmetric");
    attrs.setString("nearest_mode", "floor");
  }
  Value *input = ctx.c.channelsFirst(x);
  Value *sizes = ctx.c.int64Constant(input->name + "_sizes", {ys[0], ys[3], ys[1], ys[2]});
  ctx.c.emit(Op::Resize, {input, nullptr, nullptr, sizes}, attrs, ctx.output(), true);
}

void convertQuantize(OpContext &ctx) {
  const int32_t x = ctx.input(0), y = ctx.output();
  if (ctx.c.info(x).quantized())
    throw ctx.c.unsupported("requantizes int8 to int8 (" + ctx.c.file().describeTensor(x) + " -> " +
                            ctx.c.file().describeTensor(y) + "); not supported yet");
  // The output's real values are the input's, quantized: a Q/DQ pair on
  // the input itself (no node between, so the parameters stay on the
  // value the quantizer sees).
  const bool channelsFirst = ctx.c.heldChannelsFirst(x);
  Value *input = channelsFirst ? ctx.c.channelsFirst(x) : ctx.c.value(x);
  ctx.c.alias(y, ctx.c.quantizeLike(input, y), channelsFirst);
}

void convertDequantize(OpContext &ctx) {
  // The output's real values are the input's (already dequantized).
  const int32_t x = ctx.input(0);
  if (!ctx.c.info(x).quantized())
    throw ctx.c.unsupported(ctx.c.file().describeTensor(x) + " is not quantized");
  const bool channelsFirst = ctx.c.heldChannelsFirst(x);
  ctx.c.alias(ctx.output(), channelsFirst ? ctx.c.channelsFirst(x) : ctx.c.value(x), channelsFirst);
}

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

using ConvertFn = void (*)(OpContext &);

const std::map<int32_t, ConvertFn> &converters() {
  static const std::map<int32_t, ConvertFn> table = {
      {tflite::BuiltinOperator_CONV_2D, convertConv2D},
      {tflite::BuiltinOperator_DEPTHWISE_CONV_2D, convertDepthwiseConv2D},
      {tflite::BuiltinOperator_FULLY_CONNECTED, convertFullyConnected},
      {tflite::BuiltinOperator_AVERAGE_POOL_2D,
       [](OpContext &ctx) { convertPool(ctx, Op::AveragePool); }},
      {tflite::BuiltinOperator_MAX_POOL_2D, [](OpContext &ctx) { convertPool(ctx, Op::MaxPool); }},
      {tflite::BuiltinOperator_ADD,
       [](OpContext &ctx) {
         const auto *o = ctx.op.builtin_options_as<tflite::AddOptions>();
         convertBinary(ctx, Op::Add,
                       o ? o->fused_activation_function() : tflite::ActivationFunctionType_NONE);
       }},
      {tflite::BuiltinOperator_SUB,
       [](OpContext &ctx) {
         const auto *o = ctx.op.builtin_options_as<tflite::SubOptions>();
         convertBinary(ctx, Op::Sub,
                       o ? o->fused_activation_function() : tflite::ActivationFunctionType_NONE);
       }},
      {tflite::BuiltinOperator_MUL,
       [](OpContext &ctx) {
         const auto *o = ctx.op.builtin_options_as<tflite::MulOptions>();
         convertBinary(ctx, Op::Mul,
                       o ? o->fused_activation_function() : tflite::ActivationFunctionType_NONE);
       }},
      {tflite::BuiltinOperator_RESHAPE, convertReshape},
      {tflite::BuiltinOperator_SQUEEZE, convertSqueeze},
      {tflite::BuiltinOperator_SOFTMAX, convertSoftmax},
      {tflite::BuiltinOperator_LOGISTIC, [](OpContext &ctx) { convertUnary(ctx, Op::Sigmoid); }},
      {tflite::BuiltinOperator_TANH, [](OpContext &ctx) { convertUnary(ctx, Op::Tanh); }},
      {tflite::BuiltinOperator_RELU, [](OpContext &ctx) { convertUnary(ctx, Op::Relu); }},
      {tflite::BuiltinOperator_RELU6, [](OpContext &ctx) { convertClip(ctx, 0.0f, 6.0f); }},
      {tflite::BuiltinOperator_RELU_N1_TO_1, [](OpContext &ctx) { convertClip(ctx, -1.0f, 1.0f); }},
      {tflite::BuiltinOperator_HARD_SWISH,
       [](OpContext &ctx) { convertUnary(ctx, Op::HardSwish); }},
      {tflite::BuiltinOperator_LEAKY_RELU,
       [](OpContext &ctx) {
         Attributes attrs;
         attrs.setFloat("alpha", leakyReluAlpha(ctx.op));
         convertUnary(ctx, Op::LeakyRelu, attrs);
       }},
      {tflite::BuiltinOperator_CONCATENATION, convertConcatenation},
      {tflite::BuiltinOperator_PAD, convertPad},
      {tflite::BuiltinOperator_PADV2, convertPad},
      {tflite::BuiltinOperator_MEAN, convertMean},
      {tflite::BuiltinOperator_TRANSPOSE, convertTranspose},
      {tflite::BuiltinOperator_STRIDED_SLICE, convertStridedSlice},
      {tflite::BuiltinOperator_RESIZE_NEAREST_NEIGHBOR, convertResizeNearest},
      {tflite::BuiltinOperator_QUANTIZE, convertQuantize},
      {tflite::BuiltinOperator_DEQUANTIZE, convertDequantize},
      {tflite::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM,
       [](OpContext &ctx) { convertSequenceLstm(ctx.c, ctx.op); }},
  };
  return table;
}

} // namespace

bool isSupportedBuiltin(int32_t builtinCode) { return converters().count(builtinCode) != 0; }

std::vector<std::string> supportedBuiltinNames() {
  std::vector<std::string> names;
  for (const auto &entry : converters())
    names.push_back(tflite::EnumNameBuiltinOperator(tflite::BuiltinOperator(entry.first)));
  return names;
}

std::string unsupportedVariant(const TfliteFile &file, const tflite::Operator &op,
                               int32_t builtinCode) {
  if (builtinCode == tflite::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM)
    return unsupportedLstmVariant(file, op);
  return "";
}

void convertOperator(Converter &converter, const tflite::Operator &op, int32_t builtinCode) {
  auto it = converters().find(builtinCode);
  if (it == converters().end())
    fatalInternal(converter.where() + ": no converter");
  OpContext ctx(converter, op);
  it->second(ctx);
}

} // namespace bundlefit::tflite_import
