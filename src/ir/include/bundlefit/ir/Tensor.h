//===- Tensor.h - A typed buffer: a type and its element bytes -------------===//
#pragma once

#include "bundlefit/ir/TensorType.h"

#include <cstdint>
#include <vector>

namespace bundlefit {

/// A tensor value: its type and its little-endian element bytes.
struct Tensor {
  TensorType type;
  std::vector<uint8_t> bytes;

  Tensor() = default;
  explicit Tensor(const TensorType &t) : type(t), bytes(t.bytes()) {}
  Tensor(const TensorType &t, std::vector<uint8_t> data) : type(t), bytes(std::move(data)) {}

  int64_t numElements() const { return type.numElements(); }
  template <typename T> T *data() { return reinterpret_cast<T *>(bytes.data()); }
  template <typename T> const T *data() const { return reinterpret_cast<const T *>(bytes.data()); }
  /// Element `i` converted to double, whatever the dtype.
  double at(int64_t i) const;

  static Tensor fromFloats(const Shape &shape, const std::vector<float> &values);
  static Tensor fromInts(const Shape &shape, const std::vector<int64_t> &values);
};

} // namespace bundlefit
