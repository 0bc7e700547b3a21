//===- TfliteOperators.h - The builtin operators the importer converts -*- C++ -*-===//
#pragma once

#include "TfliteConverter.h"

#include <string>
#include <vector>

namespace bundlefit::tflite_import {

/// Whether builtin code `builtinCode` has a converter.
bool isSupportedBuiltin(int32_t builtinCode);
/// TFLite's names of the builtins with a converter, sorted by code.
std::vector<std::string> supportedBuiltinNames();
/// Adds the nodes computing `op` (its builtin must be supported).
void convertOperator(Converter &converter, const tflite::Operator &op, int32_t builtinCode);

} // namespace bundlefit::tflite_import
