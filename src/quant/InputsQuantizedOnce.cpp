//===- InputsQuantizedOnce.cpp - Sequence inputs quantized once, whole ----===//
//
// An unrolled LSTM/GRU/RNN reads its float sequence input through one Slice
// per step. Quantizing each Slice's output costs one Quantize per step;
// quantizing the input once, whole, lets the Slices run as int8 byte copies.
// That pays only when every view leads to int8-capable ops: a float reader
// would need a Dequantize back. A pre-quantized model places its own
// Quantize nodes, so this is for profile-guided builds only.
//
//===----------------------------------------------------------------------===//
#include "QuantizeRules.h"

#include "bundlefit/ops/OpRegistry.h"

namespace bundlefit {

namespace {

bool isView(const Node &node) { return hasOpTrait(node.opType, kOpMovesBytes); }

/// Whether every reader of `value`, through views, is an op that can run in
/// int8 (and is not kept float): quantizing it early then adds no
/// Dequantize. A graph output is read as float, so it fails.
bool feedsOnlyInt8Ops(const Graph &graph, const Value &value,
                      const std::set<std::string> &keepFloatOps) {
  std::vector<Node *> readers = graph.users(&value);
  if (value.isGraphOutput || readers.empty())
    return false;
  for (const Node *reader : readers) {
    if (isView(*reader)) {
      if (reader->outputs.size() != 1 || !feedsOnlyInt8Ops(graph, *reader->output(), keepFloatOps))
        return false;
    } else if (!isInt8CapableOp(reader->opType) || keepFloatOps.count(reader->opType)) {
      return false;
    }
  }
  return true;
}

/// A float, profiled graph input that several views read, each leading only
/// to int8-capable ops.
bool quantizedOnce(const Graph &graph, const Value &input, const ProfileData &profile,
                   const std::set<std::string> &keepFloatOps) {
  if (!input.isGraphInput() || input.type.dtype != DType::Float32 || !profile.find(input.name))
    return false;
  std::vector<Node *> readers = graph.users(&input);
  if (readers.size() < 2)
    return false;
  for (const Node *reader : readers)
    if (!isView(*reader) || reader->outputs.size() != 1 ||
        !feedsOnlyInt8Ops(graph, *reader->output(), keepFloatOps))
      return false;
  return true;
}

} // namespace

std::set<const Value *> inputsQuantizedOnce(const Graph &graph, const ProfileData &profile,
                                            const QuantizationOptions &options) {
  std::set<const Value *> inputs;
  if (options.preset)
    return inputs;
  for (const Value *input : graph.inputs())
    if (quantizedOnce(graph, *input, profile, options.keepFloatOps))
      inputs.insert(input);
  return inputs;
}

} // namespace bundlefit
