//===- TfliteLstm.h - TFLite's integer LSTM node (family-internal) -*- C++ -*-===//
#pragma once

#include "bundlefit/ir/Graph.h"

#include <cstdint>
#include <vector>

namespace bundlefit {

class OpRegistry;

/// The op the TFLite importer writes for a float, int8 or int16x8
/// UNIDIRECTIONAL_SEQUENCE_LSTM.
inline constexpr const char *kTfliteLstmOp = "TfliteLstm";

void registerTfliteLstm(OpRegistry &registry);
/// Its float and integer references (TfliteLstmReference.cpp).
void registerTfliteLstmReference(OpRegistry &registry);
/// bf_lstm_s8's and bf_lstm_s16's parameter table (BF_LSTM_*) of a node.
std::vector<int32_t> tfliteLstmParams(const Node &node);
/// Its kernel scratch: the cell state (int16, or float in the float LSTM).
uint64_t tfliteLstmScratchBytes(const Node &node);

} // namespace bundlefit
