#include "bundlefit/ir/Tensor.h"

#include "bundlefit/support/Bytes.h"
#include "bundlefit/support/Error.h"

#include <cstring>

namespace bundlefit {

double Tensor::at(int64_t i) const {
  switch (type.dtype) {
  case DType::Float32:
    return data<float>()[i];
  case DType::Int8:
    return data<int8_t>()[i];
  case DType::UInt8:
    return data<uint8_t>()[i];
  case DType::Int16:
    return data<int16_t>()[i];
  case DType::Int32:
    return data<int32_t>()[i];
  case DType::Int64:
    return double(data<int64_t>()[i]);
  case DType::Bool:
    return data<uint8_t>()[i] ? 1.0 : 0.0;
  }
  fatalInternal("unknown dtype");
}

Tensor Tensor::fromFloats(const Shape &shape, const std::vector<float> &values) {
  Tensor tensor(TensorType{DType::Float32, shape, {}});
  if (int64_t(values.size()) != tensor.numElements())
    fatalInternal("Tensor::fromFloats: element count does not match shape");
  copyBytes(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

Tensor Tensor::fromInts(const Shape &shape, const std::vector<int64_t> &values) {
  Tensor tensor(TensorType{DType::Int64, shape, {}});
  if (int64_t(values.size()) != tensor.numElements())
    fatalInternal("Tensor::fromInts: element count does not match shape");
  copyBytes(tensor.bytes.data(), values.data(), tensor.bytes.size());
  return tensor;
}

} // namespace bundlefit
