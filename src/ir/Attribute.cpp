#include "bundlefit/ir/Attribute.h"

#include "bundlefit/support/Error.h"

#include <cstdio>
#include <string>

namespace bundlefit {

const Attribute *Attributes::find(const std::string &name) const {
  auto it = map_.find(name);
  return it == map_.end() ? nullptr : &it->second;
}

int64_t Attributes::getInt(const std::string &name, int64_t fallback) const {
  const Attribute *attr = find(name);
  if (!attr)
    return fallback;
  if (attr->kind != Attribute::Kind::Float)
    return attr->i;
  // A float where an integer belongs (some exporters write axis = 1.0):
  // truncate it, but refuse what int64 cannot hold (converting that is
  // undefined behaviour; found by fuzz/PipelineFuzzer.cpp).
  if (!(attr->f > -9.2e18f && attr->f < 9.2e18f)) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", double(attr->f));
    throw Error(ExitCode::BadInputFile,
                "attribute '" + name + "' holds " + text + ", not a 64-bit integer");
  }
  return int64_t(attr->f);
}

float Attributes::getFloat(const std::string &name, float fallback) const {
  const Attribute *attr = find(name);
  if (!attr)
    return fallback;
  return attr->kind == Attribute::Kind::Int ? float(attr->i) : attr->f;
}

std::string Attributes::getString(const std::string &name, const std::string &fallback) const {
  const Attribute *attr = find(name);
  return attr ? attr->s : fallback;
}

std::vector<int64_t> Attributes::getInts(const std::string &name,
                                         const std::vector<int64_t> &fallback) const {
  const Attribute *attr = find(name);
  return attr ? attr->ints : fallback;
}

std::vector<float> Attributes::getFloats(const std::string &name,
                                         const std::vector<float> &fallback) const {
  const Attribute *attr = find(name);
  return attr ? attr->floats : fallback;
}

void Attributes::setInt(const std::string &name, int64_t value) {
  Attribute attr;
  attr.kind = Attribute::Kind::Int;
  attr.i = value;
  map_[name] = attr;
}

void Attributes::setFloat(const std::string &name, float value) {
  Attribute attr;
  attr.kind = Attribute::Kind::Float;
  attr.f = value;
  map_[name] = attr;
}

void Attributes::setString(const std::string &name, const std::string &value) {
  Attribute attr;
  attr.kind = Attribute::Kind::String;
  attr.s = value;
  map_[name] = attr;
}

void Attributes::setInts(const std::string &name, const std::vector<int64_t> &value) {
  Attribute attr;
  attr.kind = Attribute::Kind::Ints;
  attr.ints = value;
  map_[name] = attr;
}

void Attributes::setFloats(const std::string &name, const std::vector<float> &value) {
  Attribute attr;
  attr.kind = Attribute::Kind::Floats;
  attr.floats = value;
  map_[name] = attr;
}

} // namespace bundlefit
