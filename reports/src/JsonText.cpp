#include "bundlefit/reports/JsonText.h"

#include "bundlefit/support/Format.h"

namespace bundlefit {

namespace {

/// A copy of `value` with every string and key escaped where needed.
nlohmann::json escaped(const nlohmann::json &value) {
  if (value.is_string())
    return escapeInvalidUtf8(value.get_ref<const std::string &>());
  if (value.is_array()) {
    nlohmann::json copy = nlohmann::json::array();
    for (const nlohmann::json &item : value)
      copy.push_back(escaped(item));
    return copy;
  }
  if (value.is_object()) {
    nlohmann::json copy = nlohmann::json::object();
    for (auto it = value.begin(); it != value.end(); ++it)
      copy[escapeInvalidUtf8(it.key())] = escaped(it.value());
    return copy;
  }
  return value;
}

} // namespace

std::string jsonText(const nlohmann::json &report, int indent) {
  try {
    return report.dump(indent); // the common case: every string valid already
  } catch (const nlohmann::json::type_error &) {
    return escaped(report).dump(indent);
  }
}

} // namespace bundlefit
