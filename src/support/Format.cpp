//===- Format.cpp - Numbers as the reports print them ---------------------===//
#include "bundlefit/support/Format.h"

#include <cstdint>

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

namespace {

/// The length of the valid UTF-8 sequence starting at `text[i]`, or 0.
size_t utf8SequenceLength(const std::string &text, size_t i) {
  const unsigned char lead = static_cast<unsigned char>(text[i]);
  size_t length;
  uint32_t min;
  if (lead < 0x80)
    return 1;
  if (lead >= 0xC2 && lead <= 0xDF)
    length = 2, min = 0x80;
  else if (lead >= 0xE0 && lead <= 0xEF)
    length = 3, min = 0x800;
  else if (lead >= 0xF0 && lead <= 0xF4)
    length = 4, min = 0x10000;
  else
    return 0;
  if (i + length > text.size())
    return 0;
  uint32_t code = lead & (0x7F >> length);
  for (size_t k = 1; k < length; ++k) {
    const unsigned char next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80)
      return 0;
    code = code << 6 | (next & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
    return 0; // overlong, past Unicode, or a surrogate
  return length;
}

} // namespace

std::string escapeInvalidUtf8(const std::string &text) {
  static const char hex[] = "0123456789ABCDEF";
  std::string result;
  result.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char byte = static_cast<unsigned char>(text[i]);
    const size_t length = utf8SequenceLength(text, i);
    if (length == 0 || (byte < 0x20 && byte != '\t' && byte != '\n') || byte == 0x7F) {
      result += "\\x";
      result += hex[byte >> 4];
      result += hex[byte & 15];
      ++i;
      continue;
    }
    result.append(text, i, length);
    i += length;
  }
  return result;
}

} // namespace bundlefit
