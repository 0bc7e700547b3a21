//===- TfliteInt16x8.h - Importing int16x8 models ----------------*- C++ -*-===//
#pragma once

#include "TfliteFile.h"

#include "bundlefit/ir/Graph.h"

#include <string>

namespace bundlefit::tflite_import {

/// Whether the model is int16x8 (an int16 input or output).
bool isInt16x8Model(const TfliteFile &file);
/// Why the int16x8 importer cannot convert `op` ("" when it can), e.g.
/// "MUL int16x8".
std::string int16x8Unsupported(const TfliteFile &file, const tflite::Operator &op,
                               int32_t builtinCode);
/// Adds the model's inputs, operators and outputs to `graph` (every operator
/// supported: int16x8Unsupported is "" for each).
void importInt16x8(const TfliteFile &file, Graph &graph);

} // namespace bundlefit::tflite_import
