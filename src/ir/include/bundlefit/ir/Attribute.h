//===- Attribute.h - Node attributes ---------------------------------------===//
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace bundlefit {

/// One ONNX-style attribute. Only the field matching `kind` is meaningful.
struct Attribute {
  enum class Kind { Int, Float, String, Ints, Floats, Strings };
  Kind kind = Kind::Int;
  int64_t i = 0;
  float f = 0.0f;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
};

/// A node's attributes with typed getters that fall back to a default.
class Attributes {
public:
  bool has(const std::string &name) const { return map_.count(name) != 0; }
  const Attribute *find(const std::string &name) const;

  int64_t getInt(const std::string &name, int64_t fallback) const;
  float getFloat(const std::string &name, float fallback) const;
  std::string getString(const std::string &name, const std::string &fallback) const;
  std::vector<int64_t> getInts(const std::string &name,
                               const std::vector<int64_t> &fallback = {}) const;
  std::vector<float> getFloats(const std::string &name,
                               const std::vector<float> &fallback = {}) const;

  void setInt(const std::string &name, int64_t value);
  void setFloat(const std::string &name, float value);
  void setString(const std::string &name, const std::string &value);
  void setInts(const std::string &name, const std::vector<int64_t> &value);
  void setFloats(const std::string &name, const std::vector<float> &value);
  void set(const std::string &name, const Attribute &value) { map_[name] = value; }
  void erase(const std::string &name) { map_.erase(name); }

  const std::map<std::string, Attribute> &all() const { return map_; }

private:
  std::map<std::string, Attribute> map_;
};

} // namespace bundlefit
