//===- Format.h - Numbers as the reports print them -------------*- C++ -*-===//
#pragma once

#include <cstdint>
#include <string>

namespace bundlefit {

/// 1724608 -> "1,724,608".
std::string withThousands(uint64_t value);

} // namespace bundlefit
