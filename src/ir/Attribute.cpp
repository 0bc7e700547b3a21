#include "bundlefit/ir/Attribute.h"

namespace bundlefit {

const Attribute *Attributes::find(const std::string &name) const {
  auto it = map_.find(name);
  return it == map_.end() ? nullptr : &it->second;
}

int64_t Attributes::getInt(const std::string &name, int64_t fallback) const {
  const Attribute *attr = find(name);
  if (!attr)
    return fallback;
  return attr->kind == Attribute::Kind::Float ? int64_t(attr->f) : attr->i;
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
