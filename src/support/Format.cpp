//===- Format.cpp - Numbers as the reports print them ---------------------===//
#include "bundlefit/support/Format.h"

namespace bundlefit {

std::string withThousands(uint64_t value) {
  std::string digits = std::to_string(value);
  std::string result;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      result += ',';
    result += digits[i];
  }
  return result;
}

} // namespace bundlefit
