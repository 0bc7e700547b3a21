//===- CheckedMath.h - Sizes, counts and offsets that cannot wrap ----------===//
//
// Every size, count, offset or lifetime bundlefit computes from an input file
// or option goes through these helpers: a product or sum that does not fit
// returns std::nullopt instead of wrapping, so the caller can report the file
// and the field at fault (exit 4) instead of planning a wrapped arena.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/support/Error.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace bundlefit {

/// The largest tensor bundlefit accepts, in bytes (1 TiB). No target it
/// compiles for addresses more, and the limit keeps sums over a million
/// buffers far from 2^63, so planner and report arithmetic cannot wrap.
constexpr uint64_t kMaxTensorBytes = uint64_t(1) << 40;

/// The largest address space of a 32-bit core: every region and the whole
/// bundle must stay below it.
constexpr uint64_t k32BitAddressSpace = uint64_t(1) << 32;

/// a * b and a + b for int64_t or uint64_t, or nullopt when the result does
/// not fit the type.
template <typename T> std::optional<T> checkedMul(T a, T b) {
  T result;
  if (__builtin_mul_overflow(a, b, &result))
    return std::nullopt;
  return result;
}

template <typename T> std::optional<T> checkedAdd(T a, T b) {
  T result;
  if (__builtin_add_overflow(a, b, &result))
    return std::nullopt;
  return result;
}

/// `value` rounded up to a multiple of `alignment` (0 and 1 leave it as it
/// is), or nullopt when that does not fit in 64 bits.
inline std::optional<uint64_t> checkedAlignUp(uint64_t value, uint64_t alignment) {
  if (alignment <= 1)
    return value;
  std::optional<uint64_t> end = checkedAdd(value, alignment - 1);
  if (!end)
    return std::nullopt;
  return *end / alignment * alignment;
}

/// checkedAlignUp for sizes already bounded where they came in (a tensor by
/// kMaxTensorBytes, a region by the 32-bit address space): a wrap there is a
/// bug in bundlefit, reported as one (fatalInternal), never a wrapped size.
inline uint64_t alignUp(uint64_t value, uint64_t alignment) {
  std::optional<uint64_t> aligned = checkedAlignUp(value, alignment);
  if (!aligned)
    fatalInternal("alignUp(" + std::to_string(value) + ", " + std::to_string(alignment) +
                  ") overflows 64 bits");
  return *aligned;
}

/// The element count of `dims`, or nullopt when a dim is negative or the
/// product does not fit in int64.
inline std::optional<int64_t> checkedElementCount(const std::vector<int64_t> &dims) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0)
      return std::nullopt;
    std::optional<int64_t> next = checkedMul(count, dim);
    if (!next)
      return std::nullopt;
    count = *next;
  }
  return count;
}

/// count * elementSize, or nullopt past kMaxTensorBytes (or on overflow).
inline std::optional<uint64_t> checkedTensorBytes(const std::vector<int64_t> &dims,
                                                  uint64_t elementSize) {
  std::optional<int64_t> count = checkedElementCount(dims);
  if (!count)
    return std::nullopt;
  std::optional<uint64_t> bytes = checkedMul(uint64_t(*count), elementSize);
  if (!bytes || *bytes > kMaxTensorBytes)
    return std::nullopt;
  return bytes;
}

} // namespace bundlefit
