//===- TfliteConverter.cpp - Tensors, layouts and Q/DQ pairs ---------------===//
#include "TfliteConverter.h"

#include "bundlefit/ops/OpRegistry.h"
#include "bundlefit/support/Bytes.h"
#include "bundlefit/support/CheckedMath.h"

#include <cmath>
#include <cstring>

namespace bundlefit::tflite_import {

const std::vector<int64_t> kToChannelsFirst = {0, 3, 1, 2};
const std::vector<int64_t> kToChannelsLast = {0, 2, 3, 1};

Shape permuted(const Shape &shape, const std::vector<int64_t> &perm) {
  Shape out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    out[i] = shape[size_t(perm[i])];
  return out;
}

namespace {

/// Whether permuting `shape` by `perm` leaves the bytes in place: the
/// dimensions larger than 1 keep their order (NHWC -> NCHW with C == 1).
bool sameBytes(const Shape &shape, const std::vector<int64_t> &perm) {
  int64_t last = -1;
  for (int64_t axis : perm) {
    if (shape[size_t(axis)] == 1)
      continue;
    if (axis < last)
      return false;
    last = axis;
  }
  return true;
}

/// Elements of `bytes` (each `size` bytes, shape `shape`) permuted by `perm`.
std::vector<uint8_t> permuteElements(const uint8_t *bytes, size_t size, const Shape &shape,
                                     const std::vector<int64_t> &perm) {
  const size_t rank = shape.size();
  const int64_t count = numElements(shape);
  std::vector<int64_t> inStrides(rank, 1);
  for (size_t i = rank; i-- > 1;)
    inStrides[i - 1] = inStrides[i] * shape[i];
  Shape outShape = permuted(shape, perm);
  std::vector<uint8_t> out(size_t(count) * size);
  std::vector<int64_t> index(rank, 0); // over the output
  for (int64_t o = 0; o < count; ++o) {
    int64_t in = 0;
    for (size_t i = 0; i < rank; ++i)
      in += index[i] * inStrides[size_t(perm[i])];
    std::memcpy(out.data() + size_t(o) * size, bytes + size_t(in) * size, size);
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < outShape[i])
        break;
      index[i] = 0;
    }
  }
  return out;
}

size_t fileElementSize(tflite::TensorType type) {
  switch (type) {
  case tflite::TensorType_FLOAT32:
  case tflite::TensorType_INT32:
    return 4;
  case tflite::TensorType_INT64:
    return 8;
  case tflite::TensorType_INT16:
    return 2;
  case tflite::TensorType_INT8:
  case tflite::TensorType_BOOL:
    return 1;
  default:
    return 0;
  }
}

DType plainDType(tflite::TensorType type) {
  switch (type) {
  case tflite::TensorType_INT32:
    return DType::Int32;
  case tflite::TensorType_INT64:
    return DType::Int64;
  case tflite::TensorType_BOOL:
    return DType::Bool;
  case tflite::TensorType_INT8:
    return DType::Int8;
  case tflite::TensorType_INT16:
    return DType::Int16;
  default:
    return DType::Float32;
  }
}

std::string typeName(tflite::TensorType type) {
  const char *name = tflite::EnumNameTensorType(type);
  return name && *name ? name : "type " + std::to_string(int(type));
}

} // namespace

TensorInfo Converter::info(int32_t t) const {
  const tflite::Tensor &tensor = file_.tensor(t);
  const std::string what = file_.describeTensor(t);
  TensorInfo info;
  info.fileType = tensor.type();
  info.shape = file_.shapeOf(t);
  switch (info.fileType) {
  case tflite::TensorType_FLOAT32:
  case tflite::TensorType_INT8:
  case tflite::TensorType_INT32:
  case tflite::TensorType_INT64:
  case tflite::TensorType_BOOL:
    break;
  case tflite::TensorType_INT16:
    if (int16x8_)
      break;
    throw file_.unsupported(what + " is int16 in a model whose inputs and outputs are not: "
                                   "int16 activations are supported in int16x8 models only");
  case tflite::TensorType_UINT8:
    throw file_.unsupported(what + " is uint8 (TFLite's legacy quantization); convert the model "
                                   "with int8 quantization");
  default:
    throw file_.unsupported(what + " is " + typeName(info.fileType) +
                            "; bundlefit takes float32, int8, int32, int64 and bool tensors");
  }
  const tflite::QuantizationParameters *q = tensor.quantization();
  const bool hasScales = q && q->scale() && q->scale()->size() > 0;
  const bool integer =
      info.fileType == tflite::TensorType_INT8 || info.fileType == tflite::TensorType_INT16;
  if (integer && !hasScales)
    throw file_.unsupported(what + " is " + typeName(info.fileType) +
                            " without quantization parameters (scale, zero point)");
  // int64: the int16x8 biases.
  if (!hasScales || (!integer && info.fileType != tflite::TensorType_INT32 &&
                     info.fileType != tflite::TensorType_INT64))
    return info; // float tensors may carry min/max or scales: unused
  if (q->details_type() != tflite::QuantizationDetails_NONE)
    throw file_.unsupported(what + " has custom quantization details");
  const size_t count = q->scale()->size();
  if (!q->zero_point() || q->zero_point()->size() != count)
    throw file_.bad(what + " has " + std::to_string(count) + " scales but " +
                    std::to_string(q->zero_point() ? q->zero_point()->size() : 0) +
                    " zero points (TFLite needs one per scale)");
  if (count > 1) {
    const int32_t axis = q->quantized_dimension();
    if (axis < 0 || size_t(axis) >= info.shape.size())
      throw file_.bad(what + " of rank " + std::to_string(info.shape.size()) +
                      " has quantized_dimension " + std::to_string(axis));
    if (info.shape[size_t(axis)] != int64_t(count))
      throw file_.bad(what + " has " + std::to_string(count) + " scales for dimension " +
                      std::to_string(axis) + " of size " +
                      std::to_string(info.shape[size_t(axis)]));
    info.quant.axis = axis;
  }
  const int64_t lowest = info.fileType == tflite::TensorType_INT8    ? -128
                         : info.fileType == tflite::TensorType_INT16 ? -32768
                                                                     : 0;
  const int64_t highest = info.fileType == tflite::TensorType_INT8    ? 127
                          : info.fileType == tflite::TensorType_INT16 ? 32767
                                                                      : 0;
  for (size_t i = 0; i < count; ++i) {
    float scale = q->scale()->Get(unsigned(i));
    int64_t zeroPoint = int64At(*q->zero_point(), i);
    if (!std::isfinite(scale) || scale <= 0.0f)
      throw file_.bad(what + " has scale " + std::to_string(scale) + " (must be finite and > 0)");
    if (zeroPoint < lowest || zeroPoint > highest)
      throw file_.bad(what + " has zero point " + std::to_string(zeroPoint) + " outside [" +
                      std::to_string(lowest) + ", " + std::to_string(highest) + "] for " +
                      typeName(info.fileType));
    info.quant.scales.push_back(scale);
    info.quant.zeroPoints.push_back(int32_t(zeroPoint));
  }
  return info;
}

Converter::Held &Converter::held(int32_t t) {
  if (held_.size() != file_.numTensors())
    held_.resize(file_.numTensors());
  return held_[size_t(t)];
}

std::string Converter::tensorName(int32_t t) const {
  const tflite::Tensor &tensor = file_.tensor(t);
  std::string name = tensor.name() ? tensor.name()->str() : "";
  return name.empty() ? "tensor_" + std::to_string(t) : name;
}

void Converter::addGraphInputs() {
  for (int32_t t : *file_.subgraph().inputs()) {
    if (held(t).fileLayout)
      throw file_.bad(file_.describeTensor(t) + " is listed twice as a subgraph input");
    if (isConstant(t))
      throw file_.bad(file_.describeTensor(t) + " is a subgraph input and has constant data");
    TensorInfo ti = info(t);
    if (ti.fileType != tflite::TensorType_FLOAT32 && ti.fileType != tflite::TensorType_INT8)
      throw file_.unsupported(file_.describeTensor(t) + ": graph inputs of type " +
                              typeName(ti.fileType) + " are not supported (float32 or int8)");
    if (ti.quantized() && ti.quant.scales.size() != 1)
      throw file_.unsupported(file_.describeTensor(t) + " is a per-channel quantized input");
    const std::string name = tensorName(t);
    Value *input = graph_.addInput(name, TensorType{DType::Float32, ti.shape, {}});
    held(t).fileLayout = ti.quantized() ? quantizeDequantize(input, ti, name) : input;
  }
}

void Converter::markGraphOutputs() {
  for (int32_t t : *file_.subgraph().outputs()) {
    Value *v = value(t);
    if (v->isGraphInput() || v->isGraphOutput)
      throw file_.unsupported(file_.describeTensor(t) +
                              " is a graph input or listed twice as an output: a bundle "
                              "output must be computed");
    if (v->isConstant())
      throw file_.unsupported(file_.describeTensor(t) + ": a constant graph output");
    // The placeholder is named after the tensor: the value computing it
    // takes the name (a Q/DQ pair's float side steps aside).
    const std::string name = tensorName(t);
    if (v->name != name) {
      if (Value *other = graph_.findValue(name))
        graph_.renameValue(other, name + "_float");
      graph_.renameValue(v, name);
    }
    graph_.markOutput(v);
  }
}

bool Converter::int8Io() const {
  for (const auto *list : {file_.subgraph().inputs(), file_.subgraph().outputs()})
    for (int32_t t : *list)
      if (file_.tensor(t).type() == tflite::TensorType_INT8)
        return true;
  return false;
}

Value *Converter::value(int32_t t) {
  Held &h = held(t);
  if (h.fileLayout)
    return h.fileLayout;
  if (h.channelsFirst)
    return h.fileLayout = relayout(h.channelsFirst, kToChannelsLast, tensorName(t) + "_nhwc");
  if (isConstant(t))
    return h.fileLayout = constant(t);
  throw bad("reads " + file_.describeTensor(t) +
            ", which is neither a graph input, a constant nor computed by an earlier operator");
}

Value *Converter::channelsFirst(int32_t t) {
  Held &h = held(t);
  if (h.channelsFirst)
    return h.channelsFirst;
  if (!h.fileLayout && isConstant(t))
    return h.channelsFirst = constant(t, kToChannelsFirst);
  Value *nhwc = value(t);
  if (nhwc->type.rank() != 4)
    throw unsupported(file_.describeTensor(t) + " is " + nhwc->type.str() + "; expected 4-D NHWC");
  return h.channelsFirst = relayout(nhwc, kToChannelsFirst, tensorName(t) + "_nchw");
}

bool Converter::heldChannelsFirst(int32_t t) const {
  return size_t(t) < held_.size() && held_[size_t(t)].channelsFirst && !held_[size_t(t)].fileLayout;
}

Value *Converter::relayout(Value *from, const std::vector<int64_t> &perm, const std::string &name) {
  const Shape to = permuted(from->type.shape, perm);
  Attributes attrs;
  if (sameBytes(from->type.shape, perm))
    return addInferred(Op::Reshape, {from, int64Constant(name + "_shape", to)}, attrs, name, &to)
        ->output();
  attrs.setInts("perm", perm);
  return addInferred(Op::Transpose, {from}, attrs, name, &to)->output();
}

Value *Converter::constant(int32_t t, const std::vector<int64_t> &perm, const Shape &viewAs,
                           const Shape &reshapeTo) {
  TensorInfo ti = info(t);
  ByteSpan data = file_.dataOf(t);
  const size_t elementSize = fileElementSize(ti.fileType);
  const uint64_t needed = uint64_t(numElements(ti.shape)) * elementSize;
  if (data.size != needed)
    throw file_.bad(file_.describeTensor(t) + " of shape " + shapeToString(ti.shape) + " holds " +
                    std::to_string(data.size) + " bytes of data; its shape needs " +
                    std::to_string(needed));
  Shape shape = ti.shape;
  if (!viewAs.empty()) {
    if (numElements(viewAs) != numElements(shape) || (ti.quant.axis > 0))
      fatalInternal("constant " + tensorName(t) + " viewed as " + shapeToString(viewAs));
    shape = viewAs;
  }
  std::vector<uint8_t> bytes(data.data, data.data + data.size);
  QuantParams quant = ti.quant;
  if (!perm.empty()) {
    if (perm.size() != shape.size())
      throw unsupported(file_.describeTensor(t) + " is " + shapeToString(shape) +
                        "; expected rank " + std::to_string(perm.size()));
    bytes = permuteElements(data.data, elementSize, shape, perm);
    if (quant.axis >= 0)
      for (size_t i = 0; i < perm.size(); ++i)
        if (perm[i] == quant.axis) {
          quant.axis = int(i);
          break;
        }
    shape = permuted(shape, perm);
  }
  if (!reshapeTo.empty()) {
    if (numElements(reshapeTo) != numElements(shape) || quant.axis > 0)
      fatalInternal("constant " + tensorName(t) + " reshaped to " + shapeToString(reshapeTo));
    shape = reshapeTo;
  }
  const std::string name = tensorName(t);
  if (!ti.quantized())
    return graph_.addConstant(name, TensorType{plainDType(ti.fileType), shape, {}},
                              std::move(bytes));
  ti.shape = shape;
  ti.quant = quant;
  Value *integers = graph_.addConstant(
      name + "_quantized", TensorType{plainDType(ti.fileType), shape, {}}, std::move(bytes));
  return dequantizeConstant(integers, ti, name);
}

Value *Converter::dequantizeConstant(Value *integers, const TensorInfo &ti,
                                     const std::string &name) {
  const size_t count = ti.quant.scales.size();
  Shape paramShape = count > 1 ? Shape{int64_t(count)} : Shape{};
  Value *scale = floatConstant(name + "_scale", ti.quant.scales, paramShape);
  const DType zpType = plainDType(ti.fileType);
  std::vector<uint8_t> zpBytes(count * dtypeSize(zpType));
  for (size_t i = 0; i < count; ++i) {
    if (zpType == DType::Int8)
      zpBytes[i] = uint8_t(int8_t(ti.quant.zeroPoints[i]));
    else {
      int32_t zp = ti.quant.zeroPoints[i];
      std::memcpy(zpBytes.data() + 4 * i, &zp, 4);
    }
  }
  Value *zp = graph_.addConstant(name + "_zero_point", TensorType{zpType, paramShape, {}},
                                 std::move(zpBytes));
  Attributes attrs;
  if (count > 1)
    attrs.setInt("axis", ti.quant.axis);
  return addInferred(Op::DequantizeLinear, {integers, scale, zp}, attrs, name, nullptr)->output();
}

Value *Converter::quantizeDequantize(Value *real, const TensorInfo &like, const std::string &name) {
  if (like.quant.scales.size() != 1)
    throw file_.unsupported(where() + ": activation '" + name +
                            "' has per-channel quantization; int8 activations have one scale");
  Value *scale = floatConstant(name + "_scale", like.quant.scales);
  Value *zp = graph_.addConstant(name + "_zero_point", TensorType{DType::Int8, {}, {}},
                                 {uint8_t(int8_t(like.quant.zeroPoints[0]))});
  Attributes none;
  Value *q = addInferred(Op::QuantizeLinear, {real, scale, zp}, none, name + "_quantized", nullptr)
                 ->output();
  return addInferred(Op::DequantizeLinear, {q, scale, zp}, none, name + "_dequantized", nullptr)
      ->output();
}

Value *Converter::int64Constant(const std::string &name, const std::vector<int64_t> &values) {
  std::vector<uint8_t> bytes(values.size() * 8);
  copyBytes(bytes.data(), values.data(), bytes.size());
  return graph_.addConstant(name, TensorType{DType::Int64, {int64_t(values.size())}, {}},
                            std::move(bytes));
}

Value *Converter::floatConstant(const std::string &name, const std::vector<float> &values,
                                const Shape &shape) {
  std::vector<uint8_t> bytes(values.size() * 4);
  copyBytes(bytes.data(), values.data(), bytes.size());
  return graph_.addConstant(name, TensorType{DType::Float32, shape, {}}, std::move(bytes));
}

Node *Converter::addInferred(Op op, const std::vector<Value *> &inputs, const Attributes &attrs,
                             const std::string &name, const Shape *expected) {
  Node *node = graph_.addNode(op, graph_.uniqueNodeName(name), inputs, {name});
  node->attrs = attrs;
  try {
    inferNodeTypes(*node);
  } catch (const Error &e) {
    throw Error(e.code(), file_.path() + ": " + where() + ": " + e.what());
  }
  const Value &output = *node->output();
  if (expected && output.type.shape != *expected)
    throw bad("its output '" + name + "' is " + shapeToString(output.type.shape) +
              " by the operator's definition, but the model says " + shapeToString(*expected));
  return node;
}

Node *Converter::emit(Op op, const std::vector<Value *> &inputs, const Attributes &attrs, int32_t t,
                      bool channelsFirst) {
  TensorInfo ti = info(t);
  Held &h = held(t);
  if (h.fileLayout || h.channelsFirst)
    throw bad("writes " + file_.describeTensor(t) +
              ", which an earlier operator, a graph input "
              "or constant data already defines");
  if (channelsFirst && ti.shape.size() != 4)
    fatalInternal(where() + ": channels-first output of rank " + std::to_string(ti.shape.size()));
  const Shape expected = channelsFirst ? permuted(ti.shape, kToChannelsFirst) : ti.shape;
  const std::string name = tensorName(t);
  Node *node = addInferred(op, inputs, attrs, name, &expected);
  Value *real = node->output();
  if (real->type.dtype != DType::Float32 && ti.fileType == tflite::TensorType_FLOAT32)
    throw bad("its output '" + name + "' is float32 in the model, " + real->type.str() +
              " by the operator's definition");
  if (ti.quantized())
    real = quantizeDequantize(real, ti, name);
  (channelsFirst ? h.channelsFirst : h.fileLayout) = real;
  return node;
}

Value *Converter::emitIntermediate(Op op, const std::vector<Value *> &inputs,
                                   const Attributes &attrs, const std::string &name, int32_t like) {
  Value *real = addInferred(op, inputs, attrs, name, nullptr)->output();
  TensorInfo ti = info(like);
  return ti.quantized() ? quantizeDequantize(real, ti, real->name) : real;
}

Value *Converter::quantizeLike(Value *real, int32_t like) {
  return quantizeDequantize(real, info(like), real->name);
}

void Converter::alias(int32_t t, Value *value, bool channelsFirst) {
  Held &h = held(t);
  if (h.fileLayout || h.channelsFirst)
    throw bad("writes " + file_.describeTensor(t) + ", which is already defined");
  (channelsFirst ? h.channelsFirst : h.fileLayout) = value;
}

} // namespace bundlefit::tflite_import
