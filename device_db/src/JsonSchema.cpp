//===- JsonSchema.cpp - A small JSON Schema (draft-07 subset) validator ---===//
#include "bundlefit/device/JsonSchema.h"

#include "bundlefit/support/Error.h"

#include <cmath>
#include <map>
#include <set>

namespace bundlefit::device {

namespace {

using nlohmann::json;

std::string typeOf(const json &value) {
  switch (value.type()) {
  case json::value_t::null:
    return "null";
  case json::value_t::boolean:
    return "boolean";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned:
    return "integer";
  case json::value_t::number_float:
    return "number";
  case json::value_t::string:
    return "string";
  case json::value_t::array:
    return "array";
  case json::value_t::object:
    return "object";
  default:
    return "unknown";
  }
}

bool hasType(const json &value, const std::string &type) {
  std::string actual = typeOf(value);
  if (type == "number")
    return actual == "number" || actual == "integer";
  if (type == "integer" && actual == "number") {
    double d = value.get<double>();
    return std::floor(d) == d;
  }
  return actual == type;
}

std::string joinKey(const std::string &path, const std::string &key) {
  return path.empty() ? key : path + "." + key;
}

class Validator {
public:
  Validator(const json &root, const std::map<std::string, json> &others)
      : root_(&root), others_(others) {}

  void check(const json &schema, const json &value, const std::string &path) {
    if (schema.is_boolean()) {
      if (!schema.get<bool>())
        fail(path, "not allowed");
      return;
    }
    if (!schema.is_object())
      fatalInternal("device schema: a schema must be an object at " + path);
    static const std::set<std::string> known = {
        "$schema",     "$id",      "title",      "description",
        "type",        "required", "properties", "additionalProperties",
        "items",       "enum",     "minimum",    "exclusiveMinimum",
        "maximum",     "minItems", "minLength",  "$ref",
        "definitions", "default"};
    for (const auto &item : schema.items())
      if (!known.count(item.key()))
        fatalInternal("device schema uses unsupported keyword '" + item.key() + "'");

    if (schema.contains("$ref")) {
      // A reference into another schema file ("device.schema.json#/...")
      // is checked against that file, and so are the references inside it.
      const json *saved = root_;
      const json &target = resolve(schema["$ref"].get<std::string>());
      check(target, value, path);
      root_ = saved;
      return;
    }
    if (schema.contains("type") && !checkType(schema["type"], value, path))
      return; // Further keywords would only repeat the type error.
    if (schema.contains("enum")) {
      bool found = false;
      for (const json &option : schema["enum"])
        found = found || option == value;
      if (!found)
        fail(path, "expected one of " + schema["enum"].dump() + ", got " + value.dump());
    }
    if (value.is_number()) {
      double number = value.get<double>();
      if (schema.contains("minimum") && number < schema["minimum"].get<double>())
        fail(path, "must be >= " + schema["minimum"].dump());
      if (schema.contains("exclusiveMinimum") && number <= schema["exclusiveMinimum"].get<double>())
        fail(path, "must be > " + schema["exclusiveMinimum"].dump());
      if (schema.contains("maximum") && number > schema["maximum"].get<double>())
        fail(path, "must be <= " + schema["maximum"].dump());
    }
    if (value.is_string() && schema.contains("minLength") &&
        value.get<std::string>().size() < schema["minLength"].get<size_t>())
      fail(path, "must not be empty");
    if (value.is_array()) {
      if (schema.contains("minItems") && value.size() < schema["minItems"].get<size_t>())
        fail(path, "expected at least " + schema["minItems"].dump() + " items");
      if (schema.contains("items"))
        for (size_t i = 0; i < value.size(); ++i)
          check(schema["items"], value[i], path + "[" + std::to_string(i) + "]");
    }
    if (value.is_object())
      checkObject(schema, value, path);
  }

  std::vector<SchemaViolation> violations;

private:
  void fail(const std::string &path, const std::string &message) {
    violations.push_back({path, message});
  }

  bool checkType(const json &type, const json &value, const std::string &path) {
    std::vector<std::string> allowed;
    if (type.is_array())
      for (const json &t : type)
        allowed.push_back(t.get<std::string>());
    else
      allowed.push_back(type.get<std::string>());
    for (const std::string &t : allowed)
      if (hasType(value, t))
        return true;
    std::string expected;
    for (const std::string &t : allowed)
      expected += (expected.empty() ? "" : " or ") + t;
    fail(path, "expected " + expected + ", got " + typeOf(value));
    return false;
  }

  void checkObject(const json &schema, const json &value, const std::string &path) {
    if (schema.contains("required"))
      for (const json &name : schema["required"])
        if (!value.contains(name.get<std::string>()))
          fail(joinKey(path, name.get<std::string>()), "required field is missing");
    const json empty = json::object();
    const json &properties = schema.contains("properties") ? schema["properties"] : empty;
    for (const auto &item : value.items()) {
      std::string childPath = joinKey(path, item.key());
      if (properties.contains(item.key())) {
        check(properties[item.key()], item.value(), childPath);
        continue;
      }
      if (!schema.contains("additionalProperties"))
        continue;
      const json &additional = schema["additionalProperties"];
      if (additional.is_boolean() && !additional.get<bool>())
        fail(childPath, "unknown field");
      else if (additional.is_object())
        check(additional, item.value(), childPath);
    }
  }

  /// "#/definitions/x" in the current schema, or "file.json#/definitions/x"
  /// in one of the other schemas given by file name (switches root_ to it).
  const json &resolve(const std::string &ref) {
    size_t hash = ref.find('#');
    std::string file = hash == std::string::npos ? ref : ref.substr(0, hash);
    std::string pointer = hash == std::string::npos ? "" : ref.substr(hash);
    if (!file.empty()) {
      auto it = others_.find(file);
      if (it == others_.end())
        fatalInternal("device schema: $ref '" + ref + "' names a schema that was not loaded");
      root_ = &it->second;
    }
    const std::string prefix = "#/definitions/";
    if (pointer.compare(0, prefix.size(), prefix) != 0 || !root_->contains("definitions") ||
        !(*root_)["definitions"].contains(pointer.substr(prefix.size())))
      fatalInternal("device schema: cannot resolve $ref '" + ref + "'");
    return (*root_)["definitions"][pointer.substr(prefix.size())];
  }

  const json *root_;
  const std::map<std::string, json> &others_;
};

} // namespace

std::vector<SchemaViolation> validateJson(const nlohmann::json &schema,
                                          const nlohmann::json &document,
                                          const std::map<std::string, nlohmann::json> &others) {
  Validator validator(schema, others);
  validator.check(schema, document, "");
  return validator.violations;
}

} // namespace bundlefit::device
