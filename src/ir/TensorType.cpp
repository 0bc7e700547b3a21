#include "bundlefit/ir/TensorType.h"

#include "bundlefit/support/Error.h"

namespace bundlefit {

size_t dtypeSize(DType type) {
  switch (type) {
  case DType::Float32:
    return 4;
  case DType::Int8:
    return 1;
  case DType::UInt8:
    return 1;
  case DType::Int16:
    return 2;
  case DType::Int32:
    return 4;
  case DType::Int64:
    return 8;
  case DType::Bool:
    return 1;
  }
  fatalInternal("unknown dtype");
}

const char *dtypeName(DType type) {
  switch (type) {
  case DType::Float32:
    return "float32";
  case DType::Int8:
    return "int8";
  case DType::UInt8:
    return "uint8";
  case DType::Int16:
    return "int16";
  case DType::Int32:
    return "int32";
  case DType::Int64:
    return "int64";
  case DType::Bool:
    return "bool";
  }
  fatalInternal("unknown dtype");
}

bool parseDType(const std::string &text, DType &out) {
  if (text == "float" || text == "float32") {
    out = DType::Float32;
    return true;
  }
  if (text == "int8" || text == "int8q") {
    out = DType::Int8;
    return true;
  }
  if (text == "uint8") {
    out = DType::UInt8;
    return true;
  }
  if (text == "int16") {
    out = DType::Int16;
    return true;
  }
  if (text == "int32") {
    out = DType::Int32;
    return true;
  }
  if (text == "int64") {
    out = DType::Int64;
    return true;
  }
  if (text == "bool") {
    out = DType::Bool;
    return true;
  }
  return false;
}

int64_t numElements(const Shape &shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

std::string shapeToString(const Shape &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

std::string TensorType::str() const { return std::string(dtypeName(dtype)) + shapeToString(shape); }

} // namespace bundlefit
