//===- TensorType.h - Element types and static shapes ----------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit {

/// Element types the IR carries. Int64/Bool/Int32 appear in shape arithmetic
/// that constant folding removes; Float32 and Int8 reach code generation.
/// Int16 last: the others keep their values (TFLite int16x8 activations).
enum class DType : uint8_t { Float32, Int8, UInt8, Int32, Int64, Bool, Int16 };

size_t dtypeSize(DType type);
const char *dtypeName(DType type);
/// Parses "float", "float32", "int8", "uint8", "int16", "int32", "int64", "bool".
bool parseDType(const std::string &text, DType &out);

using Shape = std::vector<int64_t>;

int64_t numElements(const Shape &shape);
std::string shapeToString(const Shape &shape); // "[1,3,224,224]"

/// Affine quantization parameters: real = scale * (q - zeroPoint). One scale
/// per tensor, or one per channel along `axis` (weights).
struct QuantParams {
  std::vector<float> scales;
  std::vector<int32_t> zeroPoints;
  int axis = -1;
  bool empty() const { return scales.empty(); }
};

struct TensorType {
  DType dtype = DType::Float32;
  Shape shape;
  QuantParams quant;

  int64_t numElements() const { return bundlefit::numElements(shape); }
  uint64_t bytes() const { return uint64_t(numElements()) * dtypeSize(dtype); }
  size_t rank() const { return shape.size(); }
  std::string str() const; // "float32[1,3,224,224]"
  bool sameShapeAndType(const TensorType &other) const {
    return dtype == other.dtype && shape == other.shape;
  }
};

} // namespace bundlefit
