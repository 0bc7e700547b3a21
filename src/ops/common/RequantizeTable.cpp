//===- RequantizeTable.cpp - int8 -> int8 at other parameters -------------===//
#include "common/RequantizeTable.h"

#include <algorithm>
#include <cmath>

namespace bundlefit {

std::array<int8_t, 256> requantizeTable(float inScale, int32_t inZeroPoint, float outScale,
                                        int32_t outZeroPoint, int32_t lo, int32_t hi) {
  std::array<int8_t, 256> table{};
  for (int32_t x = -128; x <= 127; ++x) {
    // float32, the product and the quotient each rounded as onnxruntime
    // rounds them; nearbyint rounds half to even (default rounding mode).
    const float real = inScale * float(x - inZeroPoint);
    const float rounded = std::nearbyint(real / outScale);
    const int64_t q = std::isfinite(rounded)
                          ? int64_t(std::clamp(rounded, -1e9f, 1e9f)) + outZeroPoint
                          : outZeroPoint;
    table[size_t(x + 128)] = int8_t(std::clamp<int64_t>(q, lo, hi));
  }
  return table;
}

std::vector<int32_t> packTable(const std::array<int8_t, 256> &table) {
  std::vector<int32_t> words(64, 0);
  for (size_t i = 0; i < 256; ++i)
    words[i / 4] = int32_t(uint32_t(words[i / 4]) | (uint32_t(uint8_t(table[i])) << (8 * (i % 4))));
  return words;
}

} // namespace bundlefit
