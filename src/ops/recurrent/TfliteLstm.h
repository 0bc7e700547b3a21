//===- TfliteLstm.h - TFLite's LSTM node (family-internal) ------*- C++ -*-===//
#pragma once

#include "bundlefit/ir/Graph.h"
#include "bundlefit/ir/Tensor.h"

#include <cstdint>
#include <vector>

namespace bundlefit {

class OpRegistry;
struct OpDef;

/// The op the TFLite importer writes for a float, int8 or int16x8
/// UNIDIRECTIONAL_SEQUENCE_LSTM.
inline constexpr const char *kTfliteLstmOp = "TfliteLstm";

void registerTfliteLstm(OpRegistry &registry);
/// Its float kernel, bf_lstm_f32 (TfliteLstmFloat.cpp), on `def`.
void addTfliteLstmFloatKernel(OpDef &def);
/// Its float reference (TfliteLstmReference.cpp, with the integer one).
void tfliteLstmFloat(const Node &node, const std::vector<const Tensor *> &inputs,
                     std::vector<Tensor> &outputs);
/// A node's sizes (its operands checked: every variant's shapes and types).
struct TfliteLstmGeometry {
  int64_t batch = 0, steps = 0, inputs = 0, cells = 0;
  bool timeMajor = false;
};
TfliteLstmGeometry tfliteLstmGeometry(const Node &node);
/// bf_lstm_s8's and bf_lstm_s16's parameter table (BF_LSTM_*) of a node.
std::vector<int32_t> tfliteLstmParams(const Node &node);
/// Its kernel scratch: the cell state (int16, or float in the float LSTM).
uint64_t tfliteLstmScratchBytes(const Node &node);

} // namespace bundlefit
