//===- TfliteConverter.h - Building the graph from a TFLite subgraph -*- C++ -*-===//
//
// The state of one import: for each TFLite tensor, the IR value holding its
// real (float) values, in the file's layout and, for 4-D tensors, in the
// IR's channels-first layout, each made on first use.
//
// Quantized tensors are written in the QDQ form an ONNX exporter writes
// (int8 constant -> DequantizeLinear; op -> QuantizeLinear ->
// DequantizeLinear), so the driver folds and quantizes them exactly as a
// pre-quantized ONNX model (quant/FoldQdq.h): one path into the int8 IR.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "TfliteFile.h"

#include "bundlefit/ir/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace bundlefit::tflite_import {

/// A tensor's element type and quantization as the file gives them.
struct TensorInfo {
  tflite::TensorType fileType = tflite::TensorType_FLOAT32;
  Shape shape;
  QuantParams quant; ///< Empty for float tensors.
  bool quantized() const { return !quant.empty(); }
};

/// NHWC <-> NCHW permutations of 4-D shapes.
extern const std::vector<int64_t> kToChannelsFirst; // {0, 3, 1, 2}
extern const std::vector<int64_t> kToChannelsLast;  // {0, 2, 3, 1}
Shape permuted(const Shape &shape, const std::vector<int64_t> &perm);

class Converter {
public:
  /// `int16x8`: the model's activations are int16 (TfliteInt16x8.h), and
  /// info() accepts int16 tensors; otherwise it refuses them by name.
  Converter(const TfliteFile &file, Graph &graph, bool int16x8 = false)
      : file_(file), graph_(graph), int16x8_(int16x8) {}

  const TfliteFile &file() const { return file_; }
  Graph &graph() { return graph_; }

  /// Element type, shape and quantization of tensor `t`, checked against
  /// TFLite's rules (one scale and zero point, or one per channel of
  /// quantized_dimension; scales finite and > 0; zero points in range).
  TensorInfo info(int32_t t) const;
  /// Whether tensor `t` is a constant (has data in its buffer).
  bool isConstant(int32_t t) const { return file_.dataOf(t).size > 0; }

  /// The graph inputs, in the subgraph's order.
  void addGraphInputs();
  /// Marks the subgraph's outputs (after every operator is converted).
  void markGraphOutputs();

  /// Tensor `t`'s real values in the file's layout (made on first use).
  Value *value(int32_t t);
  /// A 4-D tensor's real values channels-first (NCHW).
  Value *channelsFirst(int32_t t);
  /// Whether `t` is (so far) held channels-first only: a reader that takes
  /// either layout should take this one.
  bool heldChannelsFirst(int32_t t) const;

  /// Constant tensor `t` with its elements permuted by `perm` (a
  /// permutation of its dimensions; empty: as stored), its quantization
  /// axis following; `viewAs` (same element count, the quantization axis
  /// 0 kept) is the shape the stored elements are read as first, `reshapeTo`
  /// the shape the result is relabelled to last.
  /// Quantized constants come back as the DequantizeLinear of the stored
  /// integers (no float round trip: the fold recovers them exactly).
  Value *constant(int32_t t, const std::vector<int64_t> &perm = {}, const Shape &viewAs = {},
                  const Shape &reshapeTo = {});
  /// A constant the importer makes (Reshape's shape, Pad's pads...).
  Value *int64Constant(const std::string &name, const std::vector<int64_t> &values);
  Value *floatConstant(const std::string &name, const std::vector<float> &values,
                       const Shape &shape = {});

  /// Adds `op` reading `inputs` whose output is tensor `t`'s real
  /// values, channels-first when `channelsFirst`. The output type is
  /// inferred and must agree with the file's shape (else BadInputFile
  /// naming the operator). A quantized `t` gets its QuantizeLinear /
  /// DequantizeLinear pair. Returns the node.
  Node *emit(Op op, const std::vector<Value *> &inputs, const Attributes &attrs, int32_t t,
             bool channelsFirst);
  /// Same, for an intermediate value of the operator (not a file tensor):
  /// its real values quantized like tensor `like` when that is quantized
  /// (a fused activation's input has the output's parameters). Returns
  /// the intermediate's real values.
  Value *emitIntermediate(Op op, const std::vector<Value *> &inputs, const Attributes &attrs,
                          const std::string &name, int32_t like);
  /// `real` quantized and dequantized with tensor `like`'s parameters.
  Value *quantizeLike(Value *real, int32_t like);
  /// Tensor `t` is `value` itself (QUANTIZE, DEQUANTIZE: a Q/DQ pair).
  void alias(int32_t t, Value *value, bool channelsFirst);

  /// The operator being converted, for error messages and node names.
  void setOperator(size_t index) { operator_ = index; }
  /// After the operators: errors name the subgraph's input and output lists.
  void clearOperator() { operator_ = kNoOperator; }
  std::string where() const {
    return operator_ == kNoOperator ? "the subgraph's input and output lists"
                                    : file_.describeOperator(operator_);
  }
  Error bad(const std::string &problem) const { return file_.bad(where() + ": " + problem); }
  Error unsupported(const std::string &problem) const {
    return file_.unsupported(where() + ": " + problem);
  }

  /// Whether any graph input or output is quantized (int8 I/O).
  bool int8Io() const;

private:
  struct Held {
    Value *fileLayout = nullptr;
    Value *channelsFirst = nullptr;
  };
  Held &held(int32_t t);
  std::string tensorName(int32_t t) const;
  Value *relayout(Value *from, const std::vector<int64_t> &perm, const std::string &name);
  /// Q -> DQ after `real` (tensor `like`'s parameters); returns the DQ output.
  Value *quantizeDequantize(Value *real, const TensorInfo &like, const std::string &name);
  Node *addInferred(Op op, const std::vector<Value *> &inputs, const Attributes &attrs,
                    const std::string &name, const Shape *expected);
  Value *dequantizeConstant(Value *integers, const TensorInfo &info, const std::string &name);

  const TfliteFile &file_;
  Graph &graph_;
  bool int16x8_ = false;
  std::vector<Held> held_;
  static constexpr size_t kNoOperator = ~size_t(0);
  /// kNoOperator before the first operator and after the last: a model
  /// without operators has no "operator 0" to name.
  size_t operator_ = kNoOperator;
};

} // namespace bundlefit::tflite_import
