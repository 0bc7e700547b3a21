//===- Format.h - Numbers as the reports print them -------------*- C++ -*-===//
#pragma once

#include <cstdint>
#include <string>

namespace bundlefit {

/// 1724608 -> "1,724,608".
std::string withThousands(uint64_t value);

/// `text` with every byte that is not part of valid UTF-8 written as "\xNN"
/// (a Latin-1 "caf\xe9.onnx" stays readable and can be told apart), and
/// control characters but tab and newline as "\xNN" too: model names and
/// file names reach JSON, HTML and terminals, which all need valid UTF-8.
std::string escapeInvalidUtf8(const std::string &text);

} // namespace bundlefit
