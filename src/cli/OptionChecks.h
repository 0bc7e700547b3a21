//===- OptionChecks.h - CLI11 checks for byte counts and seconds ------------===//
//
// The command-line side of support/OptionChecks.h: a byte count is an integer
// from 0 to 1 TiB, seconds and fractions are finite (NaN and inf refused), so
// an option value out of range is a usage error naming the option (exit 2)
// instead of a wrapped sum or an undefined cast later.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace bundlefit {

/// An integer from 0 to kMaxByteCount (1 TiB).
CLI::Validator byteCountCheck();

/// A finite number of seconds from 0 to kMaxSeconds.
CLI::Validator secondsCheck();

/// A finite number from `min` to `max`.
CLI::Validator finiteCheck(double min, double max);

/// An integer power of two from `min` to `max` (an alignment).
CLI::Validator powerOfTwoCheck(uint64_t min, uint64_t max);

/// The planner's work units per second of a time limit as help text says
/// it ("4.4 x 10^8"), from the constant, so that the help cannot go stale.
std::string workUnitsPerSecondText();

} // namespace bundlefit
