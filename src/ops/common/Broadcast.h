//===- Broadcast.h - N-D index helpers for the reference kernels -----------===//
//
// Row-major strides, an odometer over N-D coordinates, and the numpy
// broadcasting map "which input element does output element i read".
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/ir/TensorType.h"

#include <cstdint>
#include <vector>

namespace bundlefit {

/// Element strides of a row-major (C order) tensor of `shape`.
inline std::vector<int64_t> rowMajorStrides(const Shape &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return strides;
}

/// Advances `coords` to the next row-major position inside `shape` (the last
/// dim moves fastest). Returns false after the last position (coords wrap to 0).
inline bool nextCoords(std::vector<int64_t> &coords, const Shape &shape) {
  for (size_t i = coords.size(); i-- > 0;) {
    if (++coords[i] < shape[i])
      return true;
    coords[i] = 0;
  }
  return false;
}

/// For each element of `outShape` (in row-major order), the row-major index
/// of the element of `inShape` it reads under numpy broadcasting: inShape is
/// right-aligned against outShape and its size-1 dims repeat.
inline std::vector<int64_t> broadcastIndexMap(const Shape &inShape, const Shape &outShape) {
  size_t rank = outShape.size();
  size_t offset = rank - inShape.size();
  std::vector<int64_t> inStrides = rowMajorStrides(inShape);
  // Stride per output dim: 0 where the input is missing or broadcast.
  std::vector<int64_t> strides(rank, 0);
  for (size_t i = 0; i < inShape.size(); ++i)
    strides[offset + i] = inShape[i] == 1 ? 0 : inStrides[i];

  std::vector<int64_t> map;
  map.reserve(size_t(numElements(outShape)));
  if (numElements(outShape) == 0)
    return map;
  std::vector<int64_t> coords(rank, 0);
  do {
    int64_t index = 0;
    for (size_t i = 0; i < rank; ++i)
      index += coords[i] * strides[i];
    map.push_back(index);
  } while (nextCoords(coords, outShape));
  return map;
}

} // namespace bundlefit
