//===- OptionChecks.cpp - CLI11 checks for byte counts and seconds ----------===//
#include "OptionChecks.h"

#include "bundlefit/planner/Exact.h"
#include "bundlefit/support/OptionChecks.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace bundlefit {

namespace {
std::string shortNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}
} // namespace

CLI::Validator byteCountCheck() {
  return CLI::Validator(
      [](std::string &text) -> std::string {
        const char *begin = text.c_str();
        char *end = nullptr;
        errno = 0;
        unsigned long long value = std::strtoull(begin, &end, 10);
        if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])) || *end != '\0' ||
            errno == ERANGE || value > kMaxByteCount)
          return text + ": expected a byte count from 0 to 1099511627776 (1 TiB)";
        return "";
      },
      "BYTES");
}

CLI::Validator finiteCheck(double min, double max) {
  return CLI::Validator(
      [min, max](std::string &text) -> std::string {
        char *end = nullptr;
        double value = std::strtod(text.c_str(), &end);
        if (text.empty() || *end != '\0' || !(value >= min && value <= max))
          return text + ": expected a finite number from " + shortNumber(min) + " to " +
                 shortNumber(max);
        return "";
      },
      "NUMBER");
}

CLI::Validator powerOfTwoCheck(uint64_t min, uint64_t max) {
  return CLI::Validator(
      [min, max](std::string &text) -> std::string {
        char *end = nullptr;
        errno = 0;
        unsigned long long value = std::strtoull(text.c_str(), &end, 10);
        if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0])) || *end != '\0' ||
            errno == ERANGE || value < min || value > max || (value & (value - 1)) != 0)
          return text + ": expected a power of two from " + std::to_string(min) + " to " +
                 std::to_string(max);
        return "";
      },
      "N");
}

CLI::Validator secondsCheck() { return finiteCheck(0, kMaxSeconds); }

std::string workUnitsPerSecondText() {
  const double rate = double(planner::kWorkUnitsPerSecond);
  const int exponent = int(std::floor(std::log10(rate)));
  char text[32];
  std::snprintf(text, sizeof text, "%.2g x 10^%d", rate / std::pow(10.0, exponent), exponent);
  return text;
}

} // namespace bundlefit
