//===- CheckedArithmetic.h - Sums and roundings that cannot wrap -*- C++ -*-===//
//
// Sizes, offsets and step numbers reach the planner from files and models.
// Every size or count derived from them goes through these helpers, which
// report overflow instead of wrapping, and stays under kMaxPlannerBytes so
// that the planner's own sums (offset + size, a section's bytes, a signed
// delta) never wrap either.
//
//===----------------------------------------------------------------------===//
#ifndef BUNDLEFIT_PLANNER_CHECKEDARITHMETIC_H
#define BUNDLEFIT_PLANNER_CHECKEDARITHMETIC_H

#include <cstdint>
#include <numeric>

namespace bundlefit::planner {

/// The most bytes a problem may need in total: the sum over buffers of
/// footprint + alignment (an upper bound on any arena a strategy can
/// produce). 2^62 leaves room for one more addition and a signed cast.
inline constexpr uint64_t kMaxPlannerBytes = uint64_t(1) << 62;

/// a + b, or false when it does not fit in 64 bits.
inline bool checkedAdd(uint64_t a, uint64_t b, uint64_t &sum) {
  return !__builtin_add_overflow(a, b, &sum);
}

/// a * b, or false when it does not fit in 64 bits.
inline bool checkedMul(uint64_t a, uint64_t b, uint64_t &product) {
  return !__builtin_mul_overflow(a, b, &product);
}

/// value rounded up to a multiple of alignment (0 and 1 mean none), or false
/// when the result does not fit in 64 bits.
inline bool checkedAlignUp(uint64_t value, uint64_t alignment, uint64_t &rounded) {
  if (alignment <= 1) {
    rounded = value;
    return true;
  }
  uint64_t padded;
  if (!checkedAdd(value, alignment - 1, padded))
    return false;
  rounded = padded / alignment * alignment;
  return true;
}

/// lcm(a, b), or false when it does not fit in 64 bits.
inline bool checkedLcm(uint64_t a, uint64_t b, uint64_t &lcm) {
  if (a == 0 || b == 0) {
    lcm = 0;
    return true;
  }
  return checkedMul(a / std::gcd(a, b), b, lcm);
}

} // namespace bundlefit::planner

#endif // BUNDLEFIT_PLANNER_CHECKEDARITHMETIC_H
