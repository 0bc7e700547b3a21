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

/// TFLite's ComputePaddingHeightWidth for one spatial dimension: the
/// padding SAME needs (before, after), the odd pixel after.
std::pair<int64_t, int64_t> samePadding(int64_t in, int64_t kernel, int64_t stride,
                                        int64_t dilation);
/// STRIDED_SLICE `op` on input shape `in` as the IR's Slice operands (masks
/// applied; a shrunk axis is sliced to one element, `shrinks`: the output
/// then drops it with a Reshape).
struct StridedSlice {
  std::vector<int64_t> begin, end, axes, steps;
  bool shrinks = false;
};
StridedSlice stridedSliceSpec(Converter &c, const tflite::Operator &op, const Shape &in);
/// PAD / PADV2 `op`'s paddings as the IR's Pad pads (begins, then ends).
std::vector<int64_t> padOnnxPads(Converter &c, const tflite::Operator &op, size_t rank);

/// LEAKY_RELU's alpha: from its options, else 0 (TFLM's ParseLeakyRelu sets
/// alpha only from options that are there, in params that start zeroed; a
/// file without them runs as ReLU there).
float leakyReluAlpha(const tflite::Operator &op);

/// UNIDIRECTIONAL_SEQUENCE_LSTM (TfliteLstm.cpp).
std::string unsupportedLstmVariant(const TfliteFile &file, const tflite::Operator &op);
void convertSequenceLstm(Converter &converter, const tflite::Operator &op);
/// An integer (int8 or int16x8) LSTM as one TfliteLstm node: input x and
/// output y (the file's tensors), the constants W, R, B stacked gate by gate
/// and the node's attributes, every operand checked.
struct IntegerLstm {
  int32_t x, y;
  Value *w, *r, *b;
  Attributes attrs;
};
IntegerLstm integerLstm(Converter &converter, const tflite::Operator &op);

} // namespace bundlefit::tflite_import
