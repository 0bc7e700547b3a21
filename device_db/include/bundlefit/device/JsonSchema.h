//===- JsonSchema.h - A small JSON Schema (draft-07 subset) validator ------===//
//
// Debian 12 ships no C++ JSON Schema validator (nlohmann-json-schema-validator
// is not packaged), so the device database validates its files with this one.
// It implements the keywords device.schema.json uses and nothing else:
//   type (a name or a list), required, properties, additionalProperties
//   (false or a schema), items, enum, minimum, exclusiveMinimum, maximum,
//   minItems, minLength, and "$ref": "#/definitions/<name>".
// An unknown keyword in the *schema* is an error, so a schema that starts
// using more of the standard fails loudly instead of being half-checked.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace bundlefit::device {

struct SchemaViolation {
  std::string path;    ///< "memory[2].size"; "" for the document itself.
  std::string message; ///< "expected integer".
  std::string str() const {
    return (path.empty() ? std::string("(document)") : path) + ": " + message;
  }
};

/// Checks `document` against `schema`; returns every violation found (empty
/// when the document is valid), in document order.
/// `others` holds the schemas a "$ref": "file.json#/definitions/x" may name,
/// by file name (board.schema.json refers to device.schema.json).
std::vector<SchemaViolation> validateJson(const nlohmann::json &schema,
                                          const nlohmann::json &document,
                                          const std::map<std::string, nlohmann::json> &others = {});

} // namespace bundlefit::device
