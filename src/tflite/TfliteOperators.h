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
/// Why bundlefit cannot convert `op`, whose builtin has a converter ("" when
/// it can): a variant of the operator that is refused by name, e.g.
/// "UNIDIRECTIONAL_SEQUENCE_LSTM int8: not supported yet".
std::string unsupportedVariant(const TfliteFile &file, const tflite::Operator &op,
                               int32_t builtinCode);
/// Adds the nodes computing `op` (its builtin and variant must be supported).
void convertOperator(Converter &converter, const tflite::Operator &op, int32_t builtinCode);

/// UNIDIRECTIONAL_SEQUENCE_LSTM (TfliteLstm.cpp).
std::string unsupportedLstmVariant(const TfliteFile &file, const tflite::Operator &op);
void convertSequenceLstm(Converter &converter, const tflite::Operator &op);

} // namespace bundlefit::tflite_import
