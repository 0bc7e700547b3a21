//===- JsonText.h - Every JSON report as text, valid whatever the names ----===//
//
// Model, node, tensor and file names are bytes, not always UTF-8 (a Latin-1
// "caf\xe9.onnx"): nlohmann::json refuses to dump such a string (a
// type_error that once aborted `fit --batch` with no line at all). Every JSON
// report goes through jsonText, which writes each invalid byte of every
// string and key as "\xNN" (support/Format.h: escapeInvalidUtf8).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace bundlefit {

/// `report` as JSON text (`indent` as nlohmann::json::dump's); never throws
/// for the strings it holds.
std::string jsonText(const nlohmann::json &report, int indent = -1);

} // namespace bundlefit
