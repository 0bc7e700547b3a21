//===- Templates.cpp - Filling the generated files' templates -------------===//
#include "Templates.h"

#include "bundlefit/support/Error.h"

#include <cctype>
#include <cstdio>
#include <set>

namespace bundlefit {
namespace templates {

namespace {

bool isMarkerChar(char c) {
  return std::isupper((unsigned char)c) || std::isdigit((unsigned char)c) || c == '_';
}

/// True when text[from, to) is only spaces and tabs.
bool blank(const std::string &text, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i)
    if (text[i] != ' ' && text[i] != '\t')
      return false;
  return true;
}

} // namespace

std::string fillTemplate(const std::string &text,
                         const std::map<std::string, std::string> &values) {
  std::string out;
  out.reserve(text.size());
  std::set<std::string> used;
  size_t i = 0;
  while (i < text.size()) {
    size_t at = text.find('@', i);
    if (at == std::string::npos) {
      out.append(text, i, std::string::npos);
      break;
    }
    size_t end = at + 1;
    while (end < text.size() && isMarkerChar(text[end]))
      ++end;
    if (end == at + 1 || end == text.size() || text[end] != '@') {
      out.append(text, i, end - i); // a lone '@' is text
      i = end;
      continue;
    }
    std::string name = text.substr(at + 1, end - at - 1);
    auto value = values.find(name);
    if (value == values.end())
      fatalInternal("template marker @" + name + "@ has no value");
    used.insert(name);
    size_t lineStart = text.rfind('\n', at);
    lineStart = lineStart == std::string::npos ? 0 : lineStart + 1;
    size_t lineEnd = text.find('\n', end);
    if (lineEnd == std::string::npos)
      lineEnd = text.size();
    if (value->second.empty() && lineStart >= i && blank(text, lineStart, at) &&
        blank(text, end + 1, lineEnd)) {
      out.append(text, i, lineStart - i); // drop the marker's whole line
      i = lineEnd < text.size() ? lineEnd + 1 : lineEnd;
      continue;
    }
    out.append(text, i, at - i);
    out += value->second;
    i = end + 1;
  }
  for (const auto &[name, value] : values)
    if (!used.count(name))
      fatalInternal("template value " + name + " has no @" + name + "@ marker");
  return out;
}

std::string withoutFinalNewline(std::string text) {
  if (!text.empty() && text.back() == '\n')
    text.pop_back();
  return text;
}

std::string hexAddress(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%08llx", (unsigned long long)value);
  return text;
}

} // namespace templates
} // namespace bundlefit
