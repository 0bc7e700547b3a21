//===- OnnxTensors.cpp - ONNX TensorProto decoding -------------------------===//

#include "OnnxTensors.h"

#include "bundlefit/support/Bytes.h"
#include "bundlefit/support/CheckedMath.h"
#include "bundlefit/support/Error.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

namespace bundlefit {
namespace onnximport {

using onnx::TensorProto;

const char *onnxTypeName(int32_t onnxType) {
  switch (onnxType) {
  case TensorProto::FLOAT:
    return "float";
  case TensorProto::UINT8:
    return "uint8";
  case TensorProto::INT8:
    return "int8";
  case TensorProto::UINT16:
    return "uint16";
  case TensorProto::INT16:
    return "int16";
  case TensorProto::INT32:
    return "int32";
  case TensorProto::INT64:
    return "int64";
  case TensorProto::STRING:
    return "string";
  case TensorProto::BOOL:
    return "bool";
  case TensorProto::FLOAT16:
    return "float16";
  case TensorProto::DOUBLE:
    return "double";
  case TensorProto::UINT32:
    return "uint32";
  case TensorProto::UINT64:
    return "uint64";
  case TensorProto::COMPLEX64:
    return "complex64";
  case TensorProto::COMPLEX128:
    return "complex128";
  case TensorProto::BFLOAT16:
    return "bfloat16";
  default:
    return "undefined";
  }
}

bool dtypeFromOnnx(int32_t onnxType, DType &out, bool *converted) {
  bool widened = false;
  switch (onnxType) {
  case TensorProto::FLOAT:
    out = DType::Float32;
    break;
  case TensorProto::UINT8:
    out = DType::UInt8;
    break;
  case TensorProto::INT8:
    out = DType::Int8;
    break;
  case TensorProto::INT32:
    out = DType::Int32;
    break;
  case TensorProto::INT64:
    out = DType::Int64;
    break;
  case TensorProto::BOOL:
    out = DType::Bool;
    break;
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
  case TensorProto::DOUBLE:
    out = DType::Float32;
    widened = true;
    break;
  default:
    return false;
  }
  if (converted)
    *converted = widened;
  return true;
}

bool hasExternalData(const TensorProto &tensor) {
  return tensor.has_data_location() && tensor.data_location() == TensorProto::EXTERNAL;
}

namespace {

float halfToFloat(uint16_t half) {
  uint32_t sign = uint32_t(half & 0x8000) << 16;
  uint32_t exponent = (half >> 10) & 0x1f;
  uint32_t mantissa = half & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) { // inf / nan
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) { // normal
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) { // zero
    bits = sign;
  } else { // subnormal: renormalise
    exponent = 113;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
  }
  float result;
  std::memcpy(&result, &bits, sizeof(result));
  return result;
}

float bfloat16ToFloat(uint16_t value) {
  uint32_t bits = uint32_t(value) << 16;
  float result;
  std::memcpy(&result, &bits, sizeof(result));
  return result;
}

/// Bytes per element in raw_data, 0 for types without a fixed size.
size_t onnxElementSize(int32_t onnxType) {
  switch (onnxType) {
  case TensorProto::UINT8:
  case TensorProto::INT8:
  case TensorProto::BOOL:
    return 1;
  case TensorProto::UINT16:
  case TensorProto::INT16:
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    return 2;
  case TensorProto::FLOAT:
  case TensorProto::INT32:
  case TensorProto::UINT32:
    return 4;
  case TensorProto::INT64:
  case TensorProto::UINT64:
  case TensorProto::DOUBLE:
  case TensorProto::COMPLEX64:
    return 8;
  case TensorProto::COMPLEX128:
    return 16;
  default:
    return 0;
  }
}

template <typename T> void storeElement(std::vector<uint8_t> &bytes, size_t index, T value) {
  copyBytes(bytes.data() + index * sizeof(T), &value, sizeof(T));
}

/// Writes element `index` of an integer/bool tensor from int32_data.
void storeInt(std::vector<uint8_t> &bytes, DType dtype, size_t index, int64_t intValue) {
  switch (dtype) {
  case DType::Float32:
    storeElement(bytes, index, float(intValue));
    break;
  case DType::Int8:
    storeElement(bytes, index, int8_t(intValue));
    break;
  case DType::UInt8:
    storeElement(bytes, index, uint8_t(intValue));
    break;
  case DType::Int16:
    storeElement(bytes, index, int16_t(intValue));
    break;
  case DType::Int32:
    storeElement(bytes, index, int32_t(intValue));
    break;
  case DType::Int64:
    storeElement(bytes, index, intValue);
    break;
  case DType::Bool:
    storeElement(bytes, index, uint8_t(intValue != 0));
    break;
  }
}

} // namespace

DecodedTensor decodeTensor(const TensorProto &tensor, const std::string &what) {
  const int32_t onnxType = tensor.data_type();
  if (hasExternalData(tensor)) {
    std::string location;
    for (const auto &entry : tensor.external_data())
      if (entry.key() == "location")
        location = entry.value();
    throw Error(ExitCode::BadInputFile,
                what + " keeps its data in an external file ('" + location +
                    "'); bundlefit reads self-contained models only (save the "
                    "model without external data)");
  }
  DecodedTensor result;
  if (!dtypeFromOnnx(onnxType, result.type.dtype))
    throw Error(ExitCode::Unsupported, what + " has element type " + onnxTypeName(onnxType) +
                                           ", which bundlefit does not support");
  for (int64_t dim : tensor.dims()) {
    if (dim < 0)
      throw Error(ExitCode::BadInputFile,
                  what + " has an invalid dimension " + std::to_string(dim));
    result.type.shape.push_back(dim);
  }
  const DType dtype = result.type.dtype;
  // Sizes come from the file: check them before anything is allocated.
  std::optional<uint64_t> totalBytes = checkedTensorBytes(result.type.shape, dtypeSize(dtype));
  if (!totalBytes)
    throw Error(ExitCode::BadInputFile, what + " claims shape " + shapeToString(result.type.shape) +
                                            ", more than bundlefit's limit of " +
                                            std::to_string(kMaxTensorBytes >> 30) +
                                            " GiB per tensor");
  const uint64_t count = *totalBytes / dtypeSize(dtype);

  auto mismatch = [&](const std::string &field, uint64_t have) {
    return Error(ExitCode::BadInputFile, what + " of type " + onnxTypeName(onnxType) +
                                             shapeToString(result.type.shape) + " needs " +
                                             std::to_string(count) + " elements, " + field +
                                             " holds " + std::to_string(have));
  };
  const bool hasRaw = tensor.has_raw_data();
  uint64_t held = 0;
  const char *field = "raw_data";
  if (hasRaw) {
    const size_t elementSize = onnxElementSize(onnxType);
    const std::string &raw = tensor.raw_data();
    held = elementSize ? raw.size() / elementSize : 0;
    if (!elementSize || raw.size() % elementSize || held != count)
      throw mismatch(field, held);
  } else {
    switch (onnxType) {
    case TensorProto::FLOAT:
      field = "float_data";
      held = tensor.float_data_size();
      break;
    case TensorProto::DOUBLE:
      field = "double_data";
      held = tensor.double_data_size();
      break;
    case TensorProto::INT64:
      field = "int64_data";
      held = tensor.int64_data_size();
      break;
    default:
      field = "int32_data";
      held = tensor.int32_data_size();
      break;
    }
    if (held != count)
      throw mismatch(field, held);
  }
  result.bytes.assign(*totalBytes, 0);

  if (hasRaw) {
    const std::string &raw = tensor.raw_data();
    const auto *src = reinterpret_cast<const uint8_t *>(raw.data());
    switch (onnxType) {
    case TensorProto::FLOAT:
    case TensorProto::UINT8:
    case TensorProto::INT8:
    case TensorProto::INT32:
    case TensorProto::INT64:
      copyBytes(result.bytes.data(), src, raw.size()); // raw may be empty
      break;
    case TensorProto::BOOL:
      for (size_t i = 0; i < count; ++i)
        result.bytes[i] = src[i] != 0;
      break;
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      for (size_t i = 0; i < count; ++i) {
        uint16_t bits;
        std::memcpy(&bits, src + 2 * i, 2);
        storeElement(result.bytes, i,
                     onnxType == TensorProto::FLOAT16 ? halfToFloat(bits) : bfloat16ToFloat(bits));
      }
      break;
    case TensorProto::DOUBLE:
      for (size_t i = 0; i < count; ++i) {
        double value;
        std::memcpy(&value, src + 8 * i, 8);
        storeElement(result.bytes, i, float(value));
      }
      break;
    }
    return result;
  }

  // Typed fields (ONNX spec: which repeated field holds which data type).
  switch (onnxType) {
  case TensorProto::FLOAT:
    for (size_t i = 0; i < count; ++i)
      storeElement(result.bytes, i, tensor.float_data(int(i)));
    break;
  case TensorProto::DOUBLE:
    for (size_t i = 0; i < count; ++i)
      storeElement(result.bytes, i, float(tensor.double_data(int(i))));
    break;
  case TensorProto::INT64:
    for (size_t i = 0; i < count; ++i)
      storeElement(result.bytes, i, tensor.int64_data(int(i)));
    break;
  case TensorProto::FLOAT16:
  case TensorProto::BFLOAT16:
    for (size_t i = 0; i < count; ++i) {
      auto bits = uint16_t(tensor.int32_data(int(i)));
      storeElement(result.bytes, i,
                   onnxType == TensorProto::FLOAT16 ? halfToFloat(bits) : bfloat16ToFloat(bits));
    }
    break;
  default: // INT32, INT8, UINT8, BOOL live in int32_data.
    for (size_t i = 0; i < count; ++i)
      storeInt(result.bytes, dtype, i, tensor.int32_data(int(i)));
    break;
  }
  return result;
}

} // namespace onnximport
} // namespace bundlefit
