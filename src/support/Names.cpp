#include "bundlefit/support/Names.h"

#include <cctype>

namespace bundlefit {

std::string legalizeName(const std::string &name) {
  std::string result;
  for (char c : name)
    result += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (result.empty() || std::isdigit(static_cast<unsigned char>(result[0])))
    result = "_" + result;
  return result;
}

std::string networkNameFromPath(const std::string &path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  auto dot = base.find_last_of('.');
  if (dot != std::string::npos && dot > 0)
    base = base.substr(0, dot);
  return legalizeName(base);
}

std::string toUpper(std::string text) {
  for (char &c : text)
    c = char(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

} // namespace bundlefit
