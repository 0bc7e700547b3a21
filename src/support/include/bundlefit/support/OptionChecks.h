//===- OptionChecks.h - Numbers given on a command line or from Python -----===//
//
// A quantity a user types (a byte count, seconds, a fraction) is checked where
// it comes in, so that no sum or cast downstream can wrap or be undefined: a
// byte count above 1 TiB once made 2^64 - 12000 "static bytes" wrap the RAM
// total into a FITS verdict, and a NaN timeout was printed as -2147483648 s.
// The checks throw Error(Usage) naming the option (or Python argument).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "bundlefit/support/Error.h"

#include <cstdint>
#include <cstdio>
#include <string>

namespace bundlefit {

/// The largest byte count an option, a device file or a cache entry may state
/// (1 TiB): sums of a few dozen of them stay far from 2^64.
constexpr uint64_t kMaxByteCount = uint64_t(1) << 40;

/// The longest time limit or timeout accepted, in seconds (about 115 days):
/// deadlines computed from it cannot overflow a clock.
constexpr double kMaxSeconds = 1e7;

/// Error(Usage) naming `option` unless `bytes` <= kMaxByteCount.
inline void checkByteCount(uint64_t bytes, const std::string &option) {
  if (bytes > kMaxByteCount)
    throw Error(ExitCode::Usage, option + " " + std::to_string(bytes) +
                                     ": more than 1 TiB (1099511627776 bytes), the largest "
                                     "byte count bundlefit accepts");
}

/// Error(Usage) naming `option` unless `value` is a finite number in
/// [min, max] (NaN and infinities are refused).
inline void checkFiniteRange(double value, const std::string &option, double min, double max) {
  if (!(value >= min && value <= max)) {
    char text[160];
    std::snprintf(text, sizeof text, "%s %g: expected a finite number from %g to %g",
                  option.c_str(), value, min, max);
    throw Error(ExitCode::Usage, text);
  }
}

} // namespace bundlefit
